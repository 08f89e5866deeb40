"""``MCPServer`` against MCP servers nobody here wrote: the reference servers (server-everything, server-filesystem,
server-memory from npm; mcp-server-time, mcp-server-git from PyPI) at the versions the test setup pins
(``scripts/mcp_servers.sh``; ``tests/mcp/installed.py`` says when these tests skip and when they fail).

Every call goes through a ``ChatSession`` as a model's would: the scripted model calls the tool, the session runs it
(an approval policy that never asks: approvals have tests of their own), and what the person and the model get is
read from the call's outcome. The npm servers run on the pinned Node 22, each over stdio, as a child process.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import ChatSession, ToolOutcome
from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.mcp import MCPServer
from ai_widgets.messages import MessageStatus, ToolCallState
from ai_widgets.transports import ScriptedTransport
from ai_widgets.widget import ChatWidget
from tests.helpers import NeverAsk, wait_for
from tests.mcp.installed import Installed, installed
from tests.mcp.mcp_harness import asked, call
from tests.mcp.servers.server import PIXEL
from tests.widget.widget_harness import finished_messages, recording_comms

pytestmark = pytest.mark.slow

EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
MEMORY = "@modelcontextprotocol/server-memory"

# server-everything's tools by what the client declares at initialisation. ai_widgets declares elicitation (form
# and URL) and sampling today, roots only when `roots=` names some, not tasks (a client's tasks capability is about
# the requests it runs as tasks itself: a task-augmented tools/call needs only the server's); the server registers its
# conditional tools from that declaration.
EVERYTHING_ALWAYS = {
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
}
EVERYTHING_WITH_ELICITATION = {"trigger-elicitation-request"}  # capability elicitation
EVERYTHING_WITH_URL_ELICITATION = {"trigger-url-elicitation"}  # capability elicitation.url
# Listed with elicitation too; it requires task execution, so its calls run as MCP tasks (the server declares
# tasks.requests.tools.call and speaks 2025-11-25).
EVERYTHING_TASK_ONLY = {"simulate-research-query"}
EVERYTHING_WITH_ROOTS = {"get-roots-list"}  # capability roots (declared with roots=[...] only)
EVERYTHING_WITH_SAMPLING = {"trigger-sampling-request"}  # capability sampling
# Not listed today, as ai_widgets does not declare what they need (a client that starts declaring one moves its set
# into EVERYTHING_TODAY):
EVERYTHING_WITH_TASK_REQUESTS = {
    "trigger-sampling-request-async",  # sampling and tasks.requests.sampling.createMessage
    "trigger-elicitation-request-async",  # elicitation and tasks.requests.elicitation.create
}
EVERYTHING_TODAY = (
    EVERYTHING_ALWAYS
    | EVERYTHING_WITH_ELICITATION
    | EVERYTHING_WITH_URL_ELICITATION
    | EVERYTHING_WITH_SAMPLING
    | EVERYTHING_TASK_ONLY
)


def session_for(server: MCPServer, *replies: Any) -> ChatSession:
    return ChatSession(ScriptedTransport(list(replies)), tools=[server], approval_policy=NeverAsk())


async def run(server: MCPServer, name: str, arguments: dict[str, Any] | None = None) -> ToolOutcome:
    """One call of ``name`` as the model makes it; its outcome (the call must have completed)."""
    reply = await session_for(server, call(name, arguments), "Done.").send(f"use {name}")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    (part,) = reply.tool_calls
    assert part.state is ToolCallState.COMPLETED, part.outcome
    assert part.outcome is not None
    return part.outcome


def text_of(outcome: ToolOutcome) -> str:
    """What the model is told."""
    return outcome.model_content()


@pytest.fixture(scope="module")
def servers() -> Installed:
    return installed()


def _npm_server(servers: Installed, package: str, *args: str | Path, **kwargs: Any) -> MCPServer:
    return MCPServer.stdio(str(servers.node), [str(servers.npm_entry(package)), *map(str, args)], **kwargs)


@pytest.fixture(scope="module")
def everything(servers: Installed) -> Iterator[MCPServer]:
    """One server-everything for the module (its tools keep no state these tests touch), started here so the
    per-test check of child processes does not count it."""
    server = _npm_server(servers, EVERYTHING, "stdio")
    asyncio.run(server.list_tools())
    yield server
    server.close()


# --- server-everything ----------------------------------------------------------------------------------------------


async def test_everything_lists_the_tools_for_the_capabilities_the_client_declares(
    servers: Installed, caplog: pytest.LogCaptureFixture
) -> None:
    async with _npm_server(servers, EVERYTHING, "stdio") as everything:
        await _lists_the_tools_for_today(everything, caplog)


async def _lists_the_tools_for_today(everything: MCPServer, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ai_widgets"):
        tools = await everything.list_tools()
    names = {t.name for t in tools}
    assert not names & EVERYTHING_WITH_TASK_REQUESTS, (
        "the client declares more capabilities now: move the tools they bring into EVERYTHING_TODAY"
    )
    assert names == EVERYTHING_TODAY
    assert len(tools) == 16
    assert not [r.getMessage() for r in caplog.records if "skipped its tool" in r.getMessage()]  # none left out
    # What the model is offered: every tool, with its schema, asking before it runs (the server is not vouched for).
    transport = ScriptedTransport(["Nothing to do."])
    await ChatSession(transport, tools=[everything]).send("hello")
    offered = {d.name: d for d in transport.requests[0].tools}
    assert set(offered) == EVERYTHING_TODAY
    assert offered["get-sum"].parameters["required"] == ["a", "b"]
    assert all(d.requires_approval for d in offered.values())


async def test_everything_echo_and_sum(everything: MCPServer) -> None:
    assert (await run(everything, "echo", {"message": "héllo wörld"})).value == "Echo: héllo wörld"
    assert (await run(everything, "get-sum", {"a": 2.5, "b": -7})).value == "The sum of 2.5 and -7 is -4.5."


async def test_everything_gets_the_roots_given(servers: Installed, tmp_path: Path) -> None:
    data = (tmp_path / "data").resolve()
    data.mkdir()
    async with _npm_server(servers, EVERYTHING, "stdio", roots=[data]) as rooted:
        assert {t.name for t in await rooted.list_tools()} >= EVERYTHING_WITH_ROOTS
        told = text_of(await run(rooted, "get-roots-list"))
    assert data.as_uri() in told, told
    assert Path.cwd().resolve().as_uri() not in told


async def test_everything_long_running_operation_reports_progress(everything: MCPServer) -> None:
    seen: list[float | None] = []

    def watch(change: SessionChange) -> None:
        if isinstance(change, ToolCallUpdated) and change.part.progress is not None:
            fraction = change.part.progress.fraction  # ToolCallProgress: fraction (0..1 or None) and message
            if not seen or seen[-1] != fraction:
                seen.append(fraction)

    session = session_for(everything, call("trigger-long-running-operation", {"duration": 1, "steps": 4}), "Done.")
    session.subscribe(watch)
    reply = await session.send("run it")
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.tool_calls[0].outcome is not None
    assert reply.tool_calls[0].outcome.value == "Long running operation completed. Duration: 1 seconds, Steps: 4."
    assert seen == [0.25, 0.5, 0.75, 1.0]


async def test_everything_structured_content_is_the_value(everything: MCPServer) -> None:
    outcome = await run(everything, "get-structured-content", {"location": "Chicago"})
    assert outcome.value == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
    assert json.loads(text_of(outcome)) == outcome.value  # the model gets the structured content as JSON


async def test_everything_resource_links_are_citations(everything: MCPServer) -> None:
    outcome = await run(everything, "get-resource-links", {"count": 3})
    # Each link is named to the model too (before: the model got the first line alone).
    assert outcome.value.splitlines()[0] == "Here are 3 resource links to resources available in this server:"
    assert [line.split(" <")[1].split(">")[0] for line in outcome.value.splitlines()[1:]] == [
        "demo://resource/dynamic/blob/1",
        "demo://resource/dynamic/text/2",
        "demo://resource/dynamic/blob/3",
    ]
    assert all(line.startswith("Resource link: ") for line in outcome.value.splitlines()[1:])
    assert [(c.url, c.title) for c in outcome.citations] == [
        ("demo://resource/dynamic/blob/1", "Blob Resource 1"),
        ("demo://resource/dynamic/text/2", "Text Resource 2"),
        ("demo://resource/dynamic/blob/3", "Blob Resource 3"),
    ]
    # An embedded resource: its text reaches the model, and its URI is a citation.
    reference = await run(everything, "get-resource-reference", {"resourceType": "Text", "resourceId": 2})
    assert "Resource 2: This is a plaintext resource" in text_of(reference)
    assert [c.url for c in reference.citations] == ["demo://resource/dynamic/text/2"]


async def test_everything_annotated_content_and_images(everything: MCPServer) -> None:
    annotated = await run(everything, "get-annotated-message", {"messageType": "error", "includeImage": True})
    assert annotated.value == "Error: Operation failed"  # the text block (its annotations are not kept)
    (image,) = annotated.attachments
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data or "").startswith(b"\x89PNG\r\n\x1a\n")

    tiny = await run(everything, "get-tiny-image")
    assert tiny.value == "Here's the image you requested:\n\nThe image above is the MCP logo."
    (logo,) = tiny.attachments
    assert logo.mime_type == "image/png"
    assert logo.data == image.data  # the same MCP logo
    assert logo.data not in text_of(tiny)  # the image goes as an image, not as base64 text


async def test_everything_sampling_runs_on_the_sessions_model_once_allowed(everything: MCPServer) -> None:
    session = session_for(
        everything, call("trigger-sampling-request", {"prompt": "Name a colour.", "maxTokens": 20}), "Teal.", "OK."
    )
    turn = asyncio.ensure_future(session.send("sample"))
    await wait_for(lambda: bool(session.pending_approvals), timeout=30)
    (part,) = session.pending_approvals
    assert part.state is ToolCallState.AWAITING_APPROVAL
    assert "Name a colour." in (part.approval_reason or "")
    assert "at most 20 tokens" in (part.approval_reason or "")
    session.approve(part.tool_call_id, "approved")
    reply = await asyncio.wait_for(turn, 30)
    assert reply.status is MessageStatus.COMPLETED
    assert part.state is ToolCallState.COMPLETED
    said = text_of(part.outcome)  # type: ignore[arg-type]
    assert said.startswith("LLM sampling result:")
    result = json.loads(said.split("\n", 1)[1])
    assert result["content"] == {"type": "text", "text": "Teal."}
    assert result["role"] == "assistant"


async def test_everything_elicitation_form_is_answered_through_respond(everything: MCPServer) -> None:
    session = session_for(everything, call("trigger-elicitation-request"), "Thanks.")
    turn = asyncio.ensure_future(session.send("ask me"))
    part = await asked(session)
    request = part.input_request
    assert request is not None
    assert request.mode == "form"
    assert request.message == "Please provide inputs for the following fields:"
    assert request.schema is not None
    assert request.schema["required"] == ["name"]
    assert request.defaults["integer"] == 42  # the form starts from the schema's defaults
    assert request.defaults["firstLine"] == "It was a dark and stormy night."
    session.respond(part.tool_call_id, "accept", {"name": "Ada Lovelace", "check": True})
    reply = await asyncio.wait_for(turn, 30)
    assert reply.status is MessageStatus.COMPLETED
    assert part.state is ToolCallState.COMPLETED
    told = text_of(part.outcome)  # type: ignore[arg-type]
    assert "✅ User provided the requested information!" in told
    assert "- Name: Ada Lovelace\n- Agreed to terms: true" in told
    assert "- Favorite Integer: 42\n- Favorite Number: 3.14" in told  # defaults the person left as they were


async def test_everything_url_elicitation_shows_the_link(everything: MCPServer) -> None:
    link = "https://example.com/authorize?state=1"
    session = session_for(everything, call("trigger-url-elicitation", {"url": link, "elicitationId": "e-1"}), "OK.")
    turn = asyncio.ensure_future(session.send("sign in"))
    part = await asked(session)
    request = part.input_request
    assert request is not None
    assert (request.mode, request.url, request.domain) == ("url", link, "example.com")
    session.respond(part.tool_call_id, "decline")
    await asyncio.wait_for(turn, 30)
    assert "User declined to open the URL (Elicitation ID: e-1)" in text_of(part.outcome)  # type: ignore[arg-type]


async def test_everything_task_tool_runs_as_a_task_with_its_stages_as_progress(everything: MCPServer) -> None:
    """Before: simulate-research-query was not offered (its taskSupport is "required", and calls were plain)."""
    shown: list[str | None] = []

    def watch(change: SessionChange) -> None:
        if isinstance(change, ToolCallUpdated) and change.part.progress is not None:
            message = change.part.progress.message
            if not shown or shown[-1] != message:
                shown.append(message)

    session = session_for(everything, call("simulate-research-query", {"topic": "bees"}), "Done.")
    session.subscribe(watch)
    reply = await asyncio.wait_for(session.send("research bees"), 60)
    (part,) = reply.tool_calls
    assert part.state is ToolCallState.COMPLETED, part.outcome
    told = text_of(part.outcome)  # type: ignore[arg-type]
    assert told.startswith("# Research Report: bees")
    assert "Status progressed: `working` → `completed`" in told
    # The task's status messages, polled at the server's pollInterval, were the card's progress, stage by stage.
    stages = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]
    assert [m for m in shown if m in stages] == stages, shown


async def test_everything_task_asks_the_person_through_its_task(everything: MCPServer) -> None:
    """An ambiguous query moves the task to input_required; its question (an elicitation naming the task, delivered
    while tasks/result waits) is the call's, and the answer reaches the task, which then completes."""
    session = session_for(everything, call("simulate-research-query", {"topic": "python", "ambiguous": True}), "OK.")
    turn = asyncio.ensure_future(session.send("research python"))
    part = await asked(session)
    request = part.input_request
    assert request is not None
    assert request.mode == "form"
    assert 'The research query "python" could have multiple interpretations' in request.message
    assert request.schema is not None
    assert request.schema["required"] == ["interpretation"]
    session.respond(part.tool_call_id, "accept", {"interpretation": "snake"})
    reply = await asyncio.wait_for(turn, 60)
    assert reply.status is MessageStatus.COMPLETED
    assert part.state is ToolCallState.COMPLETED, part.outcome
    told = text_of(part.outcome)  # type: ignore[arg-type]
    assert told.startswith("# Research Report: python (snake)")
    assert "`working` → `input_required` → `working` → `completed`" in told


