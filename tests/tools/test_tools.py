"""The tool model: schema derivation, argument validation and binding, outcomes, progress, the registry."""

from __future__ import annotations

import asyncio
import datetime
import functools
import json
import threading
import time
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from ai_widgets import (
    ChatSession,
    Tool,
    ToolDefinition,
    ToolInvocation,
    ToolOutcome,
    ToolProgress,
    ToolRegistry,
    ToolRisk,
    tool,
)
from ai_widgets._safe import UnsafeValueError
from ai_widgets.messages import MessageStatus, ToolCallState
from ai_widgets.tools._display import tool_html, tool_markdown
from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport
from tests.helpers import raw_tool


class Location(BaseModel):
    city: str
    country: str | None


class Unit(str, Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


calls: list[dict[str, Any]] = []


@tool
def get_forecast(
    location: Annotated[Location, Field(description="Where")],
    date: datetime.date,
    not_after: datetime.datetime | None,
    unit: Unit,
    days: Annotated[int, Field(description="How many days, 1 to 7", ge=1, le=7)],
    max_results: int | None,
    include_wind: bool = False,
) -> str:
    """Gets the forecast for a location."""
    calls.append(
        {
            "location": location,
            "date": date,
            "not_after": not_after,
            "unit": unit,
            "days": days,
            "max_results": max_results,
            "include_wind": include_wind,
        }
    )
    return f"{days} days of sun in {location.city}"


FORECAST_SCHEMA = {
    "type": "object",
    "properties": {
        "location": {
            "type": "object",
            "description": "Where",
            "properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}},
            "required": ["city", "country"],
        },
        "date": {"type": "string", "format": "date"},
        "not_after": {"type": ["string", "null"], "format": "date-time"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "description": "How many days, 1 to 7", "minimum": 1, "maximum": 7},
        "max_results": {"type": ["integer", "null"]},
        "include_wind": {"type": "boolean", "default": False},
    },
    "required": ["location", "date", "not_after", "unit", "days", "max_results"],
}

GOOD_ARGS = {
    "location": {"city": "Lisbon", "country": "PT"},
    "date": "2026-11-29",
    "not_after": None,
    "unit": "celsius",
    "days": 3,
    "max_results": None,
}


def _walk_keys(node: Any) -> list[str]:
    keys: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            keys.append(key)
            keys.extend(_walk_keys(value) if key != "properties" else _walk_keys(list(value.values())))
    elif isinstance(node, list):
        for item in node:
            keys.extend(_walk_keys(item))
    return keys


def invocation(args: Any, name: str = "get_forecast", **extra: Any) -> ToolInvocation:
    text = args if isinstance(args, str) else json.dumps(args)
    return ToolInvocation(tool_call_id="call_1", tool_name=name, arguments=text, **extra)


# --- schema derivation -------------------------------------------------------------------------------------------


def test_forecast_schema_is_exactly_the_compact_schema() -> None:
    definition = get_forecast.definition
    assert definition.name == "get_forecast"
    assert definition.description == "Gets the forecast for a location."
    assert definition.parameters == FORECAST_SCHEMA
    # No pydantic noise anywhere: no titles, no $defs/$ref indirection for a non-recursive model.
    noise = {"title", "$defs", "$ref", "additionalProperties"}
    assert noise.isdisjoint(_walk_keys(definition.parameters))


def test_definition_for_the_model_has_no_ui_fields() -> None:
    schema = get_forecast.definition.model_schema()
    assert set(schema) == {"name", "description", "parameters"}


def test_docstring_args_give_descriptions_and_summary() -> None:
    @tool
    def search(query: str, limit: int = 10, *, exact: bool = False) -> list[str]:
        """Searches the index.

        More detail on a second paragraph.

        Args:
            query: What to look for,
                over two lines.
            limit (int): At most this many results.
            exact: Match the whole phrase.

        Returns:
            The matching titles.
        """
        return []

    props = search.definition.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for, over two lines."}
    assert props["limit"] == {"type": "integer", "description": "At most this many results.", "default": 10}
    assert props["exact"]["description"] == "Match the whole phrase."
    assert search.definition.parameters["required"] == ["query"]
    assert search.definition.description == "Searches the index.\n\nMore detail on a second paragraph."
    assert "Returns" not in search.definition.description


def test_field_description_wins_over_docstring() -> None:
    @tool
    def f(x: Annotated[int, Field(description="from Field")]) -> int:
        """Does f.

        Args:
            x: from docstring
        """
        return x

    assert f.definition.parameters["properties"]["x"]["description"] == "from Field"


def test_lists_nested_models_and_a_property_called_title() -> None:
    class Item(BaseModel):
        title: str = Field(description="Shown to the reader")
        tags: list[str] = []

    @tool
    def add_items(items: list[Item], title: str) -> int:
        """Adds items."""
        return len(items)

    params = add_items.definition.parameters
    assert params["properties"]["title"] == {"type": "string"}
    item_schema = params["properties"]["items"]["items"]
    assert item_schema["properties"]["title"] == {"type": "string", "description": "Shown to the reader"}
    assert item_schema["properties"]["tags"] == {"type": "array", "items": {"type": "string"}, "default": []}


def test_recursive_model_keeps_its_definition() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    Node.model_rebuild()

    @tool
    def walk(root: Node) -> int:
        """Walks a tree."""
        return 1

    params = walk.definition.parameters
    assert "Node" in params["$defs"]
    assert params["properties"]["root"] == {"$ref": "#/$defs/Node"}
    assert "title" not in params["$defs"]["Node"]


def test_invocation_parameter_is_not_in_the_schema() -> None:
    @tool
    def who(name: str, call: ToolInvocation) -> str:
        """Says who."""
        return call.tool_call_id

    assert list(who.definition.parameters["properties"]) == ["name"]


def test_options_reach_the_definition() -> None:
    @tool(name="rm", title="Remove", icon="🗑", risk="destructive", requires_approval=True, sequential=True)
    def remove(path: str) -> None:
        """Removes a path."""

    d = remove.definition
    assert (d.name, d.title, d.icon, d.risk, d.requires_approval, d.sequential) == (
        "rm",
        "Remove",
        "🗑",
        ToolRisk.DESTRUCTIVE,
        True,
        True,
    )
    assert ToolRisk.DESTRUCTIVE.value == "destructive"


def test_lambda_needs_a_name() -> None:
    with pytest.raises(ValueError, match="lambda"):
        tool(lambda x: x)
    named = tool(name="double")(lambda x: x * 2)
    assert named.name == "double"
    assert named(4) == 8


@pytest.mark.parametrize("bad", ["has space", "", "x" * 65, "dots.not.allowed"])
def test_invalid_names_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="tool name"):
        tool(name=bad)(lambda: None)


