"""Hostile tools: schemas a validator cannot evaluate, patterns that backtrack, views of huge or odd definitions,
text UTF-8 cannot carry, and callables other than plain functions (partials, callable objects, bound methods, async
generators). Each test failed before the fix it guards, except those that say they guard what already held."""

from __future__ import annotations

import asyncio
import functools
import time
import warnings
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from ai_widgets import ChatSession, Tool, ToolDefinition, ToolInvocation, ToolOutcome, ToolRegistry, tool
from ai_widgets._safe import UnsafeValueError
from ai_widgets.messages import MessageStatus, ToolCallState
from ai_widgets.tools import ToolReplacementWarning
from ai_widgets.tools._display import registry_html, tool_html, tool_markdown
from ai_widgets.tools._views import provider_views
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import wait_for
from tests.tools.test_live_tools import Kernel, Notebook, kernel  # noqa: F401 (the fixture)


def raw_tool(parameters: dict[str, Any], name: str = "raw", description: str = "A tool.") -> Tool:
    return Tool(ToolDefinition(name=name, description=description, parameters=parameters), lambda inv: "ran")


def invocation(name: str, arguments: str) -> ToolInvocation:
    return ToolInvocation(tool_call_id="call-1", tool_name=name, arguments=arguments)


# --- a tool's own JSON Schema that cannot be evaluated -------------------------------------------------------------

BROKEN_SCHEMAS = {
    "ref-to-nowhere": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}},
    "remote-ref": {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/schema.json"}}},
    "type-not-a-name": {"type": "object", "properties": {"x": {"type": 5}}},
}


@pytest.mark.parametrize("schema", BROKEN_SCHEMAS.values(), ids=BROKEN_SCHEMAS.keys())
async def test_a_schema_that_cannot_be_evaluated_fails_that_call_not_the_turn(schema: dict[str, Any]) -> None:
    """Before: jsonschema's exception escaped ``Tool.bind`` and failed the whole turn, the sibling call with it."""
    broken = raw_tool(schema, name="broken")
    ran: list[str] = []

    @tool
    def fine(x: str) -> str:
        """Fine."""
        ran.append(x)
        return x

    transport = ScriptedTransport(
        [
            ScriptedReply(
                tool_calls=[
                    ScriptedToolCall(name="broken", arguments={"x": "a"}),
                    ScriptedToolCall(name="fine", arguments={"x": "b"}),
                ]
            ),
            "Done.",
        ]
    )
    reply = await asyncio.wait_for(ChatSession(transport, tools=[broken, fine]).send("go"), 10)
    assert reply.status is MessageStatus.COMPLETED, reply.error
    failed, completed = reply.tool_calls
    assert failed.state is ToolCallState.FAILED
    assert failed.outcome is not None
    assert "its parameters schema cannot be used to check arguments" in (failed.outcome.message or "")
    assert failed.outcome.retryable is False
    assert completed.state is ToolCallState.COMPLETED
    assert ran == ["b"]


async def test_a_backtracking_pattern_cannot_stall_the_event_loop() -> None:
    """Before: ``pattern`` went to Python's ``re``, where ``^(a+)+$`` on 28 a's and a b takes seconds (each more
    character doubles it) on the event loop; a model's string and a third party's schema (an MCP server) suffice."""
    evil = raw_tool(
        {
            "type": "object",
            "properties": {"x": {"type": "string", "pattern": "^(a+)+$"}},
            "patternProperties": {"^(b+)+$": {"type": "integer"}},
        }
    )
    started = time.perf_counter()
    outcome = await evil.invoke(invocation("raw", '{"x": "' + "a" * 28 + 'b"}'))
    assert time.perf_counter() - started < 1.5
    assert outcome.status == "failure"
    assert "does not match" in (outcome.message or "")
    started = time.perf_counter()
    outcome = await evil.invoke(invocation("raw", '{"' + "b" * 28 + 'c": "s", "bb": "not an integer"}'))
    assert time.perf_counter() - started < 1.5
    assert "bb: 'not an integer' is not of type 'integer'" in (outcome.message or "")
    assert (await evil.invoke(invocation("raw", '{"x": "aaa", "bb": 2}'))).status == "success"