async def test_everything_task_runs_over_streamable_http(servers: Installed) -> None:
    """The same task, with its question, over streamable HTTP: the task-augmented call (which goes past the SDK, see
    ai_widgets/mcp/_tasks.py) and the question delivered on tasks/result's stream work on that transport too."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        str(servers.node),
        str(servers.npm_entry(EVERYTHING)),
        "streamableHttp",
        env={"PORT": str(port), "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stderr.readline(), 30)).decode()
        assert f"listening on port {port}" in line, line
        server = MCPServer.http(f"http://127.0.0.1:{port}/mcp")
        try:
            arguments = {"topic": "python", "ambiguous": True}
            session = session_for(server, call("simulate-research-query", arguments), "OK.")
            turn = asyncio.ensure_future(session.send("research python"))
            part = await asked(session)
            session.respond(part.tool_call_id, "accept", {"interpretation": "comedy"})
            await asyncio.wait_for(turn, 60)
            assert part.state is ToolCallState.COMPLETED, part.outcome
            assert text_of(part.outcome).startswith("# Research Report: python (comedy)")  # type: ignore[arg-type]
        finally:
            await server.aclose()
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)


async def test_everything_prompts_from_the_input_box_an_embedded_resource_attached(everything: MCPServer) -> None:
    """``/`` in the chat: server-everything's prompts listed with their arguments; ``resource-prompt`` rendered and
    sent, its embedded resource an attachment of the person's message (naming its URI), then the turn runs."""
    with recording_comms() as wire:
        chat = ChatWidget(transport=ScriptedTransport(["Read it."]), tools=[everything])
        front = wire.comms[chat.comm.comm_id]
        front.handle({"type": "prompts", "request": 1})
        await wait_for(lambda: any(c.get("type") == "prompts" for c in wire.custom(chat.comm.comm_id)), timeout=30)
        [listing] = [c for c in wire.custom(chat.comm.comm_id) if c.get("type") == "prompts"]
        listed = {item["name"]: item for item in listing["items"]}
        assert {"simple-prompt", "args-prompt", "resource-prompt"} <= set(listed)
        assert listed["args-prompt"]["arguments"][0] == {
            "name": "city",
            "title": None,
            "description": "Name of the city",
            "required": True,
        }
        arguments = {"resourceType": "Text", "resourceId": "1"}
        front.handle({"type": "prompt", "name": "resource-prompt", "arguments": arguments, "id": "p1"})
        await wait_for(lambda: len(finished_messages(chat)) == 2, timeout=30)
        assert [c["type"] for c in wire.custom(chat.comm.comm_id) if c.get("id") == "p1"] == ["sent"]
        user, reply = finished_messages(chat)
        text, resource = user["parts"]
        assert "Please analyze the following resource" in text["text"]
        assert resource["attachment"] is True
        assert resource["text"].startswith("Attached resource <")
        assert "from the MCP server" in resource["text"]
        assert reply["parts"][0]["text"] == "Read it."


