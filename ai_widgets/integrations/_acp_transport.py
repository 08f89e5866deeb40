"""An agent people already run (Claude Code, Codex, Gemini CLI...) in the chat, over the Agent Client Protocol:
:class:`ACPTransport` runs it as a subprocess and turns each of its prompts into the session's responses
(``pip install "ai_widgets[acp]"``)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ai_widgets.events import (
    ProviderState,
    ProviderToolResult,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    ToolCallStarted,
)
from ai_widgets.messages import FilePart, FinishReason, Message, Role, TextPart, ToolCallPart, ToolCallState
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports._base import NO_PROFILE, ChatRequest, TransportProfile
from ai_widgets.transports._client import import_sdk
from ai_widgets.transports._errors import ProviderError

import_sdk("acp", "acp")  # says which extra to install when the SDK is missing

from acp import (  # noqa: E402
    PROTOCOL_VERSION,
    audio_block,
    connect_to_agent,
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import (  # noqa: E402
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    PromptResponse,
    SessionNotification,
)

from ai_widgets.integrations._acp_client import ACPClient, allow  # noqa: E402
from ai_widgets.integrations._acp_inline_updates import InlineUpdates  # noqa: E402
from ai_widgets.integrations._acp_offer import ToolOffer  # noqa: E402
from ai_widgets.integrations._acp_session import CANCELLED, AgentSession, Pause, PromptEnded, Question  # noqa: E402
from ai_widgets.integrations._acp_updates import PROVIDER, UpdateMapper  # noqa: E402
from ai_widgets.integrations._acp_wire import AgentWire, AgentWireError  # noqa: E402

__all__ = ["ACPTransport", "AgentLink", "McpServers", "Spawn"]

logger = logging.getLogger("ai_widgets")

#: Seconds an agent may take to start and answer ``initialize``, and to open or load a session.
START_TIMEOUT = 60.0
#: Seconds a cancelled prompt may take to answer ``cancelled`` before the agent is restarted.
CANCEL_TIMEOUT = 5.0
#: How many offers' tokens are kept to be redacted from the agent's output (one per agent session).
MAX_REMEMBERED_TOKENS = 64
#: The most characters of an earlier conversation sent to a new agent session that has not had it.
MAX_TRANSCRIPT_CHARS = 100_000

#: The names Claude Code's ACP adapter gives itself in ``initialize``'s ``agentInfo`` (0.16 and its renames): it takes
#: the chat's system prompt in ``session/new``'s ``_meta.systemPrompt``.
CLAUDE_CODE_AGENTS = frozenset(
    {"@zed-industries/claude-code-acp", "@zed-industries/claude-agent-acp", "@agentclientprotocol/claude-agent-acp"}
)
#: What the person is told when the conversation changed under the agent (an edit, a regenerate, another branch).
NEW_SESSION_NOTICE = (
    "The conversation changed since the agent last answered (an edit, a regenerate or another branch): a new agent "
    "session began with the conversation as it is now."
)
#: The result of a call the person allowed with changed arguments: ACP has no room for them (the agent would run its
#: own version), so it is declined instead.
EDIT_REFUSED = ToolOutcome.failure(
    "Not run: an ACP agent cannot take changed arguments, so the edited call was declined.", retryable=False
)

STOP_REASONS = {
    "end_turn": FinishReason.STOP,
    "max_tokens": FinishReason.LENGTH,
    "max_turn_requests": FinishReason.LENGTH,
    "refusal": FinishReason.CONTENT_FILTER,
    "cancelled": FinishReason.STOP,
}


@dataclass(slots=True)
class AgentLink:
    """A running agent: the SDK's connection to it, and what the transport reads of its process.

    Attributes:
        connection: The SDK's client-side connection (``initialize``, ``new_session``, ``prompt``, ``cancel``...).
        returncode: The process's exit code once it exited, else ``None``.
        stderr_tail: The end of what the agent wrote to stderr (redacted), for error messages.
        failure: Why the agent's pipe failed (it exited, or wrote what is not a JSON-RPC message, or too long a
            line), with its last output; ``None`` while it works. The SDK itself only says "Connection closed".
    """

    connection: Any
    returncode: Callable[[], int | None]
    stderr_tail: Callable[[], str]
    failure: Callable[[], BaseException | None]


#: More MCP servers offered to an agent session (``session/new``, ``session/load``), besides the session's own tools
#: (``offer_tools``): ``(request, the agent's initialize answer)`` to a list of the SDK's MCP server models.
McpServers = Callable[[ChatRequest, InitializeResponse | None], list[Any]]

#: Starts an agent: ``(client, command, args, env, cwd)`` to an async context manager of its :class:`AgentLink`;
#: ``env`` holds the variables added to the kernel's environment. Raises ``AgentWireError`` when it cannot start.
Spawn = Callable[
    [ACPClient, str, Sequence[str], Mapping[str, str], str], contextlib.AbstractAsyncContextManager[AgentLink]
]


@contextlib.asynccontextmanager
async def spawn_over_wire(
    client: ACPClient, command: str, args: Sequence[str], env: Mapping[str, str], cwd: str
) -> AsyncIterator[AgentLink]:
    """Starts the agent over the project's own pipe (``AgentWire``: the kernel's environment plus ``env``, its
    process group, a line cap, its stderr read all the time and redacted) and connects the SDK's client side to it;
    on leaving, the connection and the agent (its whole process group) are closed. The agent's updates reach the
    client as they are read, in order (``InlineUpdates``), the rest of its messages through the SDK's dispatch."""
    wire = await AgentWire.start(command, args, cwd=cwd, env=env)
    connection = connect_to_agent(client, InlineUpdates(wire, client, SessionNotification.model_validate))
    try:
        yield AgentLink(connection, lambda: wire.returncode, wire.output, lambda: wire.error)
    finally:
        with contextlib.suppress(Exception):
            await connection.close()
        await wire.close()


