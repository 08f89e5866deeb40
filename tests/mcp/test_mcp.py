"""Tools from MCP servers (``ai_widgets.mcp.MCPServer``) against real servers written with the SDK.

The server (``tests.mcp.servers.server.py``) runs over stdio as a child process, and over streamable HTTP on a
loopback port in a thread of the test process. What a server cannot show from outside (a call it saw cancelled) it
writes to a log file. After every test no child process started by it is left (psutil).
"""

from __future__ import annotations

import asyncio
import base64
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets import (
    ApprovalDecision,
    ChatSession,
    DefaultApprovalPolicy,
    SessionOptions,
    ToolInvocation,
    ToolRegistry,
    ToolRisk,
    tool,
)
from ai_widgets.changes import SessionChange, ToolCallUpdated
from ai_widgets.mcp import MCPServer, MCPServerError
from ai_widgets.messages import MessageStatus, ToolCallState
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from ai_widgets.transports._history import outcome_images
from tests.helpers import NeverAsk, children, wait_for
from tests.mcp.mcp_harness import SCRIPT, call, log_lines, serving, stdio
from tests.mcp.servers.server import PIXEL

pytestmark = pytest.mark.slow  # each server is a process to start (about a second)


@pytest.fixture(scope="module")
def shared_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "shared.log"


@pytest.fixture(scope="module")
def shared(shared_log: Path) -> Iterator[MCPServer]:
    """One stdio server for the tests that leave it as they found it; used from each test's own event loop, as a
    server is from the kernel's loop and from ``ask_sync``'s. Closed synchronously at the end."""
    server = stdio(shared_log)
    asyncio.run(server.list_tools())  # started here, so the per-test check of child processes does not see it
    yield server
    server.close()
    assert not server.connected


@pytest.fixture
async def own(tmp_path: Path) -> AsyncIterator[tuple[MCPServer, Path]]:
    """A stdio server of this test's own (for a test that changes it or stops it)."""
    log = tmp_path / "own.log"
    server = stdio(log)
    try:
        yield server, log
    finally:
        await server.aclose()


# --- listing ------------------------------------------------------------------------------------------------------------


async def test_tools_are_listed_with_risk_from_annotations_and_the_title(shared: MCPServer) -> None:
    tools = {t.name: t.definition for t in await shared.list_tools()}
    assert tools["add"].risk is ToolRisk.READ_ONLY  # readOnlyHint
    assert tools["append_note"].risk is ToolRisk.NORMAL  # destructiveHint: false
    assert tools["delete_all"].risk is ToolRisk.DESTRUCTIVE  # no annotations: the MCP default
    assert tools["wipe"].risk is ToolRisk.DESTRUCTIVE  # destructiveHint: true
    assert tools["add"].title == "Add two numbers"  # the annotations' title is the card's
    assert tools["wipe"].title == "Wipe the disk"
    assert not any(d.requires_approval for d in tools.values())
    assert tools["add"].description == "Adds two numbers."
    assert tools["add"].parameters["required"] == ["a", "b"]
    assert tools["add"].parameters["properties"]["a"]["type"] == "integer"
    # An MCP name a provider would refuse is made one it accepts.
    assert "dotted_name" in tools
    assert shared.name == "test-server"  # what the server calls itself


async def test_by_default_annotations_are_not_trusted_and_every_tool_asks(tmp_path: Path) -> None:
    server = MCPServer.stdio(sys.executable, [SCRIPT], env={"AIW_MCP_LOG": str(tmp_path / "log")})
    assert server.trust_annotations is False
    try:
        tools = {t.name: t.definition for t in await server.list_tools()}
    finally:
        await server.aclose()
    assert all(d.requires_approval for d in tools.values())
    assert all(d.risk is ToolRisk.DESTRUCTIVE for d in tools.values())  # no claim lowers the shown risk
    assert tools["add"].title == "Add two numbers"  # the title is still the server's
    policy = DefaultApprovalPolicy()
    for name in ("add", "erase_notes", "append_note"):
        assert await policy.requires_approval(tools[name], ToolInvocation("call_1", name))