# --- server-filesystem ----------------------------------------------------------------------------------------------


async def _allowed(server: MCPServer) -> list[str]:
    """The directories list_allowed_directories names."""
    value = (await run(server, "list_allowed_directories")).value
    assert isinstance(value, dict), value
    heading, *directories = value["content"].splitlines()
    assert heading == "Allowed directories:", value
    return directories


async def _allowed_once_it_names(server: MCPServer, wanted: Path, *, seconds: float = 10) -> list[str]:
    """The allowed directories once they name ``wanted`` (the server asks for roots after it starts, so they may
    change a moment later), or as they are after ``seconds``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while True:
        allowed = await _allowed(server)
        if str(wanted) in allowed or loop.time() > end:
            return allowed
        await asyncio.sleep(0.2)


async def test_filesystem_keeps_the_directory_it_was_started_with_by_default(
    servers: Installed, tmp_path: Path
) -> None:
    """Before: the client declared the kernel's working directory as its roots, and the server traded the
    directory it was started with for it: a read there worked, then (once the server had asked) was denied."""
    data = (tmp_path / "data").resolve()
    data.mkdir()
    (data / "a.txt").write_text("alpha", encoding="utf-8")
    assert not Path.cwd().resolve().is_relative_to(data)
    async with _npm_server(servers, FILESYSTEM, data) as server:
        assert (await run(server, "read_text_file", {"path": str(data / "a.txt")})).value == {"content": "alpha"}
        await asyncio.sleep(1)  # time to ask for roots, were any declared
        assert (await run(server, "read_text_file", {"path": str(data / "a.txt")})).value == {"content": "alpha"}
        assert await _allowed(server) == [str(data)]


async def test_filesystem_is_restricted_to_the_roots_given(servers: Installed, tmp_path: Path) -> None:
    data, other = (tmp_path / "data").resolve(), (tmp_path / "other").resolve()
    for folder in (data, other):
        folder.mkdir()
        (folder / "a.txt").write_text(folder.name, encoding="utf-8")
    async with _npm_server(servers, FILESYSTEM, data, roots=[other]) as server:
        assert await _allowed_once_it_names(server, other) == [str(other)]
        assert (await run(server, "read_text_file", {"path": str(other / "a.txt")})).value == {"content": "other"}
        reply = await session_for(server, call("read_text_file", {"path": str(data / "a.txt")}), "OK.").send("read")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "Access denied" in text_of(part.outcome)  # type: ignore[arg-type]


@pytest.fixture
async def filesystem(servers: Installed, tmp_path: Path) -> AsyncIterator[tuple[MCPServer, Path]]:
    root = (tmp_path / "files").resolve()
    root.mkdir()
    server = _npm_server(servers, FILESYSTEM, root)
    try:
        yield server, root
    finally:
        await server.aclose()


async def test_filesystem_writes_and_reads_a_file_in_its_directory(filesystem: tuple[MCPServer, Path]) -> None:
    server, root = filesystem
    target = root / "notes" / "todo.md"
    (root / "notes").mkdir()
    await run(server, "write_file", {"path": str(target), "content": "# Todo\n\n- tea ☕\n"})
    assert target.read_text(encoding="utf-8") == "# Todo\n\n- tea ☕\n"
    read = await run(server, "read_text_file", {"path": str(target)})
    assert read.value == {"content": "# Todo\n\n- tea ☕\n"}  # its structured content
    listed = await run(server, "list_directory", {"path": str(root / "notes")})
    assert listed.value == {"content": "[FILE] todo.md"}
    # Outside its directory: the server refuses, and the model is told so.
    reply = await session_for(server, call("read_text_file", {"path": "/etc/hostname"}), "OK.").send("read")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "Access denied" in text_of(part.outcome)  # type: ignore[arg-type]


async def test_filesystem_media_file_goes_to_the_model_once_as_an_image(filesystem: tuple[MCPServer, Path]) -> None:
    """Before: the image went as an image block and again as base64 in the structured content's JSON text."""
    server, root = filesystem
    (root / "pixel.png").write_bytes(PIXEL)
    outcome = await run(server, "read_media_file", {"path": str(root / "pixel.png")})
    encoded = base64.b64encode(PIXEL).decode()
    (image,) = outcome.attachments
    assert (image.mime_type, image.data) == ("image/png", encoded)
    assert encoded not in text_of(outcome)
    assert encoded[:40] not in text_of(outcome)