def test_var_args_are_refused_clearly() -> None:
    def f(*args: int) -> None:
        pass

    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs"):
        tool(f)


def test_tool_stays_callable_as_the_function() -> None:
    loc = Location(city="Oslo", country=None)
    assert get_forecast(loc, datetime.date(2026, 1, 1), None, Unit.celsius, 2, None) == "2 days of sun in Oslo"


# --- invocation ---------------------------------------------------------------------------------------------------


async def test_valid_arguments_are_bound_with_their_types() -> None:
    calls.clear()
    outcome = await get_forecast.invoke(invocation(GOOD_ARGS))
    assert outcome.ok
    assert outcome.value == "3 days of sun in Lisbon"
    assert outcome.model_content() == "3 days of sun in Lisbon"
    (call,) = calls
    assert call["location"] == Location(city="Lisbon", country="PT")
    assert call["date"] == datetime.date(2026, 11, 29)
    assert call["unit"] is Unit.celsius
    assert call["include_wind"] is False


async def test_lossless_coercion_and_extra_keys() -> None:
    calls.clear()
    outcome = await get_forecast.invoke(invocation({**GOOD_ARGS, "days": "2", "surprise": 1}))
    assert outcome.ok, outcome.message
    assert calls[0]["days"] == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({**GOOD_ARGS, "days": "three"}, "days: Input should be a valid integer"),
        ({**GOOD_ARGS, "days": 9}, "days: Input should be less than or equal to 7"),
        ({**GOOD_ARGS, "days": 2.5}, "days: Input should be a valid integer"),
        ({k: v for k, v in GOOD_ARGS.items() if k != "unit"}, "unit: Field required"),
        ({k: v for k, v in GOOD_ARGS.items() if k != "max_results"}, "max_results: Field required"),
        ({**GOOD_ARGS, "unit": "kelvin"}, "unit: Input should be 'celsius' or 'fahrenheit'"),
        ({**GOOD_ARGS, "location": {"country": "PT"}}, "location.city: Field required"),
        ('{"days": 2', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
async def test_invalid_arguments_fail_before_the_handler_runs(args: Any, expected: str) -> None:
    calls.clear()
    outcome = await get_forecast.invoke(invocation(args))
    assert not outcome.ok
    assert outcome.retryable
    assert outcome.message is not None
    assert expected in outcome.message
    assert "get_forecast" in outcome.message
    assert calls == []


async def test_empty_arguments_mean_no_arguments() -> None:
    @tool
    def now() -> str:
        """Tells the time."""
        return "noon"

    assert (await now.invoke(invocation("", name="now"))).value == "noon"
    assert (await now.invoke(invocation("  ", name="now"))).value == "noon"


async def test_raising_handler_keeps_the_exception_for_the_person_only() -> None:
    @tool
    def leaky(x: int) -> int:
        """Leaks."""
        raise RuntimeError("password=hunter2 in /etc/secret")

    outcome = await leaky.invoke(invocation({"x": 1}, name="leaky"))
    assert not outcome.ok
    assert outcome.retryable
    assert outcome.message is not None
    assert "hunter2" not in outcome.message
    assert "hunter2" not in outcome.model_content()
    assert outcome.error is not None
    assert outcome.error.type == "RuntimeError"
    # The person sees the exception, its credential redacted like a key (the saved notebook keeps this text).
    assert outcome.error.message == "password=[redacted] in /etc/secret"
    assert outcome.error.traceback is not None
    assert "hunter2" not in outcome.error.traceback
    assert "leaky" in outcome.error.traceback
    assert isinstance(outcome.error.exception, RuntimeError)

    detailed = await leaky.invoke(invocation({"x": 1}, name="leaky"), include_detailed_errors=True)
    assert detailed.message is not None
    assert "RuntimeError: password=[redacted] in /etc/secret" in detailed.message  # the model's copy too


async def test_failure_returned_by_the_tool_is_told_as_written() -> None:
    @tool
    def picky(x: int) -> ToolOutcome:
        """Picky."""
        return ToolOutcome.failure("x must be even; try 2", retryable=False)

    outcome = await picky.invoke(invocation({"x": 1}, name="picky"))
    assert outcome.model_content() == "x must be even; try 2"
    assert outcome.retryable is False


async def test_success_outcome_with_text_citations_attachments() -> None:
    @tool
    def cite(q: str) -> ToolOutcome:
        """Cites."""
        return ToolOutcome.success(
            {"answer": 42},
            text="**42**",
            citations=["https://example.org/a", {"url": "https://example.org/b", "title": "B"}],
            attachments=[{"mime_type": "image/png", "data": "iVBORw0KGgo="}],
        )

    outcome = await cite.invoke(invocation({"q": "?"}, name="cite"))
    assert outcome.model_content() == '{"answer":42}'
    assert [c.url for c in outcome.citations] == ["https://example.org/a", "https://example.org/b"]
    assert outcome.citations[1].title == "B"
    assert outcome.attachments[0].mime_type == "image/png"
    restored = ToolOutcome.model_validate_json(outcome.model_dump_json())
    assert restored == outcome


def test_attachment_needs_data_or_url() -> None:
    with pytest.raises(ValueError, match="exactly one of data"):
        ToolOutcome.success(attachments=[{"mime_type": "image/png"}])


async def test_pydantic_model_result_reaches_the_model_as_json() -> None:
    class Weather(BaseModel):
        city: str
        temperature: float

    @tool
    def weather(city: str) -> Weather:
        """Weather."""
        return Weather(city=city, temperature=21.5)

    outcome = await weather.invoke(invocation({"city": "Lisbon"}, name="weather"))
    assert outcome.value == {"city": "Lisbon", "temperature": 21.5}
    assert json.loads(outcome.model_content()) == {"city": "Lisbon", "temperature": 21.5}


async def test_sync_handlers_run_off_the_event_loop_and_async_on_it() -> None:
    loop_thread = threading.get_ident()

    @tool
    def sync_where() -> int:
        """Where."""
        return threading.get_ident()

    @tool
    async def async_where() -> int:
        """Where."""
        await asyncio.sleep(0)
        return threading.get_ident()

    assert (await sync_where.invoke(invocation({}, name="sync_where"))).value != loop_thread
    assert (await async_where.invoke(invocation({}, name="async_where"))).value == loop_thread


async def test_a_sync_handler_does_not_block_the_loop() -> None:
    import time

    @tool
    def slow() -> str:
        """Slow."""
        time.sleep(0.3)
        return "done"

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    await slow.invoke(invocation({}, name="slow"))
    task.cancel()
    assert ticks > 10


async def test_handler_receives_its_invocation_and_reports_progress_from_a_thread() -> None:
    seen: list[tuple[float | None, str | None, int]] = []
    loop_thread = threading.get_ident()

    @tool
    def crunch(n: int, call: ToolInvocation) -> dict[str, Any]:
        """Crunches."""
        for i in range(1, n + 1):
            call.progress.report(i / n, f"step {i}")
        return {"id": call.tool_call_id, "conversation": call.conversation_id, "ctx": call.context}

    progress = ToolProgress(lambda f, m: seen.append((f, m, threading.get_ident())))
    call = invocation({"n": 4}, name="crunch", conversation_id="conv", message_id="m1", progress=progress, context=7)
    outcome = await crunch.invoke(call)
    await asyncio.sleep(0)  # callbacks hop to the loop thread
    assert outcome.value == {"id": "call_1", "conversation": "conv", "ctx": 7}
    assert [(f, m) for f, m, _ in seen] == [
        (0.25, "step 1"),
        (0.5, "step 2"),
        (0.75, "step 3"),
        (1.0, "step 4"),
    ]
    assert {thread for *_, thread in seen} == {loop_thread}


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "half", True])
def test_progress_refuses_bad_fractions(bad: Any) -> None:
    with pytest.raises(ValueError, match="fraction"):
        ToolProgress().report(bad)


