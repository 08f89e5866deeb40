"""A small ACP agent on the SDK's agent side, for the tests: each prompt's text is a JSON script of steps it plays.

Run as ``python tests/integrations/acp_agent.py``. A prompt whose text is ``{"steps": [...]}`` plays the steps in
order; a prompt ``demo <file>`` plays the step ``{"demo": "<file>"}``; any other prompt is answered
``You said: <text>``. Steps (one key each):

- ``{"text": s}``, ``{"thought": s}``: a message or thought chunk.
- ``{"plan": [[content, status, priority], ...]}``: the whole plan.
- ``{"tool_call": {"id", "title", "kind", "raw_input", "status", "tool_name"}}``: a call (``tool_name`` as Claude
  Code's ``_meta.claudeCode.toolName``); sent again for the same id it is a repeat.
- ``{"diff": {"id", "title", "path", "old", "new", "raw_input"}}``: ``tool_call`` again for ``id``, with the diff.
- ``{"update": {"id", "status", "text", "raw_output"}}``: a ``tool_call_update``.
- ``{"permission": {"id", "title", "options", "raw_input"}}``: asks; says ``permission <id>: <option id or
  cancelled>``. ``options`` lists ``[id, kind]`` pairs (allow, allow_always, reject by default).
- ``{"permission_twice": {"id"}}``: asks twice at once for the same call; says both answers.
- ``{"read": {"path", "line", "limit"}}``: reads a file through the client; says ``read: <content>`` or the error.
- ``{"write": {"path", "content"}}``: writes through the client; says ``write: ok`` or the error.
- ``{"usage": {"used", "cost"}}``: a usage update with a running cost in USD.
- ``{"wait_cancel": true}``: waits for ``session/cancel`` (the prompt then ends ``cancelled``).
- ``{"wait_file": path}``: waits until the file exists (as an agent waits for an MCP tool's answer).
- ``{"crash": code}``: writes a last word to stderr and exits with ``code`` at once.
- ``{"garbage": true}``: writes a line that is not JSON to stdout, then waits.
- ``{"flood": n}``: ``n`` message chunks ``"<i> "``.
- ``{"terminal": {"command", "args", "cwd", "limit", "show", "kill", "wait", "release"}}``: runs a command in a client
  terminal; ``show`` names a call whose card gets the terminal, ``kill`` kills it after that many seconds, ``wait``
  (true by default) waits for its exit, ``release`` releases it; says ``terminal <id>: exit <code> signal <name>
  truncated <bool> output <repr>`` or ``terminal error: <code> <message>`` (the error is logged as ``terminal_error``).
- ``{"terminal_op": {"op", "id"}}``: ``output``, ``wait``, ``kill`` or ``release`` of the terminal ``id`` (``"last"``:
  the last one created); says ``<op> <id>: ok`` or ``<op> <id> error: <code>``.
- ``{"huge_line": mib}``: writes one line of ``mib`` MiB to stdout, then waits.
- ``{"stderr": text}``: writes ``text`` to stderr, ``$NAME`` replaced by the environment's value (``$ACP_OFFERED``:
  the MCP servers the session was offered, as JSON).
- ``{"stop": reason}``: the prompt's stop reason (``end_turn`` by default).
- ``{"mcp_call": {"tool", "arguments", "meta", "token"}}``: calls a tool of the MCP server the session was offered
  (over streamable HTTP with the headers it got, or over stdio), with ``_meta``; says ``mcp <tool>: <text>`` (``mcp
  <tool> error: <text>`` for isError) or ``mcp <tool> failed: <reason>``. ``"token": "wrong"`` sends a wrong bearer.
- ``{"demo": file}``: a whole edit, as a coding agent makes one (:func:`demo`): it thinks, shows a plan that updates,
  reads the file (relative to its working directory) through the client, proposes an edit with a diff, asks
  permission, writes the file when allowed, and answers.

Environment: ``ACP_AGENT_LOG`` (a file: each request the agent gets, as a JSON line) and ``ACP_AGENT_STATE`` (a
directory: each session's history, so ``session/load`` works in a new process and replays it).

For the offered tools: ``ACP_AGENT_NAME`` (the name it gives in ``agentInfo``), ``ACP_AGENT_NO_HTTP`` (set: it does not
advertise MCP over HTTP, so it is offered stdio servers) and ``ACP_AGENT_REFUSE_SESSIONS`` (set: ``session/new``
fails, repeating the MCP servers it was offered).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp import text_block as agent_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Cost,
    Implementation,
    McpCapabilities,
    McpServerStdio,
    PermissionOption,
    PromptCapabilities,
    ToolCallLocation,
    ToolCallUpdate,
    UsageUpdate,
)
from mcp import Client as McpClient
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

DEFAULT_OPTIONS = [["allow", "allow_once"], ["allow_always", "allow_always"], ["reject", "reject_once"]]


def log(kind: str, data: Any) -> None:
    path = os.environ.get("ACP_AGENT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps({"kind": kind, "data": data}, default=str) + "\n")


def meta(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A request's ``_meta`` as the SDK hands it over (among the keyword arguments it did not fill)."""
    return {key: value for key, value in kwargs.items() if key != "additional_directories"}