# --- server-memory --------------------------------------------------------------------------------------------------


async def test_memory_creates_entities_and_reads_the_graph(servers: Installed, tmp_path: Path) -> None:
    memory_file = tmp_path / "memory.jsonl"
    server = _npm_server(servers, MEMORY, env={"MEMORY_FILE_PATH": str(memory_file)})
    try:
        entities = [
            {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
            {"name": "Analytical Engine", "entityType": "machine", "observations": ["never built"]},
        ]
        await run(server, "create_entities", {"entities": entities})
        await run(
            server,
            "create_relations",
            {"relations": [{"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}]},
        )
        graph = (await run(server, "read_graph")).value
        assert isinstance(graph, dict)
        assert sorted(e["name"] for e in graph["entities"]) == ["Ada", "Analytical Engine"]
        assert graph["relations"] == [{"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}]
        found = (await run(server, "search_nodes", {"query": "program"})).value
        assert [e["name"] for e in found["entities"]] == ["Ada"]
        assert "wrote the first program" in memory_file.read_text()  # kept where it was told
    finally:
        await server.aclose()


# --- mcp-server-time ------------------------------------------------------------------------------------------------


async def test_time_server_tells_and_converts_time(servers: Installed) -> None:
    server = MCPServer.stdio(str(servers.python_command("mcp-server-time")), ["--local-timezone", "UTC"])
    try:
        now = await run(server, "get_current_time", {"timezone": "UTC"})
        told = now.value if isinstance(now.value, dict) else json.loads(str(now.value))
        assert told["timezone"] == "UTC"
        assert abs(datetime.fromisoformat(told["datetime"]) - datetime.now(timezone.utc)) < timedelta(minutes=5)
        # Zones without daylight saving time: the same answer on any day.
        converted = await run(
            server,
            "convert_time",
            {"source_timezone": "Asia/Tokyo", "time": "12:00", "target_timezone": "Asia/Kolkata"},
        )
        result = converted.value if isinstance(converted.value, dict) else json.loads(str(converted.value))
        assert result["source"]["datetime"].endswith("T12:00:00+09:00")
        assert result["target"]["datetime"].endswith("T08:30:00+05:30")
        assert result["time_difference"] == "-3.5h"
        reply = await session_for(server, call("get_current_time", {"timezone": "Mars/Olympus"}), "OK.").send("now")
        assert reply.tool_calls[0].state is ToolCallState.FAILED
        assert "Mars/Olympus" in text_of(reply.tool_calls[0].outcome)  # type: ignore[arg-type]
    finally:
        await server.aclose()


# --- mcp-server-git -------------------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


async def test_git_server_on_a_repository_of_its_own(servers: Installed, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Test Person")
    _git(repo, "config", "user.email", "test@example.com")
    (repo / "README.md").write_text("first\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "First commit")
    server = MCPServer.stdio(str(servers.python_command("mcp-server-git")), ["--repository", str(repo)])
    try:
        log = await run(server, "git_log", {"repo_path": str(repo)})
        assert "First commit" in text_of(log)
        (repo / "README.md").write_text("first\nsecond\n")
        status = await run(server, "git_status", {"repo_path": str(repo)})
        assert "modified:   README.md" in text_of(status)
        diff = await run(server, "git_diff_unstaged", {"repo_path": str(repo)})
        assert "+second" in text_of(diff)
        await run(server, "git_add", {"repo_path": str(repo), "files": ["README.md"]})
        await run(server, "git_commit", {"repo_path": str(repo), "message": "Second commit"})
        assert _git(repo, "log", "--format=%s").splitlines() == ["Second commit", "First commit"]
        assert _git(repo, "status", "--porcelain") == ""
        # A repository it was not given: refused, and the model is told.
        other = tmp_path / "other"
        reply = await session_for(server, call("git_status", {"repo_path": str(other)}), "OK.").send("status")
        assert reply.tool_calls[0].state is ToolCallState.FAILED
    finally:
        await server.aclose()


def test_the_npm_servers_run_on_the_pinned_node_22(servers: Installed) -> None:
    version = subprocess.run([str(servers.node), "--version"], check=True, capture_output=True, text=True).stdout
    assert version.startswith("v22."), version