async def test_a_destructive_tool_that_claims_to_be_read_only_waits_for_a_person_by_default(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = MCPServer.stdio(sys.executable, [SCRIPT], env={"AIW_MCP_LOG": str(log)})
    session = ChatSession(
        ScriptedTransport([call("erase_notes"), "Done.", call("erase_notes"), "Again."]), tools=[server]
    )
    try:
        task = asyncio.create_task(session.send("show my notes"))
        await wait_for(lambda: bool(session.pending_approvals))
        (part,) = session.pending_approvals
        assert part.tool_name == "erase_notes"
        assert not log.exists() or "erased" not in log.read_text()  # nothing ran unasked
        session.approve(part.tool_call_id, "approved_always")
        reply = await task
        assert reply.tool_calls[0].state is ToolCallState.COMPLETED
        assert log.read_text().count("erased") == 1
        # Allow always holds per tool: the next call of the same tool runs unasked, and says why.
        again = await session.send("and again")
        assert again.tool_calls[0].state is ToolCallState.COMPLETED
        assert again.tool_calls[0].decision_remembered
        assert log.read_text().count("erased") == 2
    finally:
        await server.aclose()


async def test_trusted_annotations_let_a_read_only_claim_run_unasked(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = MCPServer.stdio(sys.executable, [SCRIPT], env={"AIW_MCP_LOG": str(log)}, trust_annotations=True)
    session = ChatSession(ScriptedTransport([call("erase_notes"), "Done."]), tools=[server])
    try:
        reply = await asyncio.wait_for(session.send("show my notes"), 30)
    finally:
        await server.aclose()
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED  # the person vouched for the server
    assert not reply.tool_calls[0].decision_remembered
    assert log.read_text().count("erased") == 1


async def test_a_tool_allowed_always_asks_again_once_the_server_changes_its_definition(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = MCPServer.stdio(sys.executable, [SCRIPT], env={"AIW_MCP_LOG": str(log)})
    script = [call("erase_notes"), "Done.", call("rewrite"), "Rewritten.", call("erase_notes"), "Asked."]
    session = ChatSession(ScriptedTransport(script), tools=[server])
    try:
        first = asyncio.create_task(session.send("show my notes"))
        await wait_for(lambda: bool(session.pending_approvals))
        session.approve(session.pending_approvals[0].tool_call_id, "approved_always")
        await first
        second = asyncio.create_task(session.send("rewrite it"))
        await wait_for(lambda: bool(session.pending_approvals))
        session.approve(session.pending_approvals[0].tool_call_id, "approved")
        await second
        third = asyncio.create_task(session.send("show them again"))
        await wait_for(lambda: bool(session.pending_approvals))
        (part,) = session.pending_approvals
        assert part.tool_name == "erase_notes"
        assert "changed since you allowed it always (its description): allow it again?" in (part.approval_reason or "")
        assert log.read_text().count("erased") == 1  # the changed tool has not run
        session.approve(part.tool_call_id, "rejected")
        await third
    finally:
        await server.aclose()


async def test_a_tool_allowed_always_asks_again_when_only_its_annotations_change(tmp_path: Path) -> None:
    """Annotations are claims a server may change to look harmless: a change of them alone asks again, saying so,
    even though they decide nothing for a server nobody vouched for."""
    log = tmp_path / "log"
    server = MCPServer.stdio(sys.executable, [SCRIPT], env={"AIW_MCP_LOG": str(log)})
    script = [call("erase_notes"), "Done.", call("reannotate"), "Changed.", call("erase_notes"), "Asked."]
    session = ChatSession(ScriptedTransport(script), tools=[server])
    try:
        before = {t.name: t.definition for t in await server.list_tools()}["erase_notes"]
        assert before.annotations == {"title": "Show the notes", "readOnlyHint": True}
        first = asyncio.create_task(session.send("show my notes"))
        await wait_for(lambda: bool(session.pending_approvals))
        session.approve(session.pending_approvals[0].tool_call_id, "approved_always")
        await first
        second = asyncio.create_task(session.send("change it"))
        await wait_for(lambda: bool(session.pending_approvals))
        session.approve(session.pending_approvals[0].tool_call_id, "approved")
        await second
        after = {t.name: t.definition for t in await server.list_tools()}["erase_notes"]
        assert (after.description, after.parameters, after.risk) == (before.description, before.parameters, before.risk)
        third = asyncio.create_task(session.send("show them again"))
        await wait_for(lambda: bool(session.pending_approvals))
        (part,) = session.pending_approvals
        assert "changed since you allowed it always (its annotations): allow it again?" in (part.approval_reason or "")
        assert log.read_text().count("erased") == 1
        session.approve(part.tool_call_id, "rejected")
        await third
    finally:
        await server.aclose()


async def test_listing_again_is_cheap_while_nothing_changed(shared: MCPServer) -> None:
    first = await shared.list_tools()
    started = time.perf_counter()
    for _ in range(500):
        again = await shared.list_tools()
    elapsed = time.perf_counter() - started
    assert [t.name for t in again] == [t.name for t in first]
    assert elapsed < 0.1, f"500 listings took {elapsed:.3f} s: the listing is not cached"


async def test_a_prefix_keeps_two_servers_apart_and_a_clash_is_a_clear_error(shared: MCPServer, tmp_path: Path) -> None:
    prefixed = stdio(tmp_path / "b.log", prefix="b")
    clashing = stdio(tmp_path / "c.log", name="second copy")
    try:
        registry = ToolRegistry([shared, prefixed])
        assert registry.add(prefixed) is prefixed
        assert registry.sources == [shared, prefixed]
        await registry.refresh()
        assert "add" in registry
        assert "b_add" in registry
        assert registry.get("B_ADD") is not None
        assert registry["b_add"].definition.risk is ToolRisk.READ_ONLY
        assert "b_dotted_name" in registry.names()

        registry.add(clashing)
        with pytest.raises(ValueError, match="offered by both") as raised:
            await registry.refresh()
        assert "test-server" in str(raised.value)
        assert "second copy" in str(raised.value)

        # In a session the clash is the turn's error, before anything is asked of the model.
        transport = ScriptedTransport(["never"])
        reply = await ChatSession(transport, tools=registry).send("hi")
        assert reply.status is MessageStatus.ERROR
        assert "could not be listed" in (reply.error or "")
        assert "prefix" in (reply.error or "")
        assert transport.requests == []

        registry.remove(clashing)
        await registry.refresh()
        assert "b_add" in registry
    finally:
        await prefixed.aclose()
        await clashing.aclose()


# --- calls through a session ------------------------------------------------------------------------------------------


async def test_a_call_through_a_session(shared: MCPServer) -> None:
    @tool
    def get_weather(city: str) -> str:
        """The weather."""
        return f"sunny in {city}"

    transport = ScriptedTransport(
        [
            ScriptedReply(
                tool_calls=[
                    ScriptedToolCall(name="add", arguments={"a": 2, "b": 3}),
                    ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon"}),
                ]
            ),
            lambda request: f"The sum is {request.tool_results()[0].outcome.value['result']}.",  # type: ignore[union-attr]
        ]
    )
    session = ChatSession(transport, tools=[get_weather, shared])
    reply = await session.send("Add 2 and 3")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    added, weather = reply.tool_calls
    assert added.state is ToolCallState.COMPLETED
    assert added.outcome is not None
    assert added.outcome.value == {"result": 5}  # the structured content
    assert weather.state is ToolCallState.COMPLETED
    assert reply.text == "The sum is 5."
    offered = [d.name for d in transport.requests[0].tools]
    assert offered[0] == "get_weather"
    assert "add" in offered
    assert "delete_all" in offered
    # Invalid arguments never reach the server: checked against its schema first.
    transport2 = ScriptedTransport([call("add", {"a": "two", "b": 3}), "ok"])
    bad = await ChatSession(transport2, tools=[shared]).send("again")
    part = bad.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "Invalid arguments for add" in (part.outcome.message or "")


async def test_a_destructive_tool_waits_for_approval(shared: MCPServer, shared_log: Path) -> None:
    transport = ScriptedTransport([call("delete_all"), "Deleted.", call("delete_all"), "Not deleted."])
    session = ChatSession(transport, tools=[shared])
    turn = asyncio.ensure_future(session.send("delete everything"))
    await wait_for(lambda: bool(session.pending_approvals), timeout=20)
    part = session.pending_approvals[0]
    assert part.state is ToolCallState.AWAITING_APPROVAL
    assert "deleted all" not in log_lines(shared_log)  # nothing ran while it waits
    session.approve(part.tool_call_id, ApprovalDecision.APPROVED)
    reply = await asyncio.wait_for(turn, 20)
    assert part.state is ToolCallState.COMPLETED
    assert reply.status is MessageStatus.COMPLETED
    assert log_lines(shared_log).count("deleted all") == 1

    turn = asyncio.ensure_future(session.send("and again"))
    await wait_for(lambda: bool(session.pending_approvals), timeout=20)
    session.approve(session.pending_approvals[0].tool_call_id, ApprovalDecision.REJECTED, "no")
    reply = await asyncio.wait_for(turn, 20)
    assert reply.tool_calls[0].state is ToolCallState.REJECTED
    assert log_lines(shared_log).count("deleted all") == 1  # the declined call never reached the server

    # A tool that says it only adds runs unasked.
    transport = ScriptedTransport([call("append_note", {"text": "kept"}), "Noted."])
    reply = await ChatSession(transport, tools=[shared]).send("note it")
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.tool_calls[0].decision is None
    assert "note kept" in log_lines(shared_log)


async def test_an_error_result_is_a_failure_the_model_sees(shared: MCPServer) -> None:
    transport = ScriptedTransport([call("fail", {"reason": "the disk is full"}), "Sorry."])
    reply = await ChatSession(transport, tools=[shared], approval_policy=NeverAsk()).send("try")
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert "the disk is full" in (part.outcome.message or "")
    told = transport.requests[1].tool_results()[0]
    assert "the disk is full" in told.outcome.model_content()  # type: ignore[union-attr]


async def test_progress_from_the_server_moves_the_card(shared: MCPServer) -> None:
    seen: list[tuple[float | None, str | None]] = []

    def watch(change: SessionChange) -> None:
        if isinstance(change, ToolCallUpdated) and change.part.progress is not None:
            progress = (change.part.progress.fraction, change.part.progress.message)
            if not seen or seen[-1] != progress:
                seen.append(progress)

    transport = ScriptedTransport([call("slow", {"steps": 4}), "Done."])
    session = ChatSession(transport, tools=[shared], approval_policy=NeverAsk())
    session.subscribe(watch)
    reply = await session.send("go")
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.tool_calls[0].outcome.value == "done after 4 steps"  # type: ignore[union-attr]
    assert seen == [(0.25, "step 1 of 4"), (0.5, "step 2 of 4"), (0.75, "step 3 of 4"), (1.0, "step 4 of 4")]


async def test_images_structured_content_and_resource_links(shared: MCPServer) -> None:
    session = ChatSession(ScriptedTransport([]), tools=[shared], approval_policy=NeverAsk())

    picture = (await session.run_call("picture")).tool_calls[0].outcome
    assert picture is not None
    assert picture.ok
    assert picture.value == "A red pixel."
    (image,) = picture.attachments  # the library's image type: an attachment the card shows as an image
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data or "") == PIXEL

    forecast = (await session.run_call("forecast", {"city": "Lisbon"})).tool_calls[0].outcome
    assert forecast is not None
    assert forecast.value == {"city": "Lisbon", "sky": "clear", "high": 24}
    assert forecast.model_content() == '{"city":"Lisbon","sky":"clear","high":24}'

    sources = (await session.run_call("sources")).tool_calls[0].outcome
    assert sources is not None
    assert sources.value == "See the manual.\nResource link: manual <https://example.com/manual>"
    (citation,) = sources.citations
    assert citation.url == "https://example.com/manual"
    assert citation.title == "The manual"


async def test_a_result_of_links_alone_names_them_to_the_model(shared: MCPServer) -> None:
    """Before: a result with no text reached the model empty; a blob resource was unnamed."""
    session = ChatSession(ScriptedTransport([]), tools=[shared], approval_policy=NeverAsk())
    outcome = (await session.run_call("link_only")).tool_calls[0].outcome
    assert outcome is not None
    assert outcome.value == (
        "Resource link: report <file:///srv/report.pdf> (application/pdf)\n"
        "Embedded resource: <file:///srv/data.bin> (application/octet-stream), 4 bytes"
    )
    assert outcome.model_content() == outcome.value
    assert [c.url for c in outcome.citations] == ["file:///srv/report.pdf", "file:///srv/data.bin"]
    (blob,) = outcome.attachments
    assert (blob.mime_type, blob.data, blob.name) == ("application/octet-stream", "AAECAw==", "file:///srv/data.bin")


async def test_base64_in_structured_content_goes_to_the_model_once_as_an_image(shared: MCPServer) -> None:
    """Before: the image went as an image and again as base64 text in the structured content's JSON (on every later
    request); a data URL went as text."""
    session = ChatSession(ScriptedTransport([]), tools=[shared], approval_policy=NeverAsk())
    outcome = (await session.run_call("media_json")).tool_calls[0].outcome
    assert outcome is not None
    encoded = base64.b64encode(PIXEL).decode()
    assert outcome.value == {
        "content": [f"[image/png, {len(PIXEL)} bytes: sent as an attachment]"],
        "preview": f"[image/png, {len(PIXEL) * 8} bytes: sent as an attachment]",
    }
    assert [(a.mime_type, a.data) for a in outcome.attachments] == [
        ("image/png", encoded),  # the image block and its copy in the structured content: once
        ("image/png", base64.b64encode(PIXEL * 8).decode()),  # the data URL's picture
    ]
    text = outcome.model_content()
    assert encoded[:20] not in text
    assert "base64" not in text


async def test_content_for_the_user_alone_stays_on_the_card(shared: MCPServer) -> None:
    session = ChatSession(ScriptedTransport([]), tools=[shared], approval_policy=NeverAsk())
    part = (await session.run_call("private_note")).tool_calls[0]
    outcome = part.outcome
    assert outcome is not None
    assert outcome.value == "Saved."  # for the model
    assert outcome.text == "Receipt 4471 for you alone."  # the card's
    (image,) = outcome.attachments
    assert image.card_only
    assert outcome_images(part, max_chars=10**6) == []  # the model gets no image
    assert "4471" not in outcome.model_content()

    alone = (await session.run_call("user_only")).tool_calls[0].outcome
    assert alone is not None
    assert alone.text == "Only you see this."
    assert alone.model_content() == "The result was shown to the person only."


async def test_check_does_not_ask_an_mcp_tool_for_a_docstring(shared: MCPServer) -> None:
    tools = {t.name: t for t in await shared.list_tools()}
    warnings = [str(w) for w in tools["add"].check()]
    assert warnings  # its parameters a and b have no descriptions
    assert all("docstring" not in w for w in warnings)
    assert all(
        "the tool is described by the MCP server 'test-server', which alone can add one" in w for w in warnings
    ), warnings


async def test_one_server_serves_turns_on_different_event_loops(shared: MCPServer) -> None:
    """As from the kernel's loop and from ask_sync's private loop thread, at the same time."""
    add = next(t for t in await shared.list_tools() if t.name == "add")

    async def one(a: int) -> Any:
        return (await add.invoke(ToolInvocation(f"call_{a}", "add", parsed_arguments={"a": a, "b": 1}))).value

    elsewhere = asyncio.to_thread(asyncio.run, one(10))
    here, there = await asyncio.gather(one(1), elsewhere)
    assert (here, there) == ({"result": 2}, {"result": 11})


# --- cancellation -------------------------------------------------------------------------------------------------------


async def _running(session: ChatSession, log: Path, waiting_before: int) -> str:
    await wait_for(lambda: log_lines(log).count("waiting") > waiting_before, timeout=20)
    turn = session._turn
    assert turn is not None
    part = turn.reply.tool_calls[0]
    assert part.state is ToolCallState.RUNNING
    return part.tool_call_id


async def test_cancelling_a_call_cancels_it_on_the_server(shared: MCPServer, shared_log: Path) -> None:
    transport = ScriptedTransport([call("wait_forever"), "Cancelled, as you asked."])
    session = ChatSession(transport, tools=[shared], approval_policy=NeverAsk())
    cancelled_before = log_lines(shared_log).count("cancelled")
    turn = asyncio.ensure_future(session.send("wait"))
    call_id = await _running(session, shared_log, log_lines(shared_log).count("waiting"))
    session.cancel(call_id, "too slow")
    reply = await asyncio.wait_for(turn, 20)
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED
    assert reply.status is MessageStatus.COMPLETED
    await wait_for(lambda: log_lines(shared_log).count("cancelled") > cancelled_before, timeout=10)

    # Stop (the whole turn) too.
    transport = ScriptedTransport([call("wait_forever")])
    session = ChatSession(transport, tools=[shared], approval_policy=NeverAsk())
    cancelled_before = log_lines(shared_log).count("cancelled")
    turn = asyncio.ensure_future(session.send("wait"))
    await _running(session, shared_log, log_lines(shared_log).count("waiting"))
    assert session.stop()
    reply = await asyncio.wait_for(turn, 20)
    assert reply.status is MessageStatus.CANCELLED
    assert reply.tool_calls[0].state is ToolCallState.CANCELLED
    await wait_for(lambda: log_lines(shared_log).count("cancelled") > cancelled_before, timeout=10)
    # The server is still there for the next call.
    reply = await ChatSession(ScriptedTransport([call("add", {"a": 1, "b": 1}), "2"]), tools=[shared]).send("add")
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED


async def test_a_call_timeout_fails_the_call_and_cancels_it_on_the_server(tmp_path: Path) -> None:
    log = tmp_path / "log"
    server = stdio(log, call_timeout=1)
    try:
        transport = ScriptedTransport([call("wait_forever"), "It took too long."])
        reply = await ChatSession(transport, tools=[server], approval_policy=NeverAsk()).send("wait")
        part = reply.tool_calls[0]
        assert part.state is ToolCallState.FAILED
        assert "did not finish the call of wait_forever within 1 seconds" in (part.outcome.message or "")  # type: ignore[union-attr]
        await wait_for(lambda: "cancelled" in log_lines(log), timeout=10)
    finally:
        await server.aclose()


# --- a changing server ----------------------------------------------------------------------------------------------------


async def test_the_tools_follow_list_changed(own: tuple[MCPServer, Path]) -> None:
    server, _ = own
    transport = ScriptedTransport([call("grow"), "Grown.", call("extra"), "Extra ran."])
    session = ChatSession(transport, tools=[server], approval_policy=NeverAsk())
    reply = await session.send("grow")
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert "extra" not in [d.name for d in transport.requests[0].tools]
    deadline = time.monotonic() + 10
    while "extra" not in [t.name for t in await server.list_tools()]:
        assert time.monotonic() < deadline, "the new tool never showed: notifications/tools/list_changed not followed"
        await asyncio.sleep(0.05)
    reply = await session.send("use the new one")
    assert "extra" in [d.name for d in transport.requests[-2].tools]
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.tool_calls[0].outcome.value == "extra!"  # type: ignore[union-attr]


async def test_env_and_cwd_reach_a_stdio_server(tmp_path: Path) -> None:
    server = stdio(tmp_path / "log", env={"AIW_MCP_MARK": "marked"}, cwd=tmp_path)
    try:
        reply = await ChatSession(ScriptedTransport([]), tools=[server], approval_policy=NeverAsk()).run_call("where")
    finally:
        await server.aclose()
    outcome = reply.tool_calls[0].outcome
    assert outcome is not None
    assert outcome.value == f"{tmp_path}|marked"  # pytest's tmp_path is resolved already


# --- failures ---------------------------------------------------------------------------------------------------------------


async def test_a_server_that_exits_mid_call_fails_that_call_and_is_reaped(own: tuple[MCPServer, Path]) -> None:
    server, _ = own
    before = children()
    await server.list_tools()
    (crashing,) = children() - before
    transport = ScriptedTransport([call("crash"), "It crashed.", call("add", {"a": 1, "b": 2}), "3"])
    session = ChatSession(transport, tools=[server], approval_policy=NeverAsk())
    reply = await asyncio.wait_for(session.send("crash"), 20)
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert part.outcome is not None
    assert part.outcome.error is not None
    assert "test-server" in (part.outcome.message or "")
    assert "exited during the call of crash" in (part.outcome.message or "")
    assert "about to crash: boom" in part.outcome.error.message  # the end of its stderr, for the person
    assert reply.status is MessageStatus.COMPLETED  # the model was told, and answered
    deadline = time.monotonic() + 10
    while crashing in children():  # a zombie too: the process must be reaped, not only dead
        assert time.monotonic() < deadline, "the crashed server was not reaped"
        await asyncio.sleep(0.05)
    # The next use starts it again (the turn's second request already listed its tools from a new process).
    reply = await asyncio.wait_for(session.send("add"), 20)
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED, reply.tool_calls[0].outcome
    assert len(children() - before) == 1


async def test_closing_during_a_call_fails_that_call(own: tuple[MCPServer, Path]) -> None:
    server, log = own
    transport = ScriptedTransport([call("wait_forever"), "It was closed."])
    session = ChatSession(transport, tools=[server], approval_policy=NeverAsk())
    turn = asyncio.ensure_future(session.send("wait"))
    await _running(session, log, 0)
    await asyncio.wait_for(server.aclose(), 20)
    reply = await asyncio.wait_for(turn, 20)
    part = reply.tool_calls[0]
    assert part.state is ToolCallState.FAILED
    assert "was closed during the call of wait_forever" in (part.outcome.message or "")  # type: ignore[union-attr]
    assert not server.connected


async def test_a_server_that_cannot_start_is_the_turns_clear_error(tmp_path: Path) -> None:
    missing = MCPServer.stdio(str(tmp_path / "no-such-server"), name="missing")
    transport = ScriptedTransport(["never"])
    reply = await ChatSession(transport, tools=[missing]).send("hi")
    assert reply.status is MessageStatus.ERROR
    assert "'missing' could not start" in (reply.error or "")
    assert "no-such-server" in (reply.error or "")
    assert transport.requests == []
    await missing.aclose()

    quitter = stdio(tmp_path / "log", env={"AIW_MCP_EXIT_AT_START": "1"}, name="quitter")
    try:
        reply = await ChatSession(ScriptedTransport(["never"]), tools=[quitter]).send("hi")
        assert reply.status is MessageStatus.ERROR
        assert "'quitter' exited before it was ready" in (reply.error or "")
        assert "refusing to start" in (reply.error or "")  # its stderr says why
        with pytest.raises(MCPServerError, match="quitter"):
            async with quitter:
                pass
    finally:
        await quitter.aclose()


async def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    mute = MCPServer.stdio(sys.executable, ["-c", "import time; time.sleep(60)"], name="mute", timeout=1)
    try:
        started = time.monotonic()
        with pytest.raises(MCPServerError, match="'mute' did not start and answer within 1 seconds"):
            await mute.list_tools()
        assert time.monotonic() - started < 10
    finally:
        await mute.aclose()


async def test_async_with_connects_and_closes(tmp_path: Path) -> None:
    before = children()
    async with stdio(tmp_path / "log") as server:
        assert server.connected
        assert len(children() - before) == 1  # its process
    assert not server.connected
    assert children() - before == set()  # reaped by the close


# --- streamable HTTP ---------------------------------------------------------------------------------------------------------


@dataclass
class HttpServer:
    url: str
    log: Path
    headers: list[dict[str, str]] = field(default_factory=list)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    """The test server over streamable HTTP on a free loopback port, in a thread."""
    from tests.mcp.servers.server import build

    log = tmp_path / "http.log"
    app = build(str(log)).streamable_http_app()
    seen: list[dict[str, str]] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append({k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]})
        await app(scope, receive, send)

    with serving(recording) as port:
        yield HttpServer(url=f"http://127.0.0.1:{port}/mcp", log=log, headers=seen)


async def test_http_server_listing_calls_progress_and_headers(http_server: HttpServer) -> None:
    server = MCPServer.http(http_server.url, headers={"X-Test-Token": "sesame"}, prefix="web", trust_annotations=True)
    try:
        tools = {t.name: t.definition for t in await server.list_tools()}
        assert tools["web_add"].risk is ToolRisk.READ_ONLY
        assert tools["web_delete_all"].risk is ToolRisk.DESTRUCTIVE
        assert any(h.get("x-test-token") == "sesame" for h in http_server.headers)

        seen: list[float | None] = []
        transport = ScriptedTransport(
            [
                ScriptedReply(
                    tool_calls=[
                        ScriptedToolCall(name="web_add", arguments={"a": 20, "b": 22}),
                        ScriptedToolCall(name="web_slow", arguments={"steps": 2}),
                    ]
                ),
                "42",
            ]
        )
        session = ChatSession(transport, tools=[server], approval_policy=NeverAsk())
        session.subscribe(
            lambda c: (
                seen.append(c.part.progress.fraction)
                if isinstance(c, ToolCallUpdated) and c.part.progress is not None
                else None
            )
        )
        reply = await session.send("add")
        added, slow = reply.tool_calls
        assert added.outcome is not None
        assert added.outcome.value == {"result": 42}
        assert slow.state is ToolCallState.COMPLETED
        assert 1.0 in seen
        assert 0.5 in seen
    finally:
        await server.aclose()


async def test_http_cancel_reaches_the_server(http_server: HttpServer) -> None:
    server = MCPServer.http(http_server.url, trust_annotations=True)
    try:
        transport = ScriptedTransport([call("wait_forever"), "Cancelled."])
        session = ChatSession(transport, tools=[server], approval_policy=NeverAsk())
        turn = asyncio.ensure_future(session.send("wait"))
        call_id = await _running(session, http_server.log, 0)
        session.cancel(call_id)
        reply = await asyncio.wait_for(turn, 20)
        assert reply.tool_calls[0].state is ToolCallState.CANCELLED
        await wait_for(lambda: "cancelled" in log_lines(http_server.log), timeout=10)
    finally:
        await server.aclose()


async def test_an_unreachable_http_server_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    server = MCPServer.http(f"http://user:secret@127.0.0.1:{port}/mcp", name="nowhere", timeout=5)
    try:
        reply = await ChatSession(ScriptedTransport(["never"]), tools=[server]).send("hi")
    finally:
        await server.aclose()
    assert reply.status is MessageStatus.ERROR
    error = reply.error or ""
    assert "'nowhere' could not be reached" in error
    assert f"127.0.0.1:{port}" in error
    assert "secret" not in error


# --- the widget ------------------------------------------------------------------------------------------------------------


async def test_chat_widget_takes_a_server_among_its_tools(shared: MCPServer) -> None:
    from ai_widgets.widget import ChatWidget
    from tests.widget.widget_harness import recording_comms

    @tool
    def get_weather(city: str) -> str:
        """The weather."""
        return "sunny"

    with recording_comms():
        chat = ChatWidget(
            transport=ScriptedTransport([call("add", {"a": 1, "b": 2}), "3"]),
            tools=[get_weather, shared],  # type: ignore[list-item]
            options=SessionOptions(),
        )
        assert chat.session.tools.sources == [shared]
        reply = await chat.session.send("add")
        assert reply.tool_calls[0].state is ToolCallState.COMPLETED
        assert chat._tools["add"]["risk"] == "read_only"  # the card's definition, from the listing
        assert chat._tools["add"]["title"] == "Add two numbers"


def test_listing_from_synchronous_code_and_a_closed_server_restarts(tmp_path: Path) -> None:
    server = stdio(tmp_path / "log")
    try:
        names = [t.name for t in asyncio.run(server.list_tools())]
        assert "add" in names
        server.close()
        assert not server.connected
        assert "add" in [t.name for t in asyncio.run(server.list_tools())]  # the next use connects again
    finally:
        server.close()


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match="prefix"):
        MCPServer.stdio("python", prefix="bad prefix")
    with pytest.raises(TypeError, match="list of strings"):
        MCPServer.stdio("python", "server.py")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="http"):
        MCPServer.http("ftp://example.com")
    assert repr(MCPServer.http("http://user:pw@example.com:8080/mcp?key=1")) == "MCPServer('example.com:8080/mcp')"


async def test_a_second_close_waits_until_the_process_is_reaped() -> None:
    """Before: a close asked for while another was under way returned at once, with the process still running."""
    before = children()
    server = MCPServer.stdio(sys.executable, [SCRIPT])
    await server.list_tools()
    assert len(children() - before) == 1
    first = asyncio.create_task(server.aclose())
    await asyncio.sleep(0.01)
    await asyncio.wait_for(server.aclose(), 30)
    assert children() - before == set()
    await first
    await asyncio.to_thread(server.close)  # and a close of a closed server returns at once