def describe(exc: BaseException) -> str:
    """What an exception says, through the exception groups the MCP SDK raises."""
    while getattr(exc, "exceptions", None):  # an exception group (Python 3.11+, or its backport)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {exc}"


def wait_for_file(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.02)


class ScriptAgent(Agent):
    def __init__(self) -> None:
        self.conn: Client
        self.cancelled: dict[str, asyncio.Event] = {}
        self.sessions = 0
        self.mcp_servers: dict[str, list[Any]] = {}
        self.last_terminal = ""

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any) -> Any:
        capabilities = client_capabilities
        log("initialize", None if capabilities is None else capabilities.model_dump(by_alias=True, exclude_none=True))
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=not os.environ.get("ACP_AGENT_NO_HTTP")),
            ),
            agent_info=Implementation(name=os.environ.get("ACP_AGENT_NAME", "acp-test-agent"), version="0.1"),
        )

    def _state(self, session_id: str) -> Path | None:
        directory = os.environ.get("ACP_AGENT_STATE")
        return None if not directory else Path(directory) / f"{session_id}.json"

    def _history(self, session_id: str) -> list[list[str]]:
        path = self._state(session_id)
        return json.loads(path.read_text()) if path is not None and path.exists() else []

    def _remember(self, session_id: str, said: str, answered: str) -> None:
        path = self._state(session_id)
        if path is not None:
            path.write_text(json.dumps([*self._history(session_id), [said, answered]]))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        self.sessions += 1
        session_id = f"s{os.getpid()}-{self.sessions}"
        servers = [s.model_dump(by_alias=True, exclude_none=True) for s in mcp_servers or []]
        log("new_session", {"cwd": cwd, "mcp_servers": servers, "id": session_id, "meta": meta(kwargs)})
        if os.environ.get("ACP_AGENT_REFUSE_SESSIONS"):
            raise RequestError(-32602, f"refused the MCP servers {json.dumps(servers)}")
        self.mcp_servers[session_id] = list(mcp_servers or [])
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        servers = [s.model_dump(by_alias=True, exclude_none=True) for s in mcp_servers or []]
        log("load_session", {"cwd": cwd, "id": session_id, "mcp_servers": servers, "meta": meta(kwargs)})
        self.mcp_servers[session_id] = list(mcp_servers or [])
        path = self._state(session_id)
        if path is None or not path.exists():
            raise RequestError.resource_not_found(session_id)
        for said, answered in self._history(session_id):  # replayed before the answer, as Claude Code does
            await self.conn.session_update(session_id, update_user_message_text(said))
            await self.conn.session_update(session_id, update_agent_message_text(answered))
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log("cancel", session_id)
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> Any:
        log("prompt", [block.model_dump(by_alias=True, exclude_none=True) for block in prompt])
        self.cancelled[session_id] = asyncio.Event()
        text = "\n".join(getattr(block, "text", "") for block in prompt if getattr(block, "type", "") == "text")
        script = None
        for block in prompt:
            candidate = getattr(block, "text", "")
            if candidate.startswith("{"):
                try:
                    script = json.loads(candidate)["steps"]
                except (ValueError, KeyError, TypeError):
                    script = None
        said: list[str] = []
        script = [{"demo": text[5:].strip()}] if script is None and text.startswith("demo ") else script
        if script is None:
            said.append(f"You said: {text}")
            await self.say(session_id, said[-1])
            self._remember(session_id, text, said[-1])
            return PromptResponse(stop_reason="end_turn")
        stop = "end_turn"
        for step in script:
            (kind, value), *_ = step.items()
            result = await self.step(session_id, kind, value, said)
            if result is not None:
                stop = result
                if stop == "cancelled":
                    break
        self._remember(session_id, text, "".join(said))
        return PromptResponse(stop_reason=stop)

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, update_agent_message_text(text))

    async def step(self, session_id: str, kind: str, value: Any, said: list[str]) -> str | None:
        conn = self.conn
        match kind:
            case "text":
                said.append(value)
                await self.say(session_id, value)
            case "thought":
                await conn.session_update(session_id, update_agent_thought_text(value))
            case "plan":
                entries = [plan_entry(c, status=s, priority=p) for c, s, p in value]
                await conn.session_update(session_id, update_plan(entries))
            case "tool_call":
                update = start_tool_call(
                    value["id"],
                    value.get("title", value["id"]),
                    kind=value.get("kind"),
                    status=value.get("status", "pending"),
                    raw_input=value.get("raw_input"),
                )
                if "tool_name" in value:
                    update.field_meta = {"claudeCode": {"toolName": value["tool_name"]}}
                await conn.session_update(session_id, update)
            case "diff":
                update = start_tool_call(
                    value["id"],
                    value.get("title", f"Write {value['path']}"),
                    kind="edit",
                    content=[tool_diff_content(value["path"], value["new"], value.get("old"))],
                    raw_input=value.get("raw_input"),
                )
                await conn.session_update(session_id, update)
            case "update":
                content = [tool_content(agent_text(value["text"]))] if "text" in value else None
                update = update_tool_call(
                    value["id"], status=value.get("status"), content=content, raw_output=value.get("raw_output")
                )
                await conn.session_update(session_id, update)
            case "permission":
                answer = await self.ask(session_id, value)
                said.append(f"permission {value['id']}: {answer}\n")
                await self.say(session_id, said[-1])
            case "permission_twice":
                answers = await asyncio.gather(self.ask(session_id, value), self.ask(session_id, value))
                said.append(f"permission {value['id']}: {' '.join(answers)}\n")
                await self.say(session_id, said[-1])
            case "read":
                try:
                    read = await conn.read_text_file(
                        session_id=session_id, path=value["path"], line=value.get("line"), limit=value.get("limit")
                    )
                    said.append(f"read: {read.content}")
                except RequestError as exc:
                    said.append(f"read error: {exc}")
                await self.say(session_id, said[-1])
            case "write":
                try:
                    await conn.write_text_file(session_id=session_id, path=value["path"], content=value["content"])
                    said.append("write: ok\n")
                except RequestError as exc:
                    said.append(f"write error: {exc}\n")
                await self.say(session_id, said[-1])
            case "usage":
                cost = None if value.get("cost") is None else Cost(amount=value["cost"], currency="USD")
                update = UsageUpdate(session_update="usage_update", used=value.get("used", 0), size=200_000, cost=cost)
                await conn.session_update(session_id, update)
            case "wait_cancel":
                await self.cancelled[session_id].wait()
                return "cancelled"
            case "wait_file":
                await asyncio.to_thread(wait_for_file, value)
            case "crash":
                sys.stderr.write("test agent: crashing as scripted\n")
                sys.stderr.flush()
                os._exit(int(value))
            case "garbage":
                sys.stdout.write("this is not json\n")
                sys.stdout.flush()
                await asyncio.sleep(3600)
            case "flood":
                for index in range(int(value)):
                    await self.say(session_id, f"{index} ")
            case "terminal":
                await self.terminal(session_id, value, said)
            case "terminal_op":
                await self.terminal_op(session_id, value, said)
            case "huge_line":
                await self.huge_line(value)
            case "stderr":
                self.stderr(session_id, value)
            case "stop":
                return str(value)
            case "mcp_call":
                said.append(await self.mcp_call(session_id, value) + "\n")
                await self.say(session_id, said[-1])
            case "demo":
                await demo(conn, session_id, str(value), said)
        return None

    async def mcp_call(self, session_id: str, value: dict[str, Any]) -> str:
        """Calls a tool of the first MCP server the session was offered, as an agent does."""
        tool = value["tool"]
        servers = self.mcp_servers.get(session_id) or []
        if not servers:
            return f"mcp {tool} failed: no MCP server was offered"
        server = servers[0]
        statuses: list[int] = []

        async def seen(response: httpx2.Response) -> None:
            statuses.append(response.status_code)

        try:
            if isinstance(server, McpServerStdio):
                env = {item.name: item.value for item in server.env}
                if value.get("token") == "wrong":
                    env["AI_WIDGETS_ACP_MCP_TOKEN"] = "wrong"
                transport: Any = StdioServerParameters(command=server.command, args=list(server.args), env=env)
                async with McpClient(transport, mode="legacy", cache=None) as client:
                    result = await client.call_tool(tool, value.get("arguments", {}), meta=value.get("meta"))
            else:
                headers = {header.name: header.value for header in server.headers}
                if value.get("token") == "wrong":
                    headers["Authorization"] = "Bearer wrong"
                async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [seen]}) as http:
                    connection = streamable_http_client(server.url, http_client=http)
                    async with McpClient(connection, mode="legacy", cache=None) as client:
                        result = await client.call_tool(tool, value.get("arguments", {}), meta=value.get("meta"))
        except BaseException as exc:  # an agent says what failed (an ExceptionGroup from the SDK's task group)
            if not isinstance(exc, Exception):
                raise
            return f"mcp {tool} failed: {describe(exc)} (HTTP statuses {statuses})"
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        said = f"mcp {tool}{' error' if result.is_error else ''}: {text}"
        log("mcp_result", said)  # also when the turn ended before it came (the chat no longer reads the reply)
        return said

    async def terminal(self, session_id: str, value: dict[str, Any], said: list[str]) -> None:
        conn = self.conn
        try:
            created = await conn.create_terminal(
                session_id=session_id,
                command=value["command"],
                args=value.get("args"),
                cwd=value.get("cwd"),
                output_byte_limit=value.get("limit"),
            )
        except RequestError as exc:
            log("terminal_error", {"code": exc.code, "message": str(exc)})
            said.append(f"terminal error: {exc.code} {exc}\n")
            await self.say(session_id, said[-1])
            return
        terminal_id = self.last_terminal = created.terminal_id
        if "show" in value:
            await conn.session_update(
                session_id, update_tool_call(value["show"], content=[tool_terminal_ref(terminal_id)])
            )
        if value.get("kill") is not None:
            await asyncio.sleep(float(value["kill"]))
            await conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        if value.get("wait", True):
            await conn.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        out = await conn.terminal_output(session_id=session_id, terminal_id=terminal_id)
        status = out.exit_status
        code, signal = (None, None) if status is None else (status.exit_code, status.signal)
        said.append(
            f"terminal {terminal_id}: exit {code} signal {signal} truncated {out.truncated} output {out.output!r}\n"
        )
        await self.say(session_id, said[-1])
        if value.get("release"):
            await conn.release_terminal(session_id=session_id, terminal_id=terminal_id)

    async def terminal_op(self, session_id: str, value: dict[str, Any], said: list[str]) -> None:
        op, terminal_id = value["op"], value["id"]
        if terminal_id == "last":
            terminal_id = self.last_terminal
        call = {
            "output": self.conn.terminal_output,
            "wait": self.conn.wait_for_terminal_exit,
            "kill": self.conn.kill_terminal,
            "release": self.conn.release_terminal,
        }[op]
        try:
            await call(session_id=session_id, terminal_id=terminal_id)
            said.append(f"{op} {terminal_id}: ok\n")
        except RequestError as exc:
            said.append(f"{op} {terminal_id} error: {exc.code}\n")
        await self.say(session_id, said[-1])

    @staticmethod
    async def huge_line(mib: float) -> None:
        # Straight to the pipe: the SDK made stdout non-blocking, so a long write goes a piece at a time.
        rest = memoryview(b"x" * int(mib * 1024 * 1024) + b"\n")
        while rest:
            try:
                rest = rest[os.write(sys.stdout.fileno(), rest) :]
            except BlockingIOError:
                await asyncio.sleep(0.001)
        await asyncio.sleep(3600)

    def stderr(self, session_id: str, text: str) -> None:
        # What the session was offered is at hand as $ACP_OFFERED, as a careless agent would log it.
        os.environ["ACP_OFFERED"] = json.dumps([server.model_dump() for server in self.mcp_servers.get(session_id, [])])
        sys.stderr.write(os.path.expandvars(text) + "\n")
        sys.stderr.flush()

    async def ask(self, session_id: str, value: dict[str, Any]) -> str:
        options = [
            PermissionOption(option_id=option_id, name=option_id, kind=kind)
            for option_id, kind in value.get("options", DEFAULT_OPTIONS)
        ]
        tool_call = ToolCallUpdate(
            tool_call_id=value["id"], title=value.get("title"), raw_input=value.get("raw_input"), kind=value.get("kind")
        )
        response = await self.conn.request_permission(session_id=session_id, tool_call=tool_call, options=options)
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else "cancelled"


