"""A remote agent served over AG-UI, in this project's session: :class:`AGUITransport` (``pip install
"ai_widgets[ag-ui]"``). Each model request is one AG-UI run, sent by the small client of ``_ag_ui_client`` and read
by ``_ag_ui_stream``."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ai_widgets._safe import UnsafeValueError, checked_json
from ai_widgets._schema import UnusableSchemaError, argument_problems
from ai_widgets.events import StreamEvent
from ai_widgets.messages import FilePart, Message, ReasoningPart, Role, TextPart, ToolCallPart, ToolCallState
from ai_widgets.transports._ag_ui_client import AGUIClient
from ai_widgets.transports._ag_ui_stream import PROVIDER, RunMapper, agent_call_id, interrupt_of
from ai_widgets.transports._base import NO_PROFILE, ChatRequest, TransportProfile
from ai_widgets.transports._client import import_sdk
from ai_widgets.transports._errors import ProviderError
from ai_widgets.transports._history import arguments_json, history, outcome_text, user_parts

import_sdk("ag_ui", "ag-ui")  # says which extra to install when the protocol's package is missing

from ag_ui.core import (  # noqa: E402
    PROTOCOL_VERSION,
    AssistantMessage,
    AudioPart,
    DataSource,
    DocumentPart,
    FunctionCall,
    ImagePart,
    ResumeEntry,
    RunAgentInput,
    SystemMessage,
    Tool,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
    VideoPart,
)
from ag_ui.core import Message as AGUIMessage  # noqa: E402
from ag_ui.core import TextPart as AGUITextPart  # noqa: E402

__all__ = ["AGUITransport"]


class AGUITransport:
    """A remote agent that speaks AG-UI (LangGraph, CrewAI, Mastra, Microsoft's Agent Framework, pydantic-ai, ...).

    Args:
        url: The agent's endpoint, e.g. ``"http://127.0.0.1:8000/agent"``.
        headers: Sent with every run (``{"Authorization": "Bearer ..."}``); their values never appear in errors.
        state: The shared state the first run starts from (JSON); the agent's ``STATE_SNAPSHOT`` and
            ``STATE_DELTA`` events update it, and each run sends it as it is then (:attr:`state`).
        timeout: Seconds to wait to connect, and between two events of a run.

    Raises:
        ValueError: ``url`` is not an http(s) URL, a header is not text, ``state`` is not JSON, or ``timeout`` is
            not a positive number.

    Mapping and the protocol's limits:

    - Request: one run per model request, ``POST`` of a ``RunAgentInput``: ``threadId`` the session's conversation
      id, a new ``runId``, ``protocolVersion`` 1.0, the history as AG-UI messages (the system prompt, where set, as
      a system message, which a server may ignore; user text and files as text and image, audio, video or document
      parts; each response of a reply as an assistant message with its text and tool calls, then one tool message
      per call with what the model is told of its result), the session's tools as ``tools`` (the agent's frontend
      tools), ``state``, and ``resume`` when the run continues from a pause. Reasoning is not sent back, nor are
      the provider-run calls of other providers. ``options.extra`` is merged into the input last (``context``,
      ``forwardedProps``...). The protocol has no tool choice, so a forced one (``required``, a named tool) is an
      error, and no structured output: a typed answer is asked for in text, and checked by the session.
    - Stream: ``TEXT_MESSAGE_*`` (an assistant's) as text, ``REASONING_*`` (and the ``THINKING_*`` of servers
      before 1.0) as reasoning, ``TOOL_CALL_START``/``ARGS``/``END`` (or ``CHUNK``) as calls with streaming
      arguments. A call to one of the session's tools runs here, under the session's approvals, and its result goes
      back in the next run; a call to any other tool is the agent's own (``provider_executed``: never run here), and
      its ``TOOL_CALL_RESULT`` is its result (JSON text shows as its value). ``STEP_STARTED`` shows as the status
      line (cleared at ``STEP_FINISHED``), an ``ACTIVITY_SNAPSHOT`` with a message too; ``STATE_*`` update
      :attr:`state`. ``RUN_FINISHED`` completes the response (its ``usage`` as usage); ``RUN_ERROR`` and a
      cancelled run raise :class:`ProviderError` with the agent's message, after what streamed before.
    - Call ids: a call of an earlier run sent again (the same id and tool, and the same arguments or none) is that
      call, nothing new. An id the conversation already has, for another tool or other arguments (an agent whose
      ids restart with each run), is a new call: it gets an id of its own here (``call_0~2``), and goes back to
      the agent under the agent's id, in an assistant message of its own.
    - Pauses (``RUN_FINISHED`` with an ``interrupt`` outcome): each interrupt for one of the agent's own calls asks
      the person in that call's card (its ``message`` the question); the decision goes back on the next run as a
      ``resume`` entry keyed by the interrupt's id: ``{"approved": true}``, with ``"editedArgs"`` for an edit
      (checked against the interrupt's ``responseSchema`` when the person edits, and the whole answer again before
      it is sent), ``{"approved": false, "reason": ...}`` for a decline, status ``cancelled`` for a call cancelled
      meanwhile. The agent then runs its tool (or not), and its ``TOOL_CALL_RESULT`` completes the call. An
      interrupt for anything else (a question not tied to a tool call) is an error saying so.
    - Stop: the session closing the stream closes the HTTP response; the server sees the client go, and an agent
      that watches for it (pydantic-ai's does) cancels the run. HTTP failures, a server that is down, an answer
      that is not an event stream and a malformed event raise :class:`ProviderError` with a clear message.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        state: Any = None,
        timeout: float = 300.0,
    ) -> None:
        self._client = AGUIClient(url, headers=headers, timeout=timeout)
        try:
            #: The shared state the next run sends (the agent's latest snapshot and deltas applied), JSON.
            self.state: Any = checked_json(state, where="state")
        except UnsafeValueError as exc:
            raise ValueError(str(exc)) from None
        # The pauses a resume was sent for (each is answered once), by call and interrupt: an agent whose call ids
        # restart with each run may give a later pause the id of an earlier one.
        self._answered: set[tuple[str, str]] = set()

    @property
    def url(self) -> str:
        """The agent's endpoint."""
        return self._client.url

    @property
    def profile(self) -> TransportProfile:
        """Nothing known: the agent's model, its context window and the files it takes are its own business, so
        requests are not shortened for it and files are not refused before it sees them."""
        return NO_PROFILE

    def __repr__(self) -> str:
        return f"AGUITransport({self.url!r})"

    # --- request mapping ----------------------------------------------------------------------------------------------

    def run_input(self, request: ChatRequest) -> RunAgentInput:
        """The ``RunAgentInput`` of the run for ``request``, as sent.

        Raises:
            ProviderError: The request asks for what the protocol cannot carry (a forced tool choice), or an answer
                to a pause does not match the schema the agent gave for it.
        """
        choice = request.options.tool_choice
        if choice.forces_call:
            raise ProviderError(
                "AG-UI cannot make the agent call a tool (ToolChoice required or a named tool): use ToolChoice.AUTO."
            )
        messages, resume = self.run_messages(request)
        run_input = RunAgentInput(
            thread_id=request.conversation_id or f"thread_{uuid.uuid4().hex}",
            run_id=f"run_{uuid.uuid4().hex}",
            protocol_version=PROTOCOL_VERSION,
            state=self.state,
            messages=messages,
            tools=[
                Tool(name=d.name, description=d.description or d.title or d.name, parameters=d.parameters)
                for d in request.tools
            ],
            context=[],
            resume=resume or None,
        )
        if request.options.extra:
            run_input = RunAgentInput.model_validate(
                {**run_input.model_dump(mode="json", by_alias=True), **request.options.extra}
            )
        return run_input

    def run_messages(self, request: ChatRequest) -> tuple[list[AGUIMessage], list[ResumeEntry]]:
        """The history as AG-UI messages, and the answers to the pauses the run continues from."""
        out: list[AGUIMessage] = []
        resume: list[ResumeEntry] = []
        if request.options.system_prompt:
            out.append(SystemMessage(id="system", content=request.options.system_prompt))
        reply = request.reply
        limit = request.options.max_tool_result_chars
        for message in history(request.messages):
            if message.role is Role.USER:
                out.append(UserMessage(id=message.id, content=user_content(message)))
                continue
            pending = reply is message
            out += self._assistant_messages(message, resume if pending else None, limit)
        return out, resume

    def _assistant_messages(
        self, message: Message, resume: list[ResumeEntry] | None, limit: int | None
    ) -> list[AGUIMessage]:
        """A reply as one assistant message per response (its text and calls) and the tool messages of its calls;
        the calls paused for a decision in the reply in progress (``resume`` is not ``None``) are answered there."""
        out: list[AGUIMessage] = []
        text: list[str] = []
        calls: list[ToolCall] = []
        results: list[AGUIMessage] = []

        def flush() -> None:
            if text or calls:
                content = "".join(text) or None
                out.append(AssistantMessage(id=f"{message.id}-{len(out)}", content=content, tool_calls=calls or None))
            out.extend(results)
            text.clear()
            calls.clear()
            results.clear()

        for part in message.parts:
            if isinstance(part, (TextPart, ReasoningPart)) and calls:
                flush()  # the agent saw these calls' results: what follows is its next response
            if isinstance(part, TextPart):
                text.append(part.text)
            elif isinstance(part, ToolCallPart):
                if part.provider_executed and part.provider != PROVIDER:
                    continue  # another provider's own tool: not this agent's
                call_id = agent_call_id(part)  # the agent's own id; the message's id stays unique with ours
                if any(call.id == call_id for call in calls):
                    flush()  # an id the agent used again in a later run: that run's response, not this one
                name, arguments = part.tool_name, arguments_json(part)
                calls.append(ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments)))
                entry = self._resume_entry(part) if resume is not None else None
                if entry is not None and resume is not None:
                    resume.append(entry)
                elif part.outcome is not None:
                    content = outcome_text(part, limit)
                    result_id = f"{part.tool_call_id}-result"
                    results.append(ToolMessage(id=result_id, tool_call_id=call_id, content=content))
        flush()
        return out

    def _resume_entry(self, part: ToolCallPart) -> ResumeEntry | None:
        """The answer to the pause ``part`` waits on, when it has not been sent yet; else ``None``."""
        interrupt = interrupt_of(part)
        if interrupt is None or (part.tool_call_id, interrupt["id"]) in self._answered:
            return None
        interrupt_id = interrupt["id"]
        if part.state is ToolCallState.RUNNING and part.decision is not None:
            payload: dict[str, Any] = {"approved": True}
            if part.edited_arguments is not None:
                payload["editedArgs"] = part.edited_arguments
        elif part.state is ToolCallState.REJECTED:
            payload = {"approved": False}
            if part.decision_reason:
                payload["reason"] = part.decision_reason
        else:  # cancelled, skipped or failed here before anyone decided: the pause is abandoned
            return ResumeEntry(interrupt_id=interrupt_id, status="cancelled")
        check_answer(part, interrupt.get("responseSchema"), payload)
        return ResumeEntry(interrupt_id=interrupt_id, status="resolved", payload=payload)

    # --- stream mapping -----------------------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams one run of the agent for ``request``.

        Raises:
            ProviderError: The run failed or could not be made (see the class docstring); what streamed before
                was yielded first.
        """
        run_input = self.run_input(request)
        resumed = {entry.interrupt_id for entry in run_input.resume or ()}
        reply = request.reply
        answered = {
            (part.tool_call_id, interrupt["id"])
            for part in (() if reply is None else reply.tool_calls)
            if (interrupt := interrupt_of(part)) is not None and interrupt["id"] in resumed
        }
        mapper = RunMapper(
            label=self._client.label,
            offered={definition.name for definition in request.tools},
            earlier=() if reply is None else reply.tool_calls,
            taken={part.tool_call_id for message in request.messages for part in message.tool_calls},
            state=self.state,
        )
        async with contextlib.aclosing(self._client.run(run_input)) as events:
            async for event in events:
                self._answered |= answered  # the agent has the answers once its run began
                for out in mapper.feed(event):
                    yield out
                self.state = mapper.state
        for out in mapper.end():
            yield out


def user_content(message: Message) -> str | list[Any]:
    """A user message's text, or its text and files as content parts."""
    parts = user_parts(message)
    if all(isinstance(part, TextPart) for part in parts):
        return "".join(part.text for part in parts if isinstance(part, TextPart))
    content: list[Any] = []
    for part in parts:
        if isinstance(part, TextPart):
            content.append(AGUITextPart(text=part.text))
        else:
            content.append(file_content(part))
    return content


def file_content(part: FilePart) -> Any:
    source = (
        UrlSource(value=part.url, mime_type=part.media_type)
        if part.url is not None
        else DataSource(value=part.data or "", mime_type=part.media_type)
    )
    kind = part.media_type.split("/", 1)[0].lower()
    shape = {"image": ImagePart, "audio": AudioPart, "video": VideoPart}.get(kind, DocumentPart)
    return shape(source=source)


def check_answer(part: ToolCallPart, schema: object, payload: dict[str, Any]) -> None:
    """Refuses an answer that does not match the schema the agent gave for it (it would refuse it too)."""
    if not isinstance(schema, dict):
        return
    try:
        problems = argument_problems(schema, payload)
    except UnusableSchemaError as exc:
        raise ProviderError(
            f"The agent's schema for answering its pause on {part.tool_name} is unusable: {exc}"
        ) from None
    if problems:
        said = "; ".join(f"{'/'.join(map(str, p.absolute_path)) or 'answer'}: {p.message}" for p in problems[:3])
        raise ProviderError(
            f"The answer to the agent's pause on {part.tool_name} does not match the schema it gave "
            f"({json.dumps(payload, ensure_ascii=False)[:200]}): {said}"
        )