def test_invocation_progress_is_never_none() -> None:
    call = ToolInvocation(tool_call_id="c", tool_name="t")
    call.progress.report(0.5, "half")
    assert (call.progress.fraction, call.progress.message) == (0.5, "half")


async def test_tool_from_definition_with_dynamic_schema() -> None:
    class Query(BaseModel):
        sql: str

    definition = ToolDefinition(
        name="run_sql",
        description="Runs SQL.",
        parameters={"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
        risk=ToolRisk.DESTRUCTIVE,
    )

    ran: list[str] = []

    async def handler(call: ToolInvocation) -> str:
        ran.append(call.arguments)
        return call.get_arguments(Query).sql.upper()

    run_sql = Tool(definition, handler)
    assert run_sql.definition.parameters == definition.parameters  # nothing derived
    assert (await run_sql.invoke(invocation({"sql": "select 1"}, name="run_sql"))).value == "SELECT 1"
    # The definition's own schema is checked before the handler runs.
    for arguments, problem in [({"query": "x"}, "'sql' is a required property"), ({"sql": 5}, "sql: 5 is not of type")]:
        bad = await run_sql.invoke(invocation(arguments, name="run_sql"))
        assert not bad.ok
        assert bad.message is not None
        assert problem in bad.message
    assert len(ran) == 1


async def test_parameters_pydantic_reserves_keep_their_names() -> None:
    @tool
    def configure(model_config: str, _hidden: int = 1) -> str:
        """Configures.

        Args:
            model_config: Which configuration.
        """
        return f"{model_config}:{_hidden}"

    assert configure.definition.parameters["properties"] == {
        "model_config": {"description": "Which configuration.", "type": "string"},
        "_hidden": {"default": 1, "type": "integer"},
    }
    assert configure.definition.parameters["required"] == ["model_config"]
    outcome = await configure.invoke(invocation({"model_config": "fast", "_hidden": "2"}, name="configure"))
    assert outcome.value == "fast:2"


async def test_arguments_are_refused_when_they_could_be_read_two_ways() -> None:
    @tool
    def delete(path: str) -> str:
        """Deletes."""
        return path

    for text in ['{"path": "a", "path": "/home"}', '{"path": "a", "x": NaN}', '{"path": "a", "x": Infinity}']:
        outcome = await delete.invoke(ToolInvocation("c1", "delete", text))
        assert not outcome.ok
        assert outcome.message is not None
        assert "not valid JSON" in outcome.message


async def test_tool_values_that_json_cannot_hold_fail_that_call_only() -> None:
    import sys

    cyclic: list[Any] = []
    cyclic.append(cyclic)
    deep: list[Any] = []
    for _ in range(3000):
        deep = [deep]
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    huge = 10**5000
    sys.set_int_max_str_digits(limit)

    def returning(value: Any) -> Any:
        @tool
        def odd() -> Any:
            """Returns something odd."""
            return value

        return odd

    for value in (cyclic, deep, huge):
        odd = returning(value)
        outcome = await odd.invoke(ToolInvocation("c1", "odd", "{}"))
        assert not outcome.ok, value
        assert outcome.message is not None
        assert "cannot be sent to the model" in outcome.message

    @tool
    def names() -> Any:
        """Lists."""
        return {"name": "caf\udce9", "raw": b"\xff\xfe", "nan": float("nan")}

    outcome = await names.invoke(ToolInvocation("c1", "names", "{}"))
    assert outcome.ok
    assert outcome.value == {"name": "caf\ufffd", "raw": "__4=", "nan": None}
    json.dumps(outcome.model_dump(mode="json"), allow_nan=False).encode("utf-8")


async def test_an_exception_whose_text_raises_still_fails_cleanly() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    @tool
    def broken() -> str:
        """Breaks."""
        raise Unprintable

    outcome = await broken.invoke(ToolInvocation("c1", "broken", "{}"), include_detailed_errors=True)
    assert not outcome.ok
    assert outcome.error is not None
    assert "could not be read" in outcome.error.message


async def test_person_facing_error_text_is_redacted() -> None:
    key = "sk-" + "proj" + "A1b2C3d4E5f6G7h8"

    @tool
    def leaky() -> str:
        """Leaks."""
        raise RuntimeError(f"auth failed for {key}")

    outcome = await leaky.invoke(ToolInvocation("c1", "leaky", "{}"))
    assert outcome.error is not None
    assert key not in outcome.error.message
    assert outcome.error.traceback is not None
    assert key not in outcome.error.traceback


def test_definition_checks_its_schema() -> None:
    with pytest.raises(ValueError, match="type 'object'"):
        ToolDefinition(name="x", parameters={"type": "string"})


# --- registry -----------------------------------------------------------------------------------------------------


def test_registry_is_case_insensitive_and_replaces() -> None:
    registry = ToolRegistry([get_forecast])
    assert registry.get("GET_FORECAST") is get_forecast
    assert "Get_Forecast" in registry

    @tool(name="get_forecast")
    def replacement() -> str:
        """New."""
        return "new"

    registry.register(replacement)
    assert len(registry) == 1
    assert registry["get_forecast"] is replacement
    assert [d.name for d in registry.definitions()] == ["get_forecast"]


def test_registry_decorator_registers_on_definition_and_notifies() -> None:
    registry = ToolRegistry()
    changes: list[list[str]] = []
    unsubscribe = registry.subscribe(lambda r: changes.append(r.names()))

    @registry.tool
    def one() -> int:
        """One."""
        return 1

    @registry.tool(risk="destructive")
    def two() -> int:
        """Two."""
        return 2

    assert isinstance(one, Tool)
    assert registry.names() == ["one", "two"]
    assert registry["two"].definition.risk is ToolRisk.DESTRUCTIVE
    registry.unregister("ONE")
    unsubscribe()
    registry.register(one)
    assert changes == [["one"], ["one", "two"], ["two"]]


def test_unregister_unknown_is_a_clear_error() -> None:
    registry = ToolRegistry([get_forecast])
    with pytest.raises(KeyError, match=r"no tool named 'nope'.*get_forecast"):
        registry.unregister("nope")
    assert registry.get("nope") is None
    with pytest.raises(KeyError, match="no tool named"):
        registry["nope"]


def test_registry_accepts_plain_functions() -> None:
    def ping() -> str:
        """Pings."""
        return "pong"

    registry = ToolRegistry([ping])
    assert registry["ping"].definition.description == "Pings."


def _tags_balance(html: str) -> bool:
    """Whether every element the HTML opens is closed, in order (void elements aside)."""
    from html.parser import HTMLParser

    stack: list[str] = []
    ok = True

    class Checker(HTMLParser):
        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag not in ("br", "img", "hr", "meta", "input"):
                stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            nonlocal ok
            ok = ok and bool(stack) and stack.pop() == tag

    Checker().feed(html)
    return ok and not stack


class Address(BaseModel):
    street: Annotated[str, Field(description="Street and number.")]
    postcode: str | None = None


class Contact(BaseModel):
    name: str
    addresses: list[Address] = []


def test_registry_html_shows_each_tool_and_its_schema_as_a_tree() -> None:
    @tool(title="Delete <files>", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete(path: Annotated[str, Field(description=r"A path like C:\temp\x or \\server\share.")]) -> str:
        """Deletes a file. <script>alert(1)</script>"""
        return "ok"

    @tool(requires_approval=True)
    def send(to: Contact, urgent: bool = False, unit: Unit = Unit.celsius) -> str:
        """Sends a message."""
        return "sent"

    @tool(icon="🌦", risk=ToolRisk.READ_ONLY)
    def weather(city: str) -> str:
        """Weather."""
        return "sunny"

    html = ToolRegistry([delete, send, weather])._repr_html_()
    assert _tags_balance(html), html
    # Everything a tool author wrote is escaped: no markup of theirs reaches the page.
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Delete &lt;files&gt;" in html
    # Backslashes survive (the markdown table lost them).
    assert r"C:\temp\x or \\server\share." in html
    rows = html.split("<tr>")[2:]  # after the header row
    assert len(rows) == 3
    delete_row, send_row, weather_row = rows
    # Icon and name stay together; the title under them.
    assert '<span style="white-space: nowrap"><span>🗑</span>&nbsp;<code>delete</code></span>' in delete_row
    # Risk, and whether a call asks: destructive tools and those that require approval ask.
    assert "destructive" in delete_row
    assert "<strong>asks</strong>" in delete_row
    assert "normal" in send_row
    assert "<strong>asks</strong>" in send_row
    assert "read-only" in weather_row
    assert "runs unasked" in weather_row
    # The schema as a tree: types, required marks, descriptions, enums, defaults, nested models and lists of them.
    assert '<code>path</code> <em style="color: var(--jp-content-font-color2, #666)">string</em>' in delete_row
    assert 'title="required">required</strong>' in delete_row
    assert "<code>to</code>" in send_row
    assert send_row.count("<ul") >= 3
    assert "<code>addresses</code>" in send_row
    assert "list of object" in send_row
    assert "<code>street</code>" in send_row
    assert "Street and number." in send_row
    assert "string | null" in send_row  # postcode
    assert "one of: &quot;celsius&quot;, &quot;fahrenheit&quot;" in send_row
    assert "default false" in send_row
    urgent = send_row[send_row.index("<code>urgent</code>") :].split("</li>")[0]
    assert "required" not in urgent
    assert "Weather." in weather_row


def test_registry_html_for_schemas_it_has_to_read_carefully() -> None:
    recursive = ToolDefinition(
        name="tree",
        parameters={
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}, "free": {}, "<b>": {"type": "string"}},
            "required": ["root"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                }
            },
        },
    )
    empty = ToolDefinition(name="ping")
    html = ToolRegistry([Tool(recursive, lambda invocation: None), Tool(empty, lambda invocation: None)])._repr_html_()
    assert _tags_balance(html)
    assert "<code>children</code>" in html
    assert "Node" in html  # the recursion is named, not followed for ever
    assert "<code>free</code>" in html
    assert ">any<" in html
    assert "<code>&lt;b&gt;</code>" in html
    assert "no parameters" in html
    assert "No tools registered." in ToolRegistry()._repr_html_()