async def test_a_pattern_python_cannot_compile_is_checked_or_left_to_the_tool() -> None:
    r"""``\p{L}`` is valid ECMA-262 (and Rust) but not Python: checked, not a failure of every call; a pattern no
    engine here takes is left to the tool."""
    letters = raw_tool({"type": "object", "properties": {"x": {"type": "string", "pattern": r"^\p{L}+$"}}})
    assert (await letters.invoke(invocation("raw", '{"x": "Ünïcode"}'))).status == "success"
    assert (await letters.invoke(invocation("raw", '{"x": "123"}'))).status == "failure"
    unreadable = raw_tool({"type": "object", "properties": {"x": {"type": "string", "pattern": "(("}}})
    assert (await unreadable.invoke(invocation("raw", '{"x": "anything"}'))).status == "success"


# --- views of huge and odd definitions --------------------------------------------------------------------------------


def test_the_views_of_a_tool_with_a_megabyte_description_stay_small() -> None:
    """Before: a 1 MB description made a 9 MB HTML view (it is in the head and in each provider's JSON) and a 10 MB
    markdown view, sent to the front end and saved in the notebook."""

    @tool(description="A" * 1_000_000)
    def big(x: Annotated[int, Field(description="B" * 1_000_000)]) -> int:
        return x

    html, markdown, table = tool_html(big), tool_markdown(big), registry_html([big])
    assert len(html) < 150_000
    assert len(markdown) < 150_000
    assert len(table) < 20_000
    assert "more characters" in html
    assert "more characters" in markdown
    assert "more characters" in table
    # The sizes stay those of the whole definition, as sent.
    assert all(view.size > 2_000_000 for view in provider_views(big))
    assert f"{provider_views(big)[0].size:,} bytes" in html


@pytest.mark.slow  # jsonschema checks the 5,000-parameter schema: seconds
def test_a_five_thousand_value_enum_and_five_thousand_parameters_stay_small() -> None:
    values = tuple(f"value-{i}" for i in range(5000))
    enum = raw_tool(
        {"type": "object", "properties": {"x": {"type": "string", "enum": list(values), "description": "d"}}}
    )
    assert len(tool_html(enum)) < 150_000
    many = raw_tool({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}})
    html, markdown = tool_html(many), tool_markdown(many)
    assert len(html) < 200_000  # 5,000 parameters and 5,000 warnings (no descriptions) were all listed
    assert len(markdown) < 200_000
    assert "… and 4,800 more" in html
    assert "… and 4,950 more" in html  # the warnings
    assert len(registry_html([many])) < 100_000


def test_names_titles_and_descriptions_are_escaped_in_every_view() -> None:
    """Guards what already held (and still holds with the views clipped)."""

    @tool(title="<script>alert(1)</script>\u202e\u200b", icon="<img src=x onerror=alert(1)>")
    def shady(q: Annotated[str, Field(description="</pre><script>x</script>")]) -> str:
        """<b>bold</b> & "quoted" </details>"""
        return q

    for html in (tool_html(shady), registry_html([shady])):
        assert "<script" not in html
        assert "<img" not in html
        assert "<b>" not in html
        assert "&lt;script&gt;" in html


def nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    inner = schema
    for _ in range(levels):
        child: dict[str, Any] = {"type": "object", "properties": {}, "description": "d"}
        inner["properties"]["x"] = child
        inner = child
    return schema


def test_a_schema_that_contains_itself_or_nests_thousands_deep_is_refused_at_once() -> None:
    """Before: both were taken, and then ``check()``, the HTML and markdown views and every request that offered
    the tool raised ``RecursionError`` (or recursed forever)."""
    cyclic: dict[str, Any] = {"type": "object", "properties": {}}
    cyclic["properties"]["self"] = cyclic
    with pytest.raises(ValueError, match="nest deeper than 200 levels"):
        ToolDefinition(name="cyclic", parameters=cyclic)
    with pytest.raises(ValueError, match="nest deeper than 200 levels"):
        ToolDefinition(name="deep", parameters=nested(5000))
    deep_enough = raw_tool(nested(95))  # 191 levels: taken, and every view and check works
    assert deep_enough.check() == []
    tool_html(deep_enough)
    tool_markdown(deep_enough)
    registry_html([deep_enough])