def tidied(text: str) -> str:
    """The demo's edit: trailing spaces go, tabs become four spaces, and the file ends with one newline."""
    lines = [line.rstrip().replace("\t", "    ") for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


async def demo(conn: Client, session_id: str, name: str, said: list[str]) -> None:
    """Tidies the file ``name`` as a coding agent would: thinks, plans, reads it through the client, proposes the
    edit with its diff, asks permission, writes it through the client when allowed, and says what it did."""
    path = str(Path.cwd() / (name or "hello.py"))
    name = Path(path).name  # as it speaks of the file
    steps = ["Read the file", "Propose the edit", "Write it once allowed"]

    async def plan(done: int) -> None:  # the checklist as it is now: ``done`` steps completed, the next one running
        statuses = ["completed" if i < done else "in_progress" if i == done else "pending" for i in range(3)]
        await conn.session_update(
            session_id, update_plan([plan_entry(s, status=t) for s, t in zip(steps, statuses, strict=True)])
        )

    async def say(text: str) -> None:
        said.append(text)
        await conn.session_update(session_id, update_agent_message_text(text))

    await conn.session_update(session_id, update_agent_thought_text(f"I should read {name} before I change it. "))
    await plan(0)
    read_id, edit_id = f"read-{os.getpid()}-{time.monotonic_ns()}", f"edit-{os.getpid()}-{time.monotonic_ns()}"
    where = [ToolCallLocation(path=path)]
    await conn.session_update(
        session_id, start_tool_call(read_id, f"Read {path}", kind="read", status="in_progress", locations=where)
    )
    try:
        before = (await conn.read_text_file(session_id=session_id, path=path)).content
    except RequestError as exc:
        failed = [tool_content(agent_text(f"Could not read it: {exc}"))]
        await conn.session_update(session_id, update_tool_call(read_id, status="failed", content=failed))
        await say(f"I could not read {name}: {exc}")
        return
    shown = [tool_content(agent_text(f"{len(before.splitlines())} lines"))]
    await conn.session_update(session_id, update_tool_call(read_id, status="completed", content=shown))
    after = tidied(before)
    await conn.session_update(
        session_id, update_agent_thought_text("Trailing spaces and tabs: I will tidy them and keep the rest. ")
    )
    await plan(1)
    if after == before:
        await plan(3)
        await say(f"{name} is tidy already: nothing to change.")
        return
    await conn.session_update(
        session_id,
        start_tool_call(
            edit_id,
            f"Edit {path}",
            kind="edit",
            status="pending",
            locations=where,
            content=[tool_diff_content(path, after, before)],
            raw_input={"path": path, "content": after},
        ),
    )
    await plan(2)
    options = [PermissionOption(option_id=i, name=i, kind=k) for i, k in DEFAULT_OPTIONS]  # type: ignore[arg-type]
    asked = ToolCallUpdate(tool_call_id=edit_id, title=f"Edit {path}", kind="edit", raw_input={"path": path})
    answer = (await conn.request_permission(session_id=session_id, tool_call=asked, options=options)).outcome
    if not isinstance(answer, AllowedOutcome) or answer.option_id == "reject":
        declined = [tool_content(agent_text("Not allowed: the file is unchanged."))]
        await conn.session_update(session_id, update_tool_call(edit_id, status="failed", content=declined))
        await say(f"As you wish: I left {name} as it was.")
        return
    await conn.session_update(session_id, update_tool_call(edit_id, status="in_progress"))
    try:
        await conn.write_text_file(session_id=session_id, path=path, content=after)
    except RequestError as exc:
        failed = [tool_content(agent_text(f"Could not write it: {exc}"))]
        await conn.session_update(session_id, update_tool_call(edit_id, status="failed", content=failed))
        await say(f"I could not write {name}: {exc}")
        return
    wrote = [tool_content(agent_text(f"Wrote {path}."))]
    await conn.session_update(session_id, update_tool_call(edit_id, status="completed", content=wrote))
    await plan(3)
    await say(f"I tidied {name}: no trailing spaces or tabs, one newline at the end.")


if __name__ == "__main__":
    asyncio.run(run_agent(ScriptAgent()))