# --- tracebacks: the tool author's frames first -------------------------------------------------------------------


def _helper_that_raises(x: int) -> int:
    raise ValueError(f"bad value {x}")


def _frame_files(text: str) -> list[str]:
    return [line.split('"')[1] for line in text.splitlines() if line.lstrip().startswith('File "')]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_traceback_shows_the_tool_authors_frames_first(kind: str) -> None:
    if kind == "sync":

        @tool
        def broken(x: int) -> int:
            """Breaks."""
            return _helper_that_raises(x)

    else:

        @tool
        async def broken(x: int) -> int:
            """Breaks."""
            return _helper_that_raises(x)

    outcome = await broken.invoke(invocation({"x": 3}, name="broken"))
    assert outcome.error is not None
    trace = outcome.error.traceback
    assert trace is not None
    lines = trace.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    exception_line = lines.index("ValueError: bad value 3")
    files = _frame_files("\n".join(lines[:exception_line]))
    assert files == [__file__, __file__]  # broken, then the helper: only the author's frames before the error
    assert "listed at the end" in lines[1]  # where the machinery's frames were
    moved = "\n".join(lines[exception_line + 1 :])
    assert "Frames of ai_widgets" in moved
    assert all("ai_widgets" in f or "asyncio" in f or "concurrent" in f for f in _frame_files(moved))
    assert _frame_files(moved)  # still there, after


