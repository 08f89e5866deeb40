"""An agent people already run (Claude Code, Codex, Gemini CLI...) in the chat, over the Agent Client Protocol:
:class:`ACPTransport` runs it as a subprocess and turns each of its prompts into the session's responses
(``pip install "ai_widgets[acp]"``)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ai_widgets.events import ProviderState, ResponseCompleted, ResponseStarted, StreamEvent, ToolCallStarted
from ai_widgets.messages import FilePart, FinishReason, Message, Role, TextPart, ToolCallPart, ToolCallState
from ai_widgets.transports._base import NO_PROFILE, ChatRequest, TransportProfile
from ai_widgets.transports._client import import_sdk
from ai_widgets.transports._errors import ProviderError

import_sdk("acp", "acp")  # says which extra to install when the SDK is missing

from acp import (  # noqa: E402
    PROTOCOL_VERSION,
    audio_block,
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    spawn_agent_process,
    text_block,
)
from acp.schema import (  # noqa: E402
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    PromptResponse,
)

from ai_widgets.integrations._acp_client import ACPClient, allow  # noqa: E402
from ai_widgets.integrations._acp_session import CANCELLED, AgentSession, Pause, PromptEnded, Question  # noqa: E402
from ai_widgets.integrations._acp_updates import PROVIDER, UpdateMapper  # noqa: E402

__all__ = ["ACPTransport", "AgentLink", "McpServers", "Spawn"]

logger = logging.getLogger("ai_widgets")

#: Seconds an agent may take to start and answer ``initialize``, and to open or load a session.
START_TIMEOUT = 60.0
#: Seconds a cancelled prompt may take to answer ``cancelled`` before the agent is restarted.
CANCEL_TIMEOUT = 5.0
#: The most characters of the agent's stderr kept for error messages.
STDERR_TAIL_CHARS = 4_000
#: The most characters of an earlier conversation sent to a new agent session that has not had it.
MAX_TRANSCRIPT_CHARS = 100_000

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
        stderr_tail: The end of what the agent wrote to stderr, for error messages.
    """

    connection: Any
    returncode: Callable[[], int | None]
    stderr_tail: Callable[[], str]


#: The MCP servers offered to an agent session (``session/new``, ``session/load``): ``(request, the agent's
#: initialize answer)`` to a list of the SDK's MCP server models. The kernel's tool server plugs in here.
McpServers = Callable[[ChatRequest, InitializeResponse | None], list[Any]]

#: Starts an agent: ``(client, command, args, env, cwd)`` to an async context manager of its :class:`AgentLink`.
#: The seam where the project's own wire (process groups, line caps, the stderr tail) replaces the SDK's spawn.
Spawn = Callable[
    [ACPClient, str, Sequence[str], Mapping[str, str], str], contextlib.AbstractAsyncContextManager[AgentLink]
]


