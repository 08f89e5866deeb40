"""An ACP agent's ``session/update`` notifications as stream events (``integrations._acp_updates``): each kind of
update, a repeated ``tool_call`` as an update, call names (Claude Code, Gemini CLI, the kind), the agent's running
cost as each request's change, and nothing while a loaded session replays."""

from __future__ import annotations

from decimal import Decimal

import pytest

pytest.importorskip("acp")

from acp import plan_entry as agent_plan_entry
from acp import (
    start_edit_tool_call,
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
from acp.schema import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    Cost,
    ImageContentBlock,
    PromptResponse,
    ResourceContentBlock,
    ToolCallLocation,
    ToolCallUpdate,
    Usage,
)
from acp.schema import UsageUpdate as AgentUsage

from ai_widgets.events import (
    PlanUpdated,
    ProviderToolResult,
    ReasoningDelta,
    TextDelta,
    ToolCallRevised,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.integrations._acp_updates import PROVIDER, UpdateMapper
from ai_widgets.messages import CallDiff, CallLocation, CallTerminal, CallText, PlanEntry


def test_message_and_thought_chunks_are_text_and_reasoning() -> None:
    mapper = UpdateMapper()
    assert mapper.map(update_agent_message_text("Hello")) == [TextDelta("Hello")]
    assert mapper.map(update_agent_thought_text("hmm")) == [ReasoningDelta("hmm")]
    assert mapper.map(update_agent_message_text("")) == []  # Claude Code's empty first chunk adds nothing


def test_non_text_chunks_are_said_in_a_few_words() -> None:
    mapper = UpdateMapper()
    link = AgentMessageChunk(
        session_update="agent_message_chunk",
        content=ResourceContentBlock(type="resource_link", uri="file:///a", name="a"),
    )
    image = AgentMessageChunk(
        session_update="agent_message_chunk",
        content=ImageContentBlock(type="image", data="AAAA", mime_type="image/png"),
    )
    assert mapper.map(link) == [TextDelta("[a](file:///a)")]
    assert mapper.map(image) == [TextDelta("[image: image/png]")]


def test_replayed_user_messages_commands_and_everything_while_replaying_map_to_nothing() -> None:
    mapper = UpdateMapper()
    assert mapper.map(update_user_message_text("earlier question")) == []
    assert mapper.map(AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[])) == []
    mapper.replaying = True
    assert mapper.map(update_agent_message_text("an old answer")) == []
    assert mapper.map(start_tool_call("old", "Old call", status="completed")) == []
    assert "old" not in mapper.calls  # a replayed call is not one of this turn's


def test_a_tool_call_starts_a_provider_run_call_and_describes_it() -> None:
    mapper = UpdateMapper()
    start = start_edit_tool_call("c1", "Edit a.txt", "/w/a.txt", "new")
    events = mapper.map(start)
    assert events[0] == ToolCallStarted(
        c1 := "c1", "edit", '{"path": "/w/a.txt", "content": "new"}', provider_executed=True, provider=PROVIDER
    )
    assert events[1] == ToolCallRevised(
        c1, title="Edit a.txt", kind="edit", locations=(CallLocation("/w/a.txt"),), arguments=None, content=None
    )
    assert len(events) == 2  # pending: no progress yet


def test_a_repeated_tool_call_for_the_same_id_is_an_update() -> None:
    """Claude Code sends ``tool_call`` twice for one write, the second with the diff."""
    mapper = UpdateMapper()
    first = start_tool_call("toolu_1", "Write", kind="edit", raw_input={})
    first.field_meta = {"claudeCode": {"toolName": "mcp__acp__Write"}}
    second = start_tool_call(
        "toolu_1",
        "Write /w/a.txt",
        kind="edit",
        content=[tool_diff_content("/w/a.txt", "new\n", "old\n")],
        locations=[ToolCallLocation(path="/w/a.txt", line=1)],
        raw_input={"file_path": "/w/a.txt", "content": "new\n"},
    )
    (started, _) = mapper.map(first)
    assert started == ToolCallStarted("toolu_1", "mcp__acp__Write", "{}", provider_executed=True, provider=PROVIDER)
    assert mapper.map(second) == [
        ToolCallRevised(
            "toolu_1",
            title="Write /w/a.txt",
            kind="edit",
            locations=(CallLocation("/w/a.txt", 1),),
            arguments='{"file_path": "/w/a.txt", "content": "new\\n"}',
            content=(CallDiff("/w/a.txt", "old\n", "new\n"),),
        )
    ]