# --- text UTF-8 cannot carry ----------------------------------------------------------------------------------------


def test_lone_surrogates_are_reported_and_never_break_a_view() -> None:
    """Before: ``check()`` said nothing of a lone surrogate (every request fails to encode), its warnings could not be
    printed, and the views held it (a Jupyter display message cannot carry it)."""
    odd = raw_tool(
        {
            "type": "object",
            "properties": {
                "x\ud800": {"type": "string", "description": "d"},
                "y": {"default": "\udcff", "description": "d"},
            },
        },
        description="Reads \udce9 bytes.",
    )
    warnings_ = odd.check()
    found = {(w.code, w.path) for w in warnings_}
    assert ("not-utf8", None) in found  # the description
    assert ("not-utf8", '$.properties["x\\ud800"]') in found
    assert ("not-utf8", "$.properties.y.default") in found
    for warning in warnings_:
        str(warning).encode("utf-8")
    tool_html(odd).encode("utf-8")
    tool_markdown(odd).encode("utf-8")
    registry_html([odd]).encode("utf-8")


def test_a_required_parameter_that_is_not_among_the_properties_is_reported() -> None:
    ghost = raw_tool(
        {"type": "object", "properties": {"x": {"type": "string", "description": "d"}}, "required": ["x", "ghost"]}
    )
    assert [(w.code, w.path) for w in ghost.check()] == [("undeclared-required", "$.required")]
    assert "'ghost'" in ghost.check()[0].message


# --- callables other than plain functions -----------------------------------------------------------------------------


def delete(path: str, root: str = "/home") -> str:
    """Deletes a file.

    Args:
        path: The file, under the root.
        root: Where the files are.
    """
    return f"deleted {root}/{path}"


async def test_a_partial_fixes_its_keywords_out_of_the_models_reach() -> None:
    """Before: ``@tool`` on a ``functools.partial`` failed with "cannot resolve the type annotations ... define the types
    at module level". Its keywords are fixed: not in the schema, and a model that sends one anyway changes nothing."""
    safe = tool(name="safe_delete")(functools.partial(delete, root="/sandbox"))
    assert safe.definition.description == "Deletes a file."
    assert safe.definition.parameters == {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The file, under the root."}},
        "required": ["path"],
    }
    outcome = await safe.invoke(invocation("safe_delete", '{"path": "notes.txt", "root": "/"}'))
    assert outcome.value == "deleted /sandbox/notes.txt"


class Counter:
    """Counts."""

    def __call__(self, step: Annotated[int, Field(description="How much.")]) -> int:
        return step


class AsyncCounter:
    async def __call__(self, step: int) -> int:
        await asyncio.sleep(0)
        return step * 2


async def test_callable_objects_take_their_schema_from_call_and_async_ones_run_on_the_loop() -> None:
    counter = tool(name="count")(Counter())
    assert counter.definition.parameters["properties"] == {"step": {"type": "integer", "description": "How much."}}
    assert (await counter.invoke(invocation("count", '{"step": "3"}'))).value == 3
    doubled = tool(name="double")(AsyncCounter())
    assert not doubled.is_sync  # a coroutine on the loop, not a thread that cannot be stopped
    assert (await doubled.invoke(invocation("double", '{"step": 4}'))).value == 8


async def test_an_async_generator_tool_gives_what_it_yields() -> None:
    """Before: the value was the generator's repr, ``'<async_generator object ...>'``, told to the model as a result."""

    @tool
    async def countdown(start: int) -> Any:
        """Counts down."""
        for n in range(start, 0, -1):
            await asyncio.sleep(0)
            yield n

    assert not countdown.is_sync
    outcome = await countdown.invoke(invocation("countdown", '{"start": 3}'))
    assert outcome.value == [3, 2, 1]