def test_a_chained_traceback_keeps_its_chain_and_one_without_user_frames_is_left_alone() -> None:
    from ai_widgets._traceback import user_first_traceback
    from ai_widgets.tools import ToolError

    def outer() -> None:
        try:
            _helper_that_raises(1)
        except ValueError as exc:
            raise RuntimeError("wrapped") from exc

    try:
        outer()
    except RuntimeError as exc:
        caught = exc
    trace = ToolError.from_exception(caught).traceback
    assert trace is not None
    assert "The above exception was the direct cause of the following exception:" in trace
    assert trace.index("ValueError: bad value 1") < trace.index("RuntimeError: wrapped")
    assert "listed at the end" not in trace  # only the author's frames: nothing to move

    import traceback as tb

    try:
        user_first_traceback(None)  # type: ignore[arg-type]  # fails inside ai_widgets
    except AttributeError as exc:
        inside = exc.with_traceback(exc.__traceback__.tb_next if exc.__traceback__ else None)
    assert _frame_files(user_first_traceback(inside))
    assert user_first_traceback(inside) == "".join(tb.format_exception(type(inside), inside, inside.__traceback__))


# --- how an outcome shows in a notebook -----------------------------------------------------------------------------


def test_an_outcome_shows_in_one_escaped_line() -> None:
    assert ToolOutcome.success({"a": 1})._repr_html_() == (
        '<div class="aiw-outcome"><strong style="color: inherit">Result</strong>'
        '<span style="white-space: pre-wrap">: {&quot;a&quot;: 1}</span></div>'
    )
    assert 'Result</strong><span style="white-space: pre-wrap">: &lt;b&gt;hi&lt;/b&gt;' in (
        ToolOutcome.success("<b>hi</b>")._repr_html_()
    )
    failed = ToolOutcome.failure("told", error=ValueError("<nope>"))._repr_html_()
    assert "Failed</strong>" in failed
    assert "ValueError: &lt;nope&gt;" in failed
    assert len(ToolOutcome.success("x" * 5000)._repr_html_()) < 1000