@contextlib.asynccontextmanager
async def spawn_with_sdk(
    client: ACPClient, command: str, args: Sequence[str], env: Mapping[str, str], cwd: str
) -> AsyncIterator[AgentLink]:
    """Starts the agent with the SDK's own ``spawn_agent_process``, reading its stderr all the time (a chatty agent
    would block on a full pipe) into a bounded tail."""
    async with spawn_agent_process(client, command, *args, env=dict(env), cwd=cwd) as (connection, process):
        tail: collections.deque[str] = collections.deque(maxlen=200)

        async def drain() -> None:
            stream = process.stderr
            if stream is None:
                return
            while line := await stream.readline():
                tail.append(line.decode("utf-8", "replace"))

        reader = asyncio.create_task(drain())
        try:
            yield AgentLink(connection, lambda: process.returncode, lambda: "".join(tail)[-STDERR_TAIL_CHARS:])
        finally:
            reader.cancel()


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

    Raises:
        ValueError: ``command`` is empty, or ``args`` or ``env`` hold anything but text.

    How the chat maps onto ACP:

    - One agent session per conversation (``session/new`` in ``cwd``), resumed with ``session/load`` where the
      agent supports it and the conversation recorded its session id (``Message.provider_state``, which holds no
      secret). A session that began without the conversation gets its earlier messages as a transcript.
    - Each user message is one ``session/prompt``: its text and files as content blocks within the agent's prompt
      capabilities, the system prompt first on a session's first prompt. The agent's turn may span several of the
      session's requests: when it asks something only the chat can answer (a permission, a file write), the
      response ends (``ResponseCompleted(continues=True)``), the session asks the person, and the next request
      answers the waiting question and goes on reading the same prompt.
    - Message and thought chunks stream as text and reasoning; tool calls are provider-run calls whose cards show
      title, kind, locations, diffs and text; the plan is a checklist; the agent's cost prices the requests.
    - A permission request is an approval in the card: Allow is the agent's ``allow_once`` option, Allow always its
      ``allow_always`` (what the agent says it means), Decline its ``reject_once``; a call cancelled or skipped is
      answered ``cancelled``. The protocol has no room for a decline's reason.
    - Stop (and any turn that ends mid-prompt) sends ``session/cancel``, answers open questions ``cancelled``, and
      waits a few seconds for the prompt to end, else restarts the agent.
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
        self._client = ACPClient(serve_files=serve_files)
        #: How the agent is started (the seam for the project's own wire).
        self.spawn: Spawn = spawn_with_sdk
        #: The MCP servers each agent session is offered (none by default; the kernel's tool server plugs in here).
        self.mcp_servers: McpServers = lambda request, init: []
        self._link: AgentLink | None = None
        self._init: InitializeResponse | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stopping: asyncio.Event | None = None
        self._starting: asyncio.Lock | None = None
        self._sessions: dict[str, AgentSession] = {}  # by the chat's conversation id

    @property
    def profile(self) -> TransportProfile:
        """Nothing known: the agent picks its own model and prices its own work."""
        return NO_PROFILE

    @property
    def running(self) -> bool:
        """Whether the agent's process runs (it starts with the first request, and again after it ended)."""
        link = self._link
        return link is not None and link.returncode() is None and self._runner is not None and not self._runner.done()

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
            ready: asyncio.Future[AgentLink] = asyncio.get_running_loop().create_future()
            self._stopping = asyncio.Event()
            self._runner = asyncio.create_task(self._run_agent(ready, self._stopping))
            self._link = await ready
            return self._link

    async def _run_agent(self, ready: asyncio.Future[AgentLink], stopping: asyncio.Event) -> None:
        """Holds the agent's process open until it is stopped (one task enters and leaves the SDK's context)."""
        env = {**os.environ, **self._env}  # the SDK passes the agent only a few variables of its own
        try:
            async with self.spawn(self._client, self.command, self.args, env, self._where) as link:
                try:
                    self._init = await asyncio.wait_for(
                        link.connection.initialize(
                            protocol_version=PROTOCOL_VERSION,
                            client_capabilities=ClientCapabilities(
                                fs=FileSystemCapabilities(
                                    read_text_file=self._client.serve_files, write_text_file=self._client.serve_files
                                ),
                                terminal=False,
                            ),
                            client_info=Implementation(name="ai_widgets", title="ai_widgets chat", version="1"),
                        ),
                        START_TIMEOUT,
                    )
                except Exception as exc:
                    await asyncio.sleep(0.2)  # its exit code and last words, when it is exiting
                    raise self._start_error(exc, link) from None
                ready.set_result(link)
                await stopping.wait()
        except FileNotFoundError:
            if not ready.done():
                ready.set_exception(
                    ProviderError(f"ACP agent {self.command!r} is not installed (not found on PATH, or not a program)")
                )
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

    def _start_error(self, exc: BaseException, link: AgentLink) -> ProviderError:
        code = link.returncode()
        said = link.stderr_tail().strip()
        if isinstance(exc, TimeoutError):
            what = f"did not answer initialize within {START_TIMEOUT:g} s"
        elif code is not None:
            what = f"exited at start with code {code}"
        else:
            what = f"failed at start: {self._describe(exc)}"
        return ProviderError(f"ACP agent {self.command!r} {what}" + (f"; its last output: {said}" if said else ""))

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
        """Ends every prompt and stops the agent (its process ends)."""
        await self._stop_agent()

    def close(self) -> None:
        """Like :meth:`aclose`, from any thread: the agent is stopped on the event loop it runs on (in the
        background when that is this thread's)."""
        runner = self._runner
        if runner is None or runner.done():
            return
        loop = runner.get_loop()
        if loop.is_closed():
            return
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
        if session is not None:
            return session
        init = self._init
        mapper = UpdateMapper()
        earlier = agent_session_id(request.messages)
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
                    connection.load_session(
                        cwd=self._where, session_id=earlier, mcp_servers=self.mcp_servers(request, init)
                    ),
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
                servers = self.mcp_servers(request, init)
                created = await asyncio.wait_for(
                    connection.new_session(cwd=self._where, mcp_servers=servers), START_TIMEOUT
                )
            except Exception as exc:
                raise ProviderError(
                    f"ACP agent {self.command!r} did not open a session: {self._describe(exc)}"
                ) from exc
            session = AgentSession(created.session_id, mapper, fresh=True)
            self._client.sessions[created.session_id] = session
        self._sessions[conversation] = session
        return session

    @property
    def client(self) -> ACPClient:
        """The client side served to the agent (its ``own_tool`` rule is set by the kernel's tool server)."""
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
        session.questions[call_id] = question
        session.put([ToolCallStarted(call_id, name, arguments)])
        session.put(Pause())
        try:
            part = await asyncio.shield(question.future)
        finally:
            session.questions.pop(call_id, None)
        return part if isinstance(part, ToolCallPart) else None

    # --- a request --------------------------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """One response of the agent's turn (see the class's notes)."""
        if request.options.tool_choice.forces_call:
            raise ProviderError("an ACP agent decides its own tool calls: a forced tool choice cannot be kept")
        link = await self._start()
        session = await self._session_for(request, link)
        yield ResponseStarted()
        yield ProviderState(PROVIDER, {"session_id": session.session_id})
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
                        raise self._crash_error(error, link)
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
        code = link.returncode()
        said = link.stderr_tail().strip()
        self._link = None  # the next request starts the agent again, and loads its session where it can
        if code is not None or isinstance(error, ConnectionError):
            what = f"exited with code {code}" if code is not None else "closed the connection"
            message = f"ACP agent {self.command!r} {what} during the turn"
        else:
            message = f"ACP agent {self.command!r} failed: {self._describe(error or RuntimeError('no answer'))}"
        return ProviderError(message + (f"; its last output: {said}" if said else ""))

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
            if question.write is not None:
                question.answer(part.state is ToolCallState.RUNNING and (part.decision or "").startswith("approved"))
                continue
            options = question.options
            match part.decision, part.state:
                case "approved", ToolCallState.RUNNING:
                    answer = allow(options, "allow_once", "allow_always")
                case "approved_always", ToolCallState.RUNNING:
                    answer = allow(options, "allow_always", "allow_once")
                case "rejected", _:
                    answer = allow(options, "reject_once", "reject_always")
                case _:
                    answer = None
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
            if system:
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
        """Ends the agent's prompt when the turn ended before it did (Stop, a limit, an error): ``session/cancel``,
        open questions answered ``cancelled``, a few seconds for the prompt to end, else the agent is restarted."""
        session = self._sessions.get(conversation_id)
        if session is None:
            return
        if not session.prompting:
            session.cancel_questions()  # asked outside a prompt: nobody will answer it now
            session.drain()
            return
        session.cancel_questions()
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