@pytest.mark.parametrize(
    ("call_id", "kind", "name"),
    [
        ("write_file__write_file_1796411650430_0", "edit", "write_file"),
        ("mcp_kernel_run_python__mcp_kernel_run_python_1796411865540_0", "other", "mcp_kernel_run_python"),
        ("call-7", "execute", "execute"),
        ("call-8", None, "tool"),
    ],
)
def test_a_call_is_named_by_the_agents_tool_where_it_says_else_by_its_kind(
    call_id: str, kind: str | None, name: str
) -> None:
    events = UpdateMapper().map(start_tool_call(call_id, "A title", kind=kind))  # type: ignore[arg-type]
    assert isinstance(events[0], ToolCallStarted)
    assert events[0].tool_name == name


def test_progress_then_completion_runs_and_ends_the_call_with_its_text() -> None:
    mapper = UpdateMapper()
    mapper.map(start_tool_call("c", "Run ls", kind="execute"))
    running = mapper.map(update_tool_call("c", status="in_progress"))
    assert running == [ToolProgressUpdate("c")]
    assert mapper.map(update_tool_call("c", status="in_progress")) == []  # said once
    done = mapper.map(update_tool_call("c", status="completed", content=[tool_content(agent_text("a.txt"))]))
    assert done[0] == ToolCallRevised("c", content=(CallText("a.txt"),))
    assert isinstance(done[1], ProviderToolResult)
    assert done[1].outcome.ok
    assert done[1].outcome.text == "a.txt"
    assert mapper.map(update_tool_call("c", status="completed")) == []  # nothing after its result


def test_a_failed_call_fails_with_its_raw_output_when_it_sent_no_text() -> None:
    mapper = UpdateMapper()
    mapper.map(start_tool_call("c", "Fetch"))
    (result,) = mapper.map(update_tool_call("c", status="failed", raw_output={"error": "timeout"}))
    assert isinstance(result, ProviderToolResult)
    assert not result.outcome.ok
    assert result.outcome.message == '{"error": "timeout"}'


def test_an_update_of_a_call_never_announced_starts_its_card() -> None:
    events = UpdateMapper().map(update_tool_call("late", title="Late", kind="read", status="completed"))
    assert isinstance(events[0], ToolCallStarted)
    assert events[0].tool_name == "read"
    assert isinstance(events[-1], ProviderToolResult)


def test_a_terminal_shows_as_the_client_sides_view_of_it() -> None:
    mapper = UpdateMapper(lambda terminal_id: CallTerminal(terminal_id, "ls", "/w", "a.txt\n"))
    events = mapper.map(start_tool_call("c", "ls", kind="execute", content=[tool_terminal_ref("t-1")]))
    assert events[1] == ToolCallRevised(
        "c", title="ls", kind="execute", content=(CallTerminal("t-1", "ls", "/w", "a.txt\n"),)
    )
    unknown = UpdateMapper().map(start_tool_call("c", "ls", content=[tool_terminal_ref("t-2")]))
    assert unknown[1] == ToolCallRevised("c", title="ls", content=(CallTerminal("t-2"),))


def test_a_plan_is_the_whole_checklist() -> None:
    update = update_plan([agent_plan_entry("read", status="completed"), agent_plan_entry("plot", priority="high")])
    assert UpdateMapper().map(update) == [
        PlanUpdated((PlanEntry("read", "completed", "medium"), PlanEntry("plot", "pending", "high")))
    ]


def usage(used: int, amount: float | None, currency: str = "USD") -> AgentUsage:
    cost = None if amount is None else Cost(amount=amount, currency=currency)
    return AgentUsage(session_update="usage_update", used=used, size=200_000, cost=cost)