def test_methods_of_two_objects_made_tools_in_one_cell_do_not_replace_each_other(
    kernel: Kernel,  # noqa: F811
) -> None:
    """Before: ``tool(alice.balance)`` and ``tool(bob.balance)`` had one place (the method's qualified name), so
    making Bob's tool silently switched Alice's chat to Bob's account."""
    nb = Notebook(kernel, ToolRegistry=ToolRegistry)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolReplacementWarning)
        ns = nb.run(
            '''
class Account:
    def __init__(self, owner):
        self.owner = owner

    def balance(self, currency: str) -> str:
        """The balance."""
        return f"{self.owner}: 10 {currency}"

alices_chat = ToolRegistry([tool(Account("alice").balance)])
bobs_chat = ToolRegistry([tool(Account("bob").balance)])
''',
            cell_id="accounts",
        )
    assert ns["alices_chat"]["balance"]("EUR") == "alice: 10 EUR"
    assert ns["bobs_chat"]["balance"]("EUR") == "bob: 10 EUR"


def test_a_classmethod_tool_is_still_live(kernel: Kernel) -> None:  # noqa: F811
    """Guards what already held: a method bound to a class (not to an object) keeps its place."""
    nb = Notebook(kernel, ToolRegistry=ToolRegistry)
    cell = '''
class Rates:
    @classmethod
    def rate(cls, currency: str) -> str:
        """The rate, {version}."""
        return "{version}"

rate_tool = tool(Rates.rate)
'''
    registry = ToolRegistry([nb.run(cell.replace("{version}", "v1"), cell_id="rates")["rate_tool"]])
    nb.run(cell.replace("{version}", "v2"), cell_id="rates")
    assert registry["rate"].definition.description == "The rate, v2."


def test_literal_of_mixed_types_tuples_and_optional_lists_of_dicts_check_without_raising() -> None:
    """Guards what already held."""

    @tool
    def mixed(
        a: Literal[1, "a", True, None],
        b: list[dict[str, Any]] | None = None,
        c: tuple[int, str] = (1, "a"),
        d: Annotated[int, Field(ge=0, le=10, multiple_of=2)] = 2,
    ) -> str:
        """Mixed."""
        return "ok"

    codes = {w.code for w in mixed.check()}
    assert "openai-array-items" in codes  # the tuple's prefixItems: OpenAI refuses an array without items
    assert "gemini-unsupported-keyword" in codes  # multipleOf
    tool_html(mixed)
    tool_markdown(mixed)


# --- live tools: listeners, and a call waiting for approval ----------------------------------------------------------

LIVE = "attack_live_weather"


def weather(version: str, risk: str = "normal") -> str:
    return f'''
@tool(risk="{risk}")
def {LIVE}(city: str) -> str:
    """Weather, {version}."""
    return "{version} weather in " + city
'''