def agent_session_id(messages: Sequence[Message]) -> str | None:
    """The agent's session id the conversation's latest reply recorded (``Message.provider_state``), or ``None``."""
    for message in reversed(messages):
        state = message.provider_state.get(PROVIDER)
        if isinstance(state, dict) and isinstance(state.get("session_id"), str):
            return str(state["session_id"])
    return None


def earlier_messages(messages: Sequence[Message]) -> list[Message]:
    """The conversation before the person's latest message(s): all but the trailing user messages (and the empty
    reply that follows them on a turn's first request)."""
    kept = [m for m in messages if not (m.role is Role.ASSISTANT and not m.parts)]
    cut = len(kept)
    while cut > 0 and kept[cut - 1].role is Role.USER:
        cut -= 1
    return kept[:cut]


def find_call(messages: Sequence[Message], call_id: str) -> ToolCallPart | None:
    for message in reversed(messages):
        if message.role is Role.ASSISTANT:
            part = message.tool_call(call_id)
            if part is not None:
                return part
    return None


class ACPTransport:
    """An agent that speaks the Agent Client Protocol, run as a subprocess over stdio with the official SDK.

    Args:
        command: The agent's program (``"claude-code-acp"``, ``"gemini"``...).
        args: Its arguments (``["--acp"]``).
        cwd: The working directory of the agent and of its sessions; the kernel's when ``None``.
        env: Variables added to the kernel's environment for the agent (its key, its base URL...).
        serve_files: Serve the agent's file reads (unasked, read-only) and writes (asked, with the diff).
        serve_terminals: Serve the agent's terminals (``terminal/*``): a command runs once the person allowed it
            (the call that runs it, or a card of its own that shows the command and its directory), its card shows
            its output live, and Stop ends it.
        offer_tools: Offer the session's own tools (``@tool`` functions, MCP servers' tools, ``KernelTools``) to the
            agent as an MCP server the kernel serves on loopback, with a secret token per agent session: a call of
            one runs in the chat as when the chat's own model calls it (its card, its approval, the kernel).

    Raises:
        ValueError: ``command`` is empty, or ``args`` or ``env`` hold anything but text.

    How the chat maps onto ACP:

    - One agent session per conversation (``session/new`` in ``cwd``), resumed with ``session/load`` where the
      agent supports it and the conversation recorded its session id (``Message.provider_state``, which holds no
      secret). A session that began without the conversation gets its earlier messages as a transcript.
    - With ``offer_tools``, each agent session whose chat has tools is offered them in ``session/new`` and
      ``session/load`` as one MCP server (streamable HTTP where the agent advertises it, else a stdio relay). The
      agent's own permission request for one is allowed at once, as the chat's approval asks when the call runs
      (the person is asked once); the card the agent announces for the call is the chat's card of it.
    - When the history no longer holds what the agent's session had (the person edited or regenerated), a new agent
      session begins, given the conversation as it now is, and the reply's status says so.
    - Each user message is one ``session/prompt``: its text and files as content blocks within the agent's prompt
      capabilities, the system prompt first on a session's first prompt. The agent's turn may span several of the
      session's requests: when it asks something only the chat can answer (a permission, a file write), the
      response ends (``ResponseCompleted(continues=True)``), the session asks the person, and the next request
      answers the waiting question and goes on reading the same prompt.
    - Message and thought chunks stream as text and reasoning; tool calls are provider-run calls whose cards show
      title, kind, locations, diffs and text; the plan is a checklist; the agent's cost prices the requests.
    - A permission request is an approval in the card: Allow is the agent's ``allow_once`` option, Decline its
      ``reject_once``; a call cancelled or skipped is answered ``cancelled``. Allow always is kept to this chat: the
      agent hears ``allow_once`` (its ``allow_always`` may outlive the chat: Claude Code writes it into the
      project's settings), and the session answers the tool's later requests of this chat unasked. The protocol
      has no room for a decline's reason.
    - Stop (and any turn that ends mid-prompt) ends the commands the agent runs in its terminals, sends
      ``session/cancel``, answers open questions ``cancelled``, and waits a few seconds for the prompt to end, else
      restarts the agent. Stopping the agent closes its terminals.
    - An agent that is not installed, exits, or writes anything but JSON-RPC messages (or too long a line) is an
      error that says so with its last output (key-shaped text redacted); the next message starts it again.
    - The protocol has no tool choice: a forced one is an error. A typed answer is asked for in text.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        serve_files: bool = True,
        serve_terminals: bool = True,
        offer_tools: bool = True,
    ) -> None:
        if not isinstance(command, str) or not command.strip():
            raise ValueError(f"command must be the agent's program, not {command!r}")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a sequence of text arguments")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ValueError("env must map text to text")
        self.command = command
        self.args = tuple(args)
        self.cwd = None if cwd is None else os.fspath(cwd)
        self._env = dict(env or {})
        self._client = ACPClient(serve_files=serve_files, serve_terminals=serve_terminals)
        #: How the agent is started.
        self.spawn: Spawn = spawn_over_wire
        #: More MCP servers each agent session is offered (none by default), besides the session's own tools.
        self.mcp_servers: McpServers = lambda request, init: []
        self._link: AgentLink | None = None
        self._init: InitializeResponse | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stopping: asyncio.Event | None = None
        self._starting: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the one the agent was started on: close() stops it there
        self._sessions: dict[str, AgentSession] = {}  # by the chat's conversation id
        #: Whether the session's own tools are offered to the agent (see the class's notes).
        self.offer_tools = offer_tools
        self._offers: dict[str, ToolOffer] = {}  # by the agent's session id
        #: Every offer's token this transport made: the agent may repeat one on stderr, quoted in an error later.
        self._said_tokens: collections.deque[Callable[[str], str]] = collections.deque(maxlen=MAX_REMEMBERED_TOKENS)
        self._client.own_tool = self._own_tool

    @property
    def profile(self) -> TransportProfile:
        """Nothing known: the agent picks its own model and prices its own work."""
        return NO_PROFILE

    @property
    def running(self) -> bool:
        """Whether the agent's process runs (it starts with the first request, and again after it ended)."""
        link = self._link
        return (
            link is not None
            and link.returncode() is None
            and link.failure() is None
            and self._runner is not None
            and not self._runner.done()
        )

    @property
    def agent_info(self) -> InitializeResponse | None:
        """What the agent said of itself at ``initialize`` (capabilities, name), once started."""
        return self._init

    def __repr__(self) -> str:
        return f"ACPTransport({' '.join([self.command, *self.args])!r})"

    # --- the agent process ------------------------------------------------------------------------------------------

    @property
    def _where(self) -> str:
        return self.cwd or os.getcwd()

    async def _start(self) -> AgentLink:
        """The running agent, started (and initialised) when it is not."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self.running:
                assert self._link is not None
                return self._link
            await self._stop_agent()
            self._loop = asyncio.get_running_loop()
            ready: asyncio.Future[AgentLink] = self._loop.create_future()
            self._stopping = asyncio.Event()
            self._runner = asyncio.create_task(self._run_agent(ready, self._stopping))
            self._link = await ready
            return self._link

    async def _run_agent(self, ready: asyncio.Future[AgentLink], stopping: asyncio.Event) -> None:
        """Holds the agent's process open until it is stopped (one task enters and leaves the SDK's context), and
        the terminals it runs, which close with it."""
        terminals = self._client.terminals.open(self._where)
        try:
            async with self.spawn(self._client, self.command, self.args, self._env, self._where) as link:
                try:
                    self._init = await asyncio.wait_for(
                        link.connection.initialize(
                            protocol_version=PROTOCOL_VERSION,
                            client_capabilities=ClientCapabilities(
                                fs=FileSystemCapabilities(
                                    read_text_file=self._client.serve_files, write_text_file=self._client.serve_files
                                ),
                                terminal=self._client.serve_terminals,
                            ),
                            client_info=Implementation(name="ai_widgets", title="ai_widgets chat", version="1"),
                        ),
                        START_TIMEOUT,
                    )
                except Exception as exc:
                    raise self._start_error(exc, link) from None
                ready.set_result(link)
                await stopping.wait()
        except AgentWireError as exc:  # not installed, not runnable, no such working directory
            if not ready.done():
                ready.set_exception(ProviderError(str(exc)))
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, ProviderError) else ProviderError(self._describe(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._link = None
            for session in self._sessions.values():
                session.cancel_questions()
                if session.prompting:
                    session.put(PromptEnded(error=ConnectionError("the agent process ended")))
            if not ready.done():
                ready.set_exception(ProviderError(f"ACP agent {self.command!r} ended before it started"))
            await terminals.close()

    def _start_error(self, exc: BaseException, link: AgentLink) -> ProviderError:
        failure = link.failure()
        if failure is not None:  # it exited, or broke the protocol: the wire says how, with its last output
            return ProviderError(self._redact(f"The agent did not start: {failure}"))
        said = link.stderr_tail().strip()
        if isinstance(exc, TimeoutError):
            what = f"did not answer initialize within {START_TIMEOUT:g} s"
        else:
            what = f"failed at start: {self._describe(exc)}"
        return ProviderError(
            self._redact(f"ACP agent {self.command!r} {what}" + (f"; its last output: {said}" if said else ""))
        )

    def _redact(self, text: str) -> str:
        """``text`` without any token an offer of this transport made (the wire redacts key-shaped text itself)."""
        for redact in self._said_tokens:
            text = redact(text)
        return text

    @staticmethod
    def _describe(exc: BaseException) -> str:
        text = str(exc)
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    async def _stop_agent(self) -> None:
        runner, stopping = self._runner, self._stopping
        self._runner = self._stopping = None
        self._link = None
        for session in self._sessions.values():
            session.cancel_questions()
        self._sessions.clear()
        self._client.sessions.clear()
        if runner is None or stopping is None:
            return
        stopping.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(runner), 10)
        if not runner.done():
            runner.cancel()

    async def aclose(self) -> None:
        """Ends every prompt and stops the agent (its process ends), and the servers of the tools offered to it."""
        await self._stop_agent()
        offers = list(self._offers.values())
        self._offers.clear()
        for offer in offers:
            await offer.aclose()

    def close(self) -> None:
        """Like :meth:`aclose`, from any thread: the agent is stopped on the event loop it runs on (in the
        background when that is this thread's)."""
        runner, loop = self._runner, self._loop
        agent_runs = runner is not None and not runner.done()
        if loop is None or loop.is_closed() or not (agent_runs or self._offers):
            return  # nothing runs (an agent that crashed may have left its tools' servers, closed here too)
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is loop:
            loop.create_task(self.aclose())
        elif loop.is_running():
            asyncio.run_coroutine_threadsafe(self.aclose(), loop)
        else:
            loop.run_until_complete(self.aclose())

    # --- sessions ---------------------------------------------------------------------------------------------------

    async def _session_for(self, request: ChatRequest, link: AgentLink) -> AgentSession:
        conversation = request.conversation_id or ""
        session = self._sessions.get(conversation)
        diverged = False
        if session is not None:
            if session.prompting or not self._diverged(session, request):
                return session
            # The person edited or regenerated: the agent's session holds a history the chat no longer has.
            diverged = True
            session.cancel_questions()
            del self._sessions[conversation]
            self._client.sessions.pop(session.session_id, None)
            session = None
        await self._close_stale_offers()
        init = self._init
        offer = await self._offer(request)
        mapper = UpdateMapper(terminal_view=self._client.terminals.view)
        if offer is not None:
            mapper.offered = offer.local_name  # its calls' cards are the chat's own
        servers = self.mcp_servers(request, init) + ([] if offer is None else offer.servers(init))
        meta = self._session_meta(request)
        earlier = None if diverged else agent_session_id(request.messages)
        connection = link.connection
        if (
            earlier is not None
            and init is not None
            and init.agent_capabilities
            and init.agent_capabilities.load_session
        ):
            session = AgentSession(earlier, mapper, fresh=False)
            self._client.sessions[earlier] = session
            mapper.replaying = True  # the agent replays the history as updates before it answers: not this turn's
            try:
                await asyncio.wait_for(
                    connection.load_session(cwd=self._where, session_id=earlier, mcp_servers=servers, **meta),
                    START_TIMEOUT,
                )
            except Exception:
                logger.info("ACP agent %r could not load session %r; starting a new one", self.command, earlier)
                del self._client.sessions[earlier]
                session = None
            finally:
                mapper.replaying = False
            if session is not None:
                session.sent.update(m.id for m in earlier_messages(request.messages))  # the loaded session has them
                session.drain()
        if session is None:
            try:
                created = await asyncio.wait_for(
                    connection.new_session(cwd=self._where, mcp_servers=servers, **meta), START_TIMEOUT
                )
            except Exception as exc:
                said = self._describe(exc)
                if offer is not None:
                    said = offer.redact(said)
                    await offer.aclose()
                raise ProviderError(f"ACP agent {self.command!r} did not open a session: {said}") from None
            session = AgentSession(created.session_id, mapper, fresh=True)
            self._client.sessions[created.session_id] = session
        session.system_in_meta = bool(meta)
        if diverged:
            session.notice = NEW_SESSION_NOTICE
        if offer is not None:
            offer.bind(session, functools.partial(self.call_session_tool, session.session_id))
            self._offers[session.session_id] = offer
        self._sessions[conversation] = session
        return session

    @staticmethod
    def _diverged(session: AgentSession, request: ChatRequest) -> bool:
        """Whether the latest message the agent's session had is gone from the history (an edit, a regenerate)."""
        return session.latest is not None and all(message.id != session.latest for message in request.messages)

    @property
    def is_claude_code(self) -> bool:
        """Whether the agent said it is Claude Code's ACP adapter (in ``initialize``'s ``agentInfo``)."""
        info = self._init.agent_info if self._init is not None else None
        return info is not None and info.name in CLAUDE_CODE_AGENTS

    def _session_meta(self, request: ChatRequest) -> dict[str, Any]:
        """The ``_meta`` of ``session/new``: Claude Code takes the chat's system prompt there, added to its own."""
        system = request.options.system_prompt
        if system and self.is_claude_code:
            return {"systemPrompt": {"append": system}}
        return {}

    async def _offer(self, request: ChatRequest) -> ToolOffer | None:
        """A started server offering the request's tools to a new agent session, or ``None`` (no tools, or
        ``offer_tools`` is off)."""
        if not self.offer_tools or not request.tools:
            return None
        offer = ToolOffer(request.tools)
        self._said_tokens.append(offer.redact)
        try:
            await offer.start()
        except RuntimeError as exc:
            raise ProviderError(
                f"the session's tools could not be offered to ACP agent {self.command!r}: {exc}"
            ) from None
        return offer

    async def _close_stale_offers(self) -> None:
        """Stops the servers offered to agent sessions the transport no longer keeps (the agent restarted, the
        history diverged)."""
        kept = {session.session_id for session in self._sessions.values()}
        for session_id in [s for s in self._offers if s not in kept]:
            await self._offers.pop(session_id).aclose()

    def _own_tool(self, name: str) -> bool:
        """Whether an agent's call name is one of the session's tools offered to it (``client.own_tool``)."""
        return any(offer.local_name(name) is not None for offer in self._offers.values())

    @property
    def client(self) -> ACPClient:
        """The client side served to the agent (its ``own_tool`` rule names the tools offered to it)."""
        return self._client

    async def call_session_tool(self, session_id: str, call_id: str, name: str, arguments: str) -> ToolCallPart | None:
        """Hands the chat a call of one of the session's own tools that the agent made over MCP: a local call in
        the response being streamed, which ends there so the session's round runs it (its card, its approval, the
        kernel). Returns the call with its outcome once the chat's next request carries it, or ``None`` when the
        turn ended first.

        Args:
            session_id: The agent's session the call belongs to.
            call_id: The call's id (the agent's own id of it where it says, else a new one).
            name: The tool's name as the session registered it.
            arguments: Its JSON arguments.

        Raises:
            KeyError: No such agent session.
        """
        session = self._client.sessions[session_id]
        question = Question(call_id, asyncio.get_running_loop().create_future(), local=True)
        part = await session.ask(question, [ToolCallStarted(call_id, name, arguments)])
        return part if isinstance(part, ToolCallPart) else None

    # --- a request --------------------------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """One response of the agent's turn (see the class's notes)."""
        if request.options.tool_choice.forces_call:
            raise ProviderError("an ACP agent decides its own tool calls: a forced tool choice cannot be kept")
        link = await self._start()
        session = await self._session_for(request, link)
        offer = self._offers.get(session.session_id)
        if offer is not None:
            await offer.refresh(request.tools)  # the session's tools as they are now
        replies = [m.id for m in request.messages if m.role is Role.ASSISTANT]
        if replies:
            session.latest = replies[-1]  # the reply it answers into
        yield ResponseStarted()
        yield ProviderState(PROVIDER, {"session_id": session.session_id})
        if session.notice is not None:
            yield StatusUpdate(session.notice)
            session.notice = None
        session.mapper.begin_response()
        if session.prompting:
            self._answer(session, request)
        else:
            session.cancel_questions()
            session.drain()
            blocks = self._prompt_blocks(session, request)
            session.prompt = asyncio.create_task(self._prompt(link, session, blocks))
        while True:
            item = await session.queue.get()
            match item:
                case Pause():
                    yield ResponseCompleted(FinishReason.TOOL_CALLS, continues=True)
                    return
                case PromptEnded(response=response, error=error):
                    if error is not None or response is None:
                        crash = self._crash_error(error, link)
                        if link.failure() is not None:
                            await self._stop_agent()  # it is gone: its terminals go too (the next request restarts it)
                        raise crash
                    for event in session.mapper.release_held():  # calls of its tools the agent never made
                        yield event
                    for event in session.mapper.prompt_usage(response):
                        yield event
                    if response.stop_reason != "cancelled" and self._unsent(session, request):
                        # Messages delivered while the prompt ran: they are the turn's next prompt.
                        blocks = self._prompt_blocks(session, request)
                        session.prompt = asyncio.create_task(self._prompt(link, session, blocks))
                        continue
                    yield ResponseCompleted(STOP_REASONS.get(response.stop_reason, FinishReason.STOP))
                    return
                case list():
                    for event in item:
                        yield event

    async def _prompt(self, link: AgentLink, session: AgentSession, blocks: list[Any]) -> None:
        try:
            response: PromptResponse = await link.connection.prompt(session_id=session.session_id, prompt=blocks)
        except BaseException as exc:
            session.put(PromptEnded(error=exc))
            if not isinstance(exc, Exception):
                raise
        else:
            session.put(PromptEnded(response=response))

    def _crash_error(self, error: BaseException | None, link: AgentLink) -> ProviderError:
        """The error a prompt ended with, with the agent's exit code and last output; the agent is started again
        (and its session loaded, where it can) by the next request."""
        failure = link.failure()
        code = link.returncode()
        said = link.stderr_tail().strip()
        self._link = None  # the next request starts the agent again, and loads its session where it can
        if failure is not None:
            return ProviderError(self._redact(f"The agent stopped during the turn: {failure}"))
        if code is not None or isinstance(error, ConnectionError):
            what = f"exited with code {code}" if code is not None else "closed the connection"
            message = f"ACP agent {self.command!r} {what} during the turn"
        else:
            message = f"ACP agent {self.command!r} failed: {self._describe(error or RuntimeError('no answer'))}"
        return ProviderError(self._redact(message + (f"; its last output: {said}" if said else "")))

    def _answer(self, session: AgentSession, request: ChatRequest) -> None:
        """Answers the agent's questions the chat has settled since the last response (its cards' decisions)."""
        for call_id, question in list(session.questions.items()):
            part = find_call(request.messages, call_id)
            if part is None:
                continue  # not shown yet (its card's events are still queued)
            if question.local:
                if part.state.terminal:
                    question.answer(part)
                continue
            if part.decision is None and not part.state.terminal:
                continue
            if part.state.terminal and call_id in session.mapper.calls:
                # The chat ended the card (declined, skipped): what the agent says of the call later changes nothing.
                session.mapper.calls[call_id].ended = True
            if question.write is not None or question.command is not None:
                allowed = part.state is ToolCallState.RUNNING and (part.decision or "").startswith("approved")
                if allowed and part.edited_arguments is not None:
                    session.put([ProviderToolResult(call_id, EDIT_REFUSED, provider=PROVIDER)])
                    question.answer(False)
                    continue
                question.answer(True if allowed else False if part.decision == "rejected" else None)
                continue
            options = question.options
            edited = part.edited_arguments is not None
            match part.decision, part.state:
                case "approved", ToolCallState.RUNNING if edited:
                    # ACP has no room for changed input: allowed, the agent would run its own version. Declined, and
                    # the card says why (what the agent says of it later is not shown).
                    answer = allow(options, "reject_once", "reject_always")
                    session.put([ProviderToolResult(call_id, EDIT_REFUSED, provider=PROVIDER)])
                    if (seen := session.mapper.calls.get(call_id)) is not None:
                        seen.ended = True
                case "approved" | "approved_always", ToolCallState.RUNNING:
                    # "Allow always" is kept to this chat by the session, which answers the agent's later asks of the
                    # tool itself; the agent's own allow_always may outlive the chat (Claude Code writes the rule
                    # into the project's .claude/settings.local.json), so the agent hears "once".
                    answer = allow(options, "allow_once", "allow_always")
                case "rejected", _:
                    answer = allow(options, "reject_once", "reject_always")
                case _:
                    answer = None
            if part.state is not ToolCallState.RUNNING and (seen := session.mapper.calls.get(call_id)) is not None:
                seen.ended = (
                    True  # its card is closed (declined, cancelled): what the agent says of it later is not shown
                )
            question.answer(answer or CANCELLED)

    def _prompt_blocks(self, session: AgentSession, request: ChatRequest) -> list[Any]:
        """The content blocks of the prompt: what of the conversation the agent has not had."""
        messages = request.messages
        earlier = earlier_messages(messages)
        blocks: list[Any] = []
        capabilities = self._init.agent_capabilities if self._init is not None else None
        prompt_caps = capabilities.prompt_capabilities if capabilities is not None else None
        embedded = bool(prompt_caps and prompt_caps.embedded_context)
        if session.fresh and not session.sent:
            system = request.options.system_prompt
            if system and not session.system_in_meta:
                blocks.append(
                    self._document("ai-widgets://system-prompt", "Instructions for this chat", system, embedded)
                )
            told = [m for m in earlier if m.id not in session.sent]
            if told:
                transcript = transcript_text(told)
                blocks.append(
                    self._document("ai-widgets://earlier-conversation", "The conversation so far", transcript, embedded)
                )
            session.sent.update(message.id for message in earlier)
        # The person's messages the agent has not had, in order: the new one, and any delivered while a prompt ran
        # (steering: ACP cannot add to a prompt in flight, so they follow it as the next prompt).
        new = [m for m in messages if m.role is Role.USER and m.id not in session.sent]
        for message in new:
            session.sent.add(message.id)
            for part in message.parts:
                if isinstance(part, TextPart) and part.text:
                    blocks.append(text_block(part.text))
                elif isinstance(part, FilePart):
                    blocks.append(self._file_block(part, prompt_caps, embedded))
        if request.output_schema is not None:
            schema = json.dumps(request.output_schema, ensure_ascii=False)
            blocks.append(text_block(f"Answer with only a JSON object that matches this JSON Schema:\n{schema}"))
        if not blocks:
            blocks.append(text_block("(continue)"))
        return blocks

    def _unsent(self, session: AgentSession, request: ChatRequest) -> bool:
        """Whether the request has messages of the person's the agent has not had (sent while its prompt ran)."""
        return any(m.role is Role.USER and m.id not in session.sent for m in request.messages)

    @staticmethod
    def _document(uri: str, title: str, text: str, embedded: bool) -> Any:
        if embedded:
            return resource_block(embedded_text_resource(uri, text, mime_type="text/markdown"))
        return text_block(f"{title}:\n\n{text}")

    @staticmethod
    def _file_block(part: FilePart, caps: Any, embedded: bool) -> Any:
        name = part.name or "file"
        kind = part.media_type.split("/", 1)[0]
        if part.url is not None:
            return resource_link_block(name, part.url, mime_type=part.media_type)
        assert part.data is not None
        if kind == "image" and caps is not None and caps.image:
            return image_block(part.data, part.media_type)
        if kind == "audio" and caps is not None and caps.audio:
            return audio_block(part.data, part.media_type)
        if embedded:
            return resource_block(
                embedded_blob_resource(f"ai-widgets://file/{name}", part.data, mime_type=part.media_type)
            )
        return text_block(f"[{name} ({part.media_type}) is attached, but this agent takes no such files]")

    # --- the end of a turn ------------------------------------------------------------------------------------------

    async def turn_ended(self, conversation_id: str, reply: Message) -> None:
        """Ends the agent's prompt when the turn ended before it did (Stop, a limit, an error): the commands it runs
        in its terminals are ended, ``session/cancel``, open questions answered ``cancelled``, a few seconds for the
        prompt to end, else the agent is restarted."""
        session = self._sessions.get(conversation_id)
        if session is None:
            return
        session.mapper.forget_content()  # the turn's cards take no more live output
        if not session.prompting:
            session.cancel_questions()  # asked outside a prompt: nobody will answer it now
            session.drain()
            return
        session.cancel_questions()
        await self._client.terminals.kill_running(session)
        link = self._link
        prompt = session.prompt
        assert prompt is not None
        if link is not None:
            with contextlib.suppress(Exception):
                await link.connection.cancel(session_id=session.session_id)
        try:
            await asyncio.wait_for(asyncio.shield(prompt), CANCEL_TIMEOUT)
        except Exception:
            logger.warning("ACP agent %r did not end its prompt on cancel; restarting it", self.command)
            await self._stop_agent()
            return
        finally:
            session.cancel_questions()
        session.drain()


def transcript_text(messages: Sequence[Message]) -> str:
    """The conversation as plain text for an agent session that has not had it, the newest kept when it is long."""
    lines = []
    for message in messages:
        who = "User" if message.role is Role.USER else "Assistant"
        text = message.text.strip()
        if text:
            lines.append(f"{who}: {text}")
    text = "\n\n".join(lines)
    if len(text) > MAX_TRANSCRIPT_CHARS:
        text = "[… the earlier part left out …]\n" + text[-MAX_TRANSCRIPT_CHARS:]
    return text
