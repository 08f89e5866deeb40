"""Sources of tools in a registry (the seam MCP servers use): listed before every request, read from the last
listing in between, their failures the turn's clear error."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ai_widgets import ChatSession, RequestOptions, Tool, ToolChoice, ToolRegistry, tool
from ai_widgets.messages import MessageStatus, ToolCallState
from ai_widgets.tools import ToolSource
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport


@tool
def local(x: int) -> int:
    """A local tool."""
    return x


def make(name: str, result: str = "ok") -> Tool:
    @tool(name=name)
    def handler() -> str:
        """A tool from the source."""
        return result

    return handler


class FakeSource:
    """A source whose tools the test changes; counts how often it is asked."""

    def __init__(self, *tools: Tool, label: str = "fake") -> None:
        self.tools = list(tools)
        self.asked = 0
        self.error: Exception | None = None
        self.label = label

    async def list_tools(self) -> Sequence[Tool]:
        self.asked += 1
        if self.error is not None:
            raise self.error
        return list(self.tools)

    def __repr__(self) -> str:
        return f"FakeSource({self.label!r})"


async def test_a_source_is_listed_on_refresh_and_read_between() -> None:
    source = FakeSource(make("remote"))
    assert isinstance(source, ToolSource)
    registry = ToolRegistry([local, source])
    assert registry.sources == [source]
    assert registry.names() == ["local"]  # nothing listed yet
    changes: list[list[str]] = []
    registry.subscribe(lambda r: changes.append(r.names()))
    await registry.refresh()
    assert registry.names() == ["local", "remote"]
    assert registry.get("REMOTE") is source.tools[0]
    assert "remote" in registry
    assert len(registry) == 2
    assert [d.name for d in registry.definitions()] == ["local", "remote"]
    await registry.refresh()  # nothing changed: listeners are not told again
    assert changes == [["local", "remote"]]
    source.tools.append(make("second"))
    await registry.refresh()
    assert changes[-1] == ["local", "remote", "second"]
    copy = ToolRegistry(registry)
    assert copy.sources == [source]
    assert copy.names() == ["local"]  # a copy lists its sources itself
    registry.remove(source)
    assert registry.names() == ["local"]
    with pytest.raises(KeyError):
        registry.remove(source)


async def test_a_clash_names_both(caplog: pytest.LogCaptureFixture) -> None:
    # A registered tool wins over a source's tool of its name (once an error that failed every turn), said once.
    source = FakeSource(make("LOCAL"), make("other"), label="a")
    registry = ToolRegistry([local, source])
    await registry.refresh()
    await registry.refresh()
    assert registry.names() == ["local", "other"]
    assert registry["local"] is local
    (said,) = [r.getMessage() for r in caplog.records if "not offered" in r.getMessage()]
    assert "'LOCAL' of FakeSource('a')" in said
    assert "registered tool 'local'" in said
    registry = ToolRegistry([FakeSource(make("same"), label="a"), FakeSource(make("same"), label="b")])
    with pytest.raises(ValueError, match=r"offered by both FakeSource\('a'\) and FakeSource\('b'\)"):
        await registry.refresh()


async def test_the_session_lists_sources_before_every_request() -> None:
    source = FakeSource(make("remote", "from the source"))
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name="remote")]), lambda r: r.tool_results()[0].outcome.value]  # type: ignore[union-attr,return-value]
    )
    session = ChatSession(transport, tools=[source])
    reply = await session.send("go")
    assert reply.status is MessageStatus.COMPLETED
    assert reply.tool_calls[0].state is ToolCallState.COMPLETED
    assert reply.text == "from the source"
    assert source.asked == 2  # one listing per request
    assert [d.name for d in transport.requests[0].tools] == ["remote"]

    # With tools off, nothing is asked.
    quiet = ChatSession(
        ScriptedTransport(["hi"]), tools=[source], request_options=RequestOptions(tool_choice=ToolChoice.NONE)
    )
    await quiet.send("hello")
    assert source.asked == 2


async def test_a_source_that_fails_is_the_turns_error_and_the_model_is_not_asked() -> None:
    source = FakeSource()
    source.error = RuntimeError("the server 'x' could not start")
    transport = ScriptedTransport(["never"])
    session = ChatSession(transport, tools=[source])
    reply = await session.send("go")
    assert reply.status is MessageStatus.ERROR
    assert reply.error == "The tools could not be listed: RuntimeError: the server 'x' could not start"
    assert transport.requests == []
    source.error = None
    reply = await session.send("again")  # the session goes on
    assert reply.status is MessageStatus.COMPLETED


async def test_run_call_lists_the_sources_first() -> None:
    source = FakeSource(make("remote", "ran"))
    session = ChatSession(ScriptedTransport([]), tools=[source])
    reply = await session.run_call("remote")
    assert reply.tool_calls[0].outcome.value == "ran"  # type: ignore[union-attr]