def test_the_agents_running_cost_prices_each_response_by_its_change() -> None:
    mapper = UpdateMapper()
    mapper.begin_response()
    assert mapper.map(usage(1_000, 0.01)) == [UsageUpdate(cost=Decimal("0.01"))]  # context use is not request tokens
    assert mapper.map(usage(1_500, 0.03)) == [UsageUpdate(cost=Decimal("0.03"))]  # latest wins
    mapper.begin_response()
    assert mapper.map(usage(2_000, 0.05)) == [UsageUpdate(cost=Decimal("0.02"))]


def test_a_cost_in_another_currency_or_none_leaves_the_request_unpriced() -> None:
    mapper = UpdateMapper()
    mapper.begin_response()
    assert mapper.map(usage(10, 1.0, "EUR")) == [UsageUpdate()]
    assert mapper.map(usage(10, None)) == [UsageUpdate()]


def test_the_prompts_usage_keeps_the_cost_said_so_far() -> None:
    mapper = UpdateMapper()
    mapper.begin_response()
    mapper.map(usage(100, 0.5))
    response = PromptResponse(
        stop_reason="end_turn",
        usage=Usage(total_tokens=30, input_tokens=20, output_tokens=10, thought_tokens=4, cached_read_tokens=5),
    )
    assert mapper.prompt_usage(response) == [
        UsageUpdate(20, 10, cached_tokens=5, reasoning_tokens=4, cost=Decimal("0.5"))
    ]
    assert mapper.prompt_usage(PromptResponse(stop_reason="end_turn")) == []


# --- calls of the session's own tools, offered over MCP ------------------------------------------------------------


def offering(*tools: str) -> UpdateMapper:
    """A mapper whose session offers ``tools`` (Claude Code's names for them)."""
    mapper = UpdateMapper()
    mapper.offered = lambda name: (
        name.removeprefix("mcp__ai_widgets__") if name.startswith("mcp__ai_widgets__") else None
    )
    return mapper


def claude(call_id: str, tool: str, **fields: object) -> object:
    update = start_tool_call(call_id, tool, **fields)  # type: ignore[arg-type]
    update.field_meta = {"claudeCode": {"toolName": f"mcp__ai_widgets__{tool}"}}
    return update


def test_a_call_of_an_offered_tool_is_held_and_its_updates_swallowed_once_the_chat_runs_it() -> None:
    mapper = offering("add")
    assert mapper.map(claude("toolu_1", "add")) == []
    assert mapper.map(start_tool_call("toolu_1", "add", raw_input={"a": 1})) == []  # its repeat, too
    assert mapper.claim("toolu_1", "add") == "toolu_1"
    assert mapper.map(update_tool_call("toolu_1", status="completed", content=[tool_content(agent_text("3"))])) == []
    assert mapper.release_held() == []
    assert mapper.claim("toolu_1", "add") is None  # claimed once


def test_a_held_call_the_agent_ends_without_calling_shows_as_its_own_card() -> None:
    mapper = offering("add")
    assert mapper.map(claude("toolu_1", "add")) == []
    events = mapper.map(update_tool_call("toolu_1", status="failed", content=[tool_content(agent_text("refused"))]))
    assert [type(e) for e in events] == [ToolCallStarted, ToolCallRevised, ToolCallRevised, ProviderToolResult]
    started, result = events[0], events[-1]
    assert isinstance(started, ToolCallStarted)
    assert (started.tool_call_id, started.tool_name, started.provider_executed) == (
        "toolu_1",
        "mcp__ai_widgets__add",
        True,
    )
    assert isinstance(result, ProviderToolResult)
    assert result.outcome.status == "failure"
    assert mapper.claim("toolu_1", "add") is None  # shown as the agent's: the chat runs it under an id of its own


def test_a_held_call_never_called_nor_ended_is_closed_when_the_prompt_ends() -> None:
    mapper = offering("add")
    mapper.map(claude("toolu_1", "add"))
    events = mapper.release_held()
    assert [type(e) for e in events] == [ToolCallStarted, ToolCallRevised, ProviderToolResult]
    result = events[-1]
    assert isinstance(result, ProviderToolResult)
    assert result.outcome.status == "failure"
    assert mapper.release_held() == []