def test_a_listener_that_raises_neither_breaks_the_cell_nor_the_other_registries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before: the first registry whose listener raised (a closed widget's, a bug) stopped the replacement: the cell
    defining the tool raised, and the registries after it (in no set order) kept the old tool."""
    nb = Notebook()
    old = nb.run(weather("v1"), module="attack.weather")[LIVE]
    registries = [ToolRegistry([old]) for _ in range(5)]
    told: list[int] = []
    for index, registry in enumerate(registries):
        if index % 2:
            registry.subscribe(lambda _registry: 1 / 0)
        registry.subscribe(lambda _registry, index=index: told.append(index))
    new = nb.run(weather("v2"), module="attack.weather")[LIVE]  # raised ZeroDivisionError here
    assert all(registry[LIVE] is new for registry in registries)
    assert sorted(told) == [0, 1, 2, 3, 4]  # every other listener was told too
    assert [r.getMessage() for r in caplog.records].count("an ai_widgets tool registry listener failed") == 2


async def test_what_waits_for_approval_is_what_runs_when_the_tool_is_redefined(kernel: Kernel) -> None:  # noqa: F811
    """Guards what already held: a call waiting for approval keeps the tool it was resolved with."""
    nb = Notebook(kernel)
    old = nb.run(weather("v1", risk="destructive"), cell_id="W")[LIVE]
    transport = ScriptedTransport(
        [ScriptedReply(tool_calls=[ScriptedToolCall(name=LIVE, arguments={"city": "Oslo"})]), "Done."]
    )
    session = ChatSession(transport, tools=[old])
    turn = asyncio.create_task(session.send("weather"))
    await wait_for(
        lambda: (
            bool(session.messages and session.messages[-1].tool_calls)
            and session.messages[-1].tool_calls[0].state is ToolCallState.AWAITING_APPROVAL
        ),
        timeout=10,
    )
    part = session.messages[-1].tool_calls[0]
    new = nb.run(weather("v2"), cell_id="W")[LIVE]  # redefined (and no longer destructive) while it waits
    assert session.tools[LIVE] is new
    session.approve(part.tool_call_id, "approved")
    reply = await asyncio.wait_for(turn, 10)
    assert reply.tool_calls[0].outcome is not None
    assert reply.tool_calls[0].outcome.value == "v1 weather in Oslo"  # what the person approved


def test_a_flood_of_invalid_values_gives_the_model_a_bounded_message() -> None:
    """50,000 bad list items (or 300 strings of 1 MB) once made a 4.7 MB failure the model was sent and the history
    kept; the model is now told the first problems, briefly, and how many more there are."""
    from ai_widgets import tool

    @tool
    def total(xs: list[int]) -> int:
        """Adds numbers.

        Args:
            xs: The numbers.
        """
        return sum(xs)

    told = total.bind({"xs": ["a"] * 50_000})
    assert not isinstance(told, dict)
    assert told.message is not None
    assert len(told.message) < 5_000
    assert "and 49,980 more problems of the same kind" in told.message
    huge = total.bind({"xs": ["x" * 1_000_000] * 300})
    assert not isinstance(huge, dict)
    assert huge.message is not None
    assert len(huge.message) < 5_000
    assert total.bind({"xs": "three"}).message == (  # type: ignore[union-attr]
        'Invalid arguments for total: xs: Input should be a valid list (got "three"). Correct them and call again.'
    )


def test_a_result_with_lone_surrogates_in_its_keys_is_kept_with_replacement_characters() -> None:
    """Defect: a dict key with a lone surrogate (``os.listdir`` gives them for file names that are not UTF-8) failed
    the whole call ("cannot be written as JSON"), while the same text as a value became U+FFFD."""
    shared = {"caf\udce9.txt": 3}
    outcome = ToolOutcome.success({"files": shared, "again": shared, "\ud800": ("\udc80", 1)})
    assert outcome.ok
    assert outcome.value == {"files": {"caf\ufffd.txt": 3}, "again": {"caf\ufffd.txt": 3}, "\ufffd": ["\ufffd", 1]}
    looped: list[Any] = []
    looped.append({"\ud800": looped})
    with pytest.raises(UnsafeValueError, match="Circular reference"):
        ToolOutcome.success(looped)


def test_a_result_that_shares_lists_exponentially_is_refused_before_it_is_expanded() -> None:
    """Defect: ``[[[[0] * 100] * 100] * 100] * 100`` (100 million items in a few kilobytes) was expanded by the
    conversion to JSON before the item limit looked at it: 1 GB and 5 s, and one level more ran the kernel out of
    memory."""

    @tool
    def bomb() -> list[Any]:
        """Returns a small value that is huge once copied."""
        return [[[[[0] * 100] * 100] * 100] * 100] * 100

    session = ChatSession(
        ScriptedTransport([ScriptedReply(tool_calls=[ScriptedToolCall(name="bomb", arguments={})]), "Noted."]),
        tools=[bomb],
    )
    started = time.monotonic()
    reply = asyncio.run(session.send("go"))
    assert time.monotonic() - started < 10
    (call,) = reply.tool_calls
    assert call.state is ToolCallState.FAILED
    assert call.outcome is not None
    assert "more than 10,000,000 values" in (call.outcome.message or "")
    assert reply.text.endswith("Noted.")
    square = [[0] * 1000] * 1000  # a million items, shared rows: kept
    assert ToolOutcome.success(square).value == square