def test_run_tools_outcome_is_not_shown_twice_in_its_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    from ai_widgets import outcome as outcome_module

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.append((objs, kw)))
    count = [7]
    monkeypatch.setattr(outcome_module, "_execution_count", lambda: count[0])
    outcome = ToolOutcome.success("done")
    outcome_module.mark_shown_by_card(outcome)
    outcome._ipython_display_()  # the value of the run_tool cell: its card shows it
    assert shown == []
    ToolOutcome.success("done")._ipython_display_()  # another outcome: shown
    count[0] = 8
    outcome._ipython_display_()  # the same outcome in a later cell: shown
    assert len(shown) == 2
    (bundle,), options = shown[1]
    assert options == {"raw": True}
    assert bundle["text/plain"] == repr(outcome)
    assert "Result" in bundle["text/html"]


def invocation_of(name: str, arguments: str) -> ToolInvocation:
    return ToolInvocation(tool_call_id="call-1", tool_name=name, arguments=arguments)


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
    outcome = await evil.invoke(invocation_of("raw", '{"x": "' + "a" * 28 + 'b"}'))
    assert time.perf_counter() - started < 1.5
    assert outcome.status == "failure"
    assert "does not match" in (outcome.message or "")
    started = time.perf_counter()
    outcome = await evil.invoke(invocation_of("raw", '{"' + "b" * 28 + 'c": "s", "bb": "not an integer"}'))
    assert time.perf_counter() - started < 1.5
    assert "bb: 'not an integer' is not of type 'integer'" in (outcome.message or "")
    assert (await evil.invoke(invocation_of("raw", '{"x": "aaa", "bb": 2}'))).status == "success"