def test_a_call_without_an_id_claims_the_oldest_held_call_of_its_tool() -> None:
    mapper = offering("add", "look")
    mapper.map(claude("toolu_1", "look"))
    mapper.map(claude("toolu_2", "add"))
    mapper.map(claude("toolu_3", "add"))
    assert mapper.claim(None, "add") == "toolu_2"
    assert mapper.claim(None, "add") == "toolu_3"
    assert mapper.claim(None, "add") is None
    assert mapper.claim(None, "look") == "toolu_1"


def test_an_id_the_agent_never_announced_is_taken_and_its_later_cards_swallowed() -> None:
    mapper = offering("add")
    assert mapper.claim("toolu_9", "add") == "toolu_9"  # the MCP call came before the notification was mapped
    assert mapper.map(claude("toolu_9", "add")) == []


def test_an_id_already_shown_as_the_agents_card_is_not_taken() -> None:
    mapper = UpdateMapper()  # nothing offered: cards show
    assert mapper.map(start_tool_call("c1", "Edit"))
    assert mapper.claim("c1", "add") is None


def test_a_permission_for_an_offered_tool_never_announced_is_held() -> None:
    """Gemini CLI asks first; its names are ``mcp_<server>_<tool>``."""
    mapper = UpdateMapper()
    mapper.offered = lambda name: "add" if name == "mcp_ai_widgets_add" else None
    call = ToolCallUpdate(tool_call_id="mcp_ai_widgets_add__mcp_ai_widgets_add_1796411865540_0", title="add")
    assert mapper.announce(call) == []
    assert mapper.claim(None, "add") == call.tool_call_id


def test_a_terminal_in_a_card_is_revised_as_its_output_grows_until_the_card_ends() -> None:
    output = {"terminal-1": ""}
    mapper = UpdateMapper(terminal_view=lambda tid: CallTerminal(tid, command="make", output=output[tid]))
    mapper.map(start_tool_call("b1", "make", kind="execute", content=[tool_content(agent_text("building"))]))
    assert mapper.terminal_revisions("terminal-1") == []  # no card shows it yet
    shown = mapper.show_terminal("b1", "terminal-1")  # the client ran the allowed call's command: shown after the text
    assert shown == [ToolCallRevised("b1", content=(CallText("building"), CallTerminal("terminal-1", command="make")))]
    output["terminal-1"] = "ok\n"
    assert mapper.terminal_revisions("terminal-1") == [
        ToolCallRevised("b1", content=(CallText("building"), CallTerminal("terminal-1", command="make", output="ok\n")))
    ]
    mapper.map(update_tool_call("b1", status="completed"))
    assert mapper.terminal_revisions("terminal-1") == []  # a finished card takes no more revisions
    assert mapper.show_terminal("b1", "terminal-1") == []


def test_a_card_that_asked_to_run_a_command_shows_its_terminal_in_place_of_the_one_not_yet_started() -> None:
    mapper = UpdateMapper(terminal_view=lambda tid: CallTerminal(tid, command="ls", output="a\n"))
    mapper.show_content("ask_1", (CallTerminal("", command="ls"),))
    assert mapper.show_terminal("ask_1", "terminal-2") == [
        ToolCallRevised("ask_1", content=(CallTerminal("terminal-2", command="ls", output="a\n"),))
    ]
    mapper.forget_content()  # the turn ended: its cards take no more live output
    assert mapper.terminal_revisions("terminal-2") == []


def test_an_allowed_call_would_run_the_command_line_its_raw_input_names() -> None:
    mapper = UpdateMapper()
    mapper.map(start_tool_call("b1", "ls", kind="execute", raw_input={"command": "ls -la 'my dir'"}))
    seen = mapper.calls["b1"]
    assert seen.would_run("ls -la 'my dir'", ())  # Claude Code: the whole line, no args
    assert seen.would_run("ls", ("-la", "my dir"))
    assert not seen.would_run("ls -la", ())
    assert not seen.would_run("rm", ("-rf", "/"))
