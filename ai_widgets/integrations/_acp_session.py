"""One ACP agent session as the transport keeps it between the chat's requests: its id, its update mapper, the queue
by which the client side hands what the agent sends to the response being streamed, its prompt in flight, and the
questions it asked that the chat's next request answers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from acp.schema import DeniedOutcome, PermissionOption, PromptResponse, RequestPermissionResponse

from ai_widgets.events import StreamEvent
from ai_widgets.integrations._acp_updates import UpdateMapper

__all__ = ["CANCELLED", "AgentSession", "Item", "Pause", "PromptEnded", "Question"]

#: The answer to a permission request nobody will decide on (Stop, a turn that ended): the protocol requires it.
CANCELLED = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@dataclass(frozen=True, slots=True)
class Pause:
    """The agent asked something the session must settle (a person's decision): the response ends here, and the
    agent's prompt goes on."""


@dataclass(frozen=True, slots=True)
class PromptEnded:
    """The agent's prompt ended: its answer, or the error it ended with (the agent crashed, the wire failed)."""

    response: PromptResponse | None = None
    error: BaseException | None = None


Item: TypeAlias = list[StreamEvent] | Pause | PromptEnded


@dataclass(slots=True)
class Question:
    """A question of the agent's that waits for the chat: a permission request (its ``options``), a file write
    the person must allow (``write``: its path and content), a command the person must allow to run in a terminal
    (``command``: its command line), or a call of one of the session's own tools that the session runs (``local``:
    the agent called it over MCP). The card is the call ``call_id``.

    The future's result is the answer: a ``RequestPermissionResponse`` for a permission, ``True`` (allowed) or
    ``False`` for a write, ``True``, ``False`` (declined) or ``None`` (nobody decided: Stop) for a command, the
    finished ``ToolCallPart`` (or ``None``: the turn ended first) for a local call.
    """

    call_id: str
    future: asyncio.Future[Any]
    options: list[PermissionOption] = field(default_factory=list)
    write: tuple[str, str] | None = None
    command: str | None = None
    local: bool = False

    def answer(self, value: Any) -> None:
        """Answers once; a second answer is ignored."""
        if not self.future.done():
            self.future.set_result(value)

    def cancel(self) -> None:
        """Answers as nobody decided (cancelled, a write declined, a local call not run)."""
        self.answer(None if self.local or self.command is not None else False if self.write is not None else CANCELLED)


class AgentSession:
    """The transport's record of one agent session.

    Args:
        session_id: The agent's id of the session.
        mapper: Its updates mapper.
        fresh: Whether the session began empty (``session/new``) rather than loaded with the conversation.
    """

    def __init__(self, session_id: str, mapper: UpdateMapper, *, fresh: bool) -> None:
        self.session_id = session_id
        self.mapper = mapper
        self.fresh = fresh
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        self.prompt: asyncio.Task[None] | None = None
        #: Open questions, by the id of the call whose card asks.
        self.questions: dict[str, Question] = {}
        #: The answers given, by call id: a permission asked again gets the same answer, unasked.
        self.answers: dict[str, RequestPermissionResponse] = {}
        #: The calls the person allowed: a file write they said they would make is done unasked.
        self.allowed: set[str] = set()
        #: The ids of the chat's messages the agent has had.
        self.sent: set[str] = set()
        self.writes = 0  # file writes asked about, for their cards' ids
        #: The id of the latest message of the chat's the agent has had (the reply it last answered into): when a
        #: request's history no longer holds it, the person edited or regenerated, and the agent's history diverged.
        self.latest: str | None = None
        #: Whether the chat's system prompt went in ``session/new`` (Claude Code's ``_meta.systemPrompt``) rather than
        #: as the first prompt's first block.
        self.system_in_meta = False
        #: What the person is told when the response begins (a new agent session started for a changed history).
        self.notice: str | None = None

    @property
    def prompting(self) -> bool:
        """Whether a prompt is in flight."""
        return self.prompt is not None and not self.prompt.done()

    def put(self, item: Item) -> None:
        """Hands an item to the response being streamed (at once: the SDK runs each message in a task of its own,
        so order holds only if nothing awaits before this)."""
        self.queue.put_nowait(item)

    async def ask(self, question: Question, events: list[StreamEvent]) -> Any:
        """Asks the chat: ``events`` show the question's card, the response ends there, and the answer comes with
        the chat's next request (or ``cancel_questions``). The question is open until then."""
        self.questions[question.call_id] = question
        self.put(events)
        self.put(Pause())
        try:
            return await asyncio.shield(question.future)
        finally:
            self.questions.pop(question.call_id, None)

    def cancel_questions(self) -> None:
        """Answers every open question as nobody decided."""
        for question in list(self.questions.values()):
            question.cancel()
        self.questions.clear()

    def drain(self) -> None:
        """Drops what is queued (what the agent sent after the turn ended: no response reads it)."""
        while not self.queue.empty():
            self.queue.get_nowait()