async def test_a_pattern_python_cannot_compile_is_checked_or_left_to_the_tool() -> None:
    r"""``\p{L}`` is valid ECMA-262 (and Rust) but not Python: checked, not a failure of every call; a pattern no
    engine here takes is left to the tool."""
    letters = raw_tool({"type": "object", "properties": {"x": {"type": "string", "pattern": r"^\p{L}+$"}}})
    assert (await letters.invoke(invocation_of("raw", '{"x": "Ünïcode"}'))).status == "success"
    assert (await letters.invoke(invocation_of("raw", '{"x": "123"}'))).status == "failure"
    unreadable = raw_tool({"type": "object", "properties": {"x": {"type": "string", "pattern": "(("}}})
    assert (await unreadable.invoke(invocation_of("raw", '{"x": "anything"}'))).status == "success"


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
    outcome = await safe.invoke(invocation_of("safe_delete", '{"path": "notes.txt", "root": "/"}'))
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
    assert (await counter.invoke(invocation_of("count", '{"step": "3"}'))).value == 3
    doubled = tool(name="double")(AsyncCounter())
    assert not doubled.is_sync  # a coroutine on the loop, not a thread that cannot be stopped
    assert (await doubled.invoke(invocation_of("double", '{"step": 4}'))).value == 8


async def test_an_async_generator_tool_gives_what_it_yields() -> None:
    """Before: the value was the generator's repr, ``'<async_generator object ...>'``, told to the model as a result."""

    @tool
    async def countdown(start: int) -> Any:
        """Counts down."""
        for n in range(start, 0, -1):
            await asyncio.sleep(0)
            yield n

    assert not countdown.is_sync
    outcome = await countdown.invoke(invocation_of("countdown", '{"start": 3}'))
    assert outcome.value == [3, 2, 1]


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


def test_a_code_argument_must_be_one_of_the_tools_parameters() -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string"}}}
    assert ToolDefinition(name="run", parameters=schema, code_arguments={"code": "python"}).code_arguments
    with pytest.raises(ValueError, match="code argument 'source' is not one of its parameters"):
        ToolDefinition(name="run", parameters=schema, code_arguments={"source": "python"})
