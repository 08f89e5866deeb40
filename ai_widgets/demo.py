"""A scripted model and tools for the quickstart: everything the widget shows, with no key and no network.

``demo_chat()`` builds a ``ChatWidget`` whose model answers by keyword: "weather" calls a tool and answers from its
result, "delete" calls a destructive tool that asks for approval (and answers differently when declined), "write"
streams a long file into a card, "search" runs a provider-side search with progress, anything else gets a short
markdown tour. It plays its part with the person's own things too: a tool they registered that the message names is
called with arguments built from its JSON schema (and answered from its result), and an attached DataFrame is
described from its text view (shape, columns, dtypes, the rows sent). A regenerate answers differently (the wording
is picked by the message and the attempt), and its first reply says it is a scripted model.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
import re
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

import ai_widgets.transports as transports
from ai_widgets.messages import Message, Role, TextPart, ToolCallState
from ai_widgets.tools import Citation, Tool, ToolDefinition, ToolInvocation, ToolOutcome, ToolRisk, tool
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport, default_model
from ai_widgets.widget import ChatWidget

__all__ = [
    "SANDBOX",
    "SCRIPTED_NOTICE",
    "analyst_transport",
    "demo_chat",
    "demo_tools",
    "demo_transport",
    "pick_transport",
]

SANDBOX = Path(tempfile.gettempdir()) / "ai_widgets-demo"

_FORECASTS = {
    "lisbon": ("sunny", 21),
    "oslo": ("snow showers", -3),
    "paris": ("light rain", 11),
    "tokyo": ("clear", 15),
    "nairobi": ("partly cloudy", 24),
}


@tool(title="Weather", icon="🌦", risk=ToolRisk.READ_ONLY)
def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Gets the current weather for a city.

    Args:
        city: The city, e.g. "Lisbon".
        unit: "celsius" or "fahrenheit".
    """
    sky, celsius = _FORECASTS.get(city.casefold(), ("overcast", 14))
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": city, "sky": sky, "temperature": temperature, "unit": unit}


@tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
def delete_file(path: str) -> str:
    """Deletes a file in the demo sandbox.

    Args:
        path: File name inside the sandbox folder.
    """
    target = _in_sandbox(path)
    if not target.exists():
        return f"{path} did not exist; nothing to delete."
    target.unlink()
    return f"Deleted {path}."


@tool(title="Write file", icon="📝")
async def write_file(
    path: str, content: Annotated[str, Field(description="The whole new content")], invocation: ToolInvocation
) -> ToolOutcome:
    """Writes a text file in the demo sandbox.

    Args:
        path: File name inside the sandbox folder.
    """
    import asyncio

    target = _in_sandbox(path)
    lines = content.splitlines(keepends=True)
    written = 0
    with target.open("w", encoding="utf-8") as handle:
        for index, line in enumerate(lines, 1):
            handle.write(line)
            written += len(line)
            if index % 10 == 0 or index == len(lines):
                invocation.progress.report(index / len(lines), f"{index} of {len(lines)} lines")
                await asyncio.sleep(0.05)
    return ToolOutcome.success({"path": path, "bytes": written}, text=f"Wrote **{written}** characters to `{path}`.")


def _in_sandbox(path: str) -> Path:
    SANDBOX.mkdir(parents=True, exist_ok=True)
    name = Path(path).name
    if not name or name in (".", ".."):
        raise ValueError(f"not a file name: {path!r}")
    return SANDBOX / name


def demo_tools() -> list[Tool]:
    """The quickstart's local tools."""
    return [get_weather, delete_file, write_file]


_CODE = '''"""Fibonacci numbers, three ways."""

from functools import cache


def fib_loop(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@cache
def fib_memo(n: int) -> int:
    return n if n < 2 else fib_memo(n - 1) + fib_memo(n - 2)


def fib_matrix(n: int) -> int:
    def mul(x, y):
        return [[x[0][0] * y[0][0] + x[0][1] * y[1][0], x[0][0] * y[0][1] + x[0][1] * y[1][1]],
                [x[1][0] * y[0][0] + x[1][1] * y[1][0], x[1][0] * y[0][1] + x[1][1] * y[1][1]]]
    result, base = [[1, 0], [0, 1]], [[1, 1], [1, 0]]
    while n:
        if n & 1:
            result = mul(result, base)
        base = mul(base, base)
        n >>= 1
    return result[0][1]


if __name__ == "__main__":
    for f in (fib_loop, fib_memo, fib_matrix):
        print(f.__name__, [f(i) for i in range(12)], "→ ok ✓")
'''


def _city(text: str) -> str:
    for city in _FORECASTS:
        if city in text.casefold():
            return city.title()
    match = re.search(r"\bin ([A-Z][a-zA-Z]+)", text)
    return match.group(1) if match else "Lisbon"


def _answer_from_tools(request: ChatRequest, variety: random.Random) -> ScriptedReply:
    call = request.tool_results()[-1]
    outcome = call.outcome
    if call.state is ToolCallState.REJECTED:
        reason = f" You said: *{call.decision_reason}*." if call.decision_reason else ""
        return ScriptedReply(text=f"Understood — I did **not** run `{call.tool_name}`; nothing was changed.{reason}")
    if outcome is None or not outcome.ok:
        message = outcome.model_content() if outcome else "no result"
        return ScriptedReply(text=f"The `{call.tool_name}` call failed: {message}")
    match call.tool_name:
        case "get_weather":
            value = outcome.value
            degree = "°C" if value["unit"] == "celsius" else "°F"
            return ScriptedReply(
                text=f"It is **{value['sky']}** in {value['city']}, {value['temperature']}{degree}. "
                "Ask about *Oslo* for something colder."
            )
        case "delete_file" | "write_file":
            return ScriptedReply(text=f"Done: {outcome.text or outcome.model_content()}")
        case _:
            return ScriptedReply(text=_from_result(call.tool_name, outcome, variety))


def _reply(request: ChatRequest, variety: random.Random) -> ScriptedReply:
    if request.tool_results():
        return _answer_from_tools(request, variety)
    text = _words(request)
    lowered = text.casefold()
    tables = _attached_tables(request)
    if tables:
        return _about_tables(tables, text, variety)
    own = _own_tool(request.tools, text)
    if own is not None:
        arguments = _example_arguments(own.parameters, text)
        return ScriptedReply(
            status=f"Picking the arguments of {own.name}…",
            text=variety.choice(_CALLING).format(name=own.name),
            tool_calls=[ScriptedToolCall(name=own.name, arguments=arguments)],
        )
    if "weather" in lowered or "forecast" in lowered:
        return ScriptedReply(
            status="Checking the forecast…",
            text="Let me check. ",
            tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": _city(text)})],
        )
    if "delete" in lowered or "remove" in lowered:
        return ScriptedReply(
            status="Deciding what to clean up…",
            tool_calls=[ScriptedToolCall(name="delete_file", arguments={"path": "notes.txt"})],
        )
    if "write" in lowered or "code" in lowered or "file" in lowered:
        return ScriptedReply(
            status="Drafting the file…",
            text="I'll write it to the sandbox. ",
            tool_calls=[ScriptedToolCall(name="write_file", arguments={"path": "fib.py", "content": _CODE})],
        )
    if "search" in lowered or "find" in lowered:
        citations = [
            Citation(url="https://jupyter.org", title="Project Jupyter"),
            Citation(url="https://anywidget.dev", title="anywidget"),
        ]
        links = "\n".join(f"- [{c.title}]({c.url})" for c in citations)
        return ScriptedReply(
            status="Searching…",
            tool_calls=[
                ScriptedToolCall(
                    name="web_search",
                    arguments={"query": text},
                    progress=[(None, "sending the query"), (0.4, "reading 12 pages"), (0.9, "ranking")],
                    provider_result=ToolOutcome.success({"hits": len(citations)}, citations=citations),
                )
            ],
            text_after_tools=f"Here is what I found:\n\n{links}",
        )
    return ScriptedReply(
        status="Thinking…",
        reasoning="The user said something open-ended; offer a tour of what this demo can do.",
        text=(
            f"{variety.choice(_GREETINGS)} I'm a **scripted** model (no API key needed). Try:\n\n"
            "| ask | what you'll see |\n|---|---|\n"
            "| *What's the weather in Oslo?* | a tool card filling in, running, and an answer from its result |\n"
            "| *Delete my notes* | a destructive tool that waits for your approval |\n"
            "| *Write some code to a file* | a long argument streaming into its card, with progress |\n"
            "| *Search for anywidget* | a provider-run search with progress and citations |\n\n"
            '```python\nchat.ask_sync("What\'s the weather in Lisbon?")\n```'
        ),
    )


def demo_transport(*, realistic: bool = True) -> ScriptedTransport:
    """The scripted model. With ``realistic``, it pauses like a real model (status line, streaming speed).

    Each transport counts the attempts at each user message, so a regenerate words its answer differently (the same
    way every run: the wording is picked by the message and the attempt)."""
    play = _attempts(_reply)
    if realistic:
        return ScriptedTransport(play, delay=0.02, decide_delay=0.8)
    return ScriptedTransport(play)


# --- the person's own things: their tools, their DataFrames, and an answer worded anew on each attempt -----------------

#: The first line of a conversation's first reply: what answers is a script, whatever it seems to do.
SCRIPTED_NOTICE = "*Scripted demo model: no AI and no network; it plays its part with your tools and data.*\n\n"
_GREETINGS = ("Hi!", "Hello!", "Welcome!", "Hi there!")
_CALLING = (
    "Your tool `{name}` fits; calling it. ",
    "I'll ask `{name}` for that. ",
    "That's a job for your `{name}` tool. ",
)
_RESULT = (
    "`{name}` says: {value}.",
    "Your tool `{name}` answered: {value}.",
    "From `{name}`: {value}.",
)
_DEMO_TOOLS = frozenset({"get_weather", "delete_file", "write_file", "web_search"})
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "for",
        "from",
        "get",
        "how",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "what",
        "with",
        "you",
        "your",
    ]
)


def _attempts(reply: Callable[[ChatRequest, random.Random], ScriptedReply]) -> Callable[[ChatRequest], ScriptedReply]:
    """``reply`` with its wording seeded by the user message and the attempt at it (the first request of a turn on a
    message seen before is a regenerate: the next attempt), and the conversation's first reply saying what it is."""
    attempts: dict[str, int] = {}

    def play(request: ChatRequest) -> ScriptedReply:
        user = _last_user(request.messages)
        key = (user.id or user.text) if user is not None else ""
        opening = request.reply is None or not request.reply.parts  # a turn's first request, not a follow-up
        if opening:
            attempts[key] = attempts.get(key, -1) + 1
        attempt = attempts.get(key, 0)
        answer = reply(request, random.Random(zlib.crc32(f"{_words(request)}\x00{attempt}".encode())))
        first = not any(m.role is Role.ASSISTANT and m is not request.reply for m in request.messages)
        if first and opening:
            return dataclasses.replace(answer, text=SCRIPTED_NOTICE + answer.text)
        return answer

    return play


def _last_user(messages: list[Message]) -> Message | None:
    return next((m for m in reversed(messages) if m.role is Role.USER), None)


def _words(request: ChatRequest) -> str:
    """What the person wrote in their last message (its first text part; the rest are attachments' text views)."""
    user = _last_user(request.messages)
    if user is None or not user.parts or not isinstance(user.parts[0], TextPart):
        return ""
    return user.parts[0].text


def _stems(text: str) -> set[str]:
    """The words of ``text`` that say something (``count_words`` and "Count the words" share ``count`` and ``word``)."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).casefold())
    return {w.removesuffix("s") if len(w) > 3 else w for w in words if len(w) > 1 and w not in _STOP_WORDS}


def _own_tool(tools: list[ToolDefinition], text: str) -> ToolDefinition | None:
    """The person's own tool (one this demo has no script for) that the message names best, by the words of its name
    and title (its description's words count for less); ``None`` when none shares a word with the message."""
    asked = _stems(text)
    best: tuple[int, ToolDefinition] | None = None
    for definition in tools:
        if definition.name in _DEMO_TOOLS:
            continue
        named = _stems(definition.name) | _stems(definition.title or "")
        score = 3 * len(asked & named) + len(asked & _stems(definition.description))
        if score > 0 and (best is None or score > best[0]):
            best = (score, definition)
    return None if best is None else best[1]


def _quoted(text: str) -> list[str]:
    """The quoted pieces of the message (in straight, curly or back quotes), in order."""
    return [
        next(g for g in m.groups() if g is not None)
        for m in re.finditer(r"\"([^\"]+)\"|“([^”]+)”|`([^`]+)`|(?<!\w)'([^']+)'(?!\w)", text)
    ]


def _example_arguments(schema: dict[str, Any], text: str) -> dict[str, Any]:
    """Arguments for a tool's JSON schema: each required field, from the message where it fits (a quoted piece for
    text, a number in it for a number, an enum value it names), else an example of the field's type and format."""
    quoted = _quoted(text)
    numbers = [float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", text)]
    return _example_object(schema, schema.get("$defs", {}), text, quoted, numbers)


def _example_object(
    schema: dict[str, Any], defs: dict[str, Any], text: str, quoted: list[str], numbers: list[float]
) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if name in properties]
    return {name: _example(properties[name], defs, text, quoted, numbers) for name in required}


def _example(schema: dict[str, Any], defs: dict[str, Any], text: str, quoted: list[str], numbers: list[float]) -> Any:
    """A value for one field (``quoted`` and ``numbers`` are used up as they are taken)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = defs.get(ref.removeprefix("#/$defs/"), {})
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        options = schema["enum"]
        return next((o for o in options if isinstance(o, str) and o.casefold() in text.casefold()), options[0])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return _example(branches[0], defs, text, quoted, numbers)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    match kind:
        case "integer" | "number":
            value = numbers.pop(0) if numbers else float(schema.get("minimum", 3))
            value = min(max(value, float(schema.get("minimum", value))), float(schema.get("maximum", value)))
            return int(value) if kind == "integer" else value
        case "boolean":
            return True
        case "array":
            return [_example(schema.get("items", {}), defs, text, quoted, numbers)]
        case "object":
            return _example_object(schema, defs, text, quoted, numbers)
        case "null":
            return None
        case _:
            return _example_text(schema, text, quoted)


def _example_text(schema: dict[str, Any], text: str, quoted: list[str]) -> str:
    formats = {
        "date": "2025-01-31",
        "date-time": "2025-01-31T12:00:00Z",
        "time": "12:00:00",
        "email": "ada@example.com",
        "uri": "https://example.com",
        "url": "https://example.com",
        "uuid": "00000000-0000-4000-8000-000000000000",
    }
    example = formats.get(schema.get("format", ""))
    if example is not None:
        return example
    value = quoted.pop(0) if quoted else (text.partition(":")[2].strip() or text.strip() or "example")
    return value[: schema["maxLength"]] if isinstance(schema.get("maxLength"), int) else value


def _from_result(name: str, outcome: ToolOutcome, variety: random.Random) -> str:
    """An answer made of a tool's result: its fields in bold with their values, or its text."""
    value = outcome.value
    if isinstance(value, dict) and value:
        shown = ", ".join(
            f"**{key}** = {json.dumps(item, ensure_ascii=False, default=str)}" for key, item in value.items()
        )
    elif value is not None and not isinstance(value, dict):
        shown = f"**{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)}**"
    else:
        shown = outcome.text or outcome.model_content()
    return variety.choice(_RESULT).format(name=name, value=shown)


@dataclass(frozen=True)
class _Frame:
    """An attached DataFrame as the model got it: its text view's name, kind, shape, columns (with dtypes) and the
    rows sent."""

    name: str
    kind: str
    shape: str
    dtypes: dict[str, str]
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> list[str]:
        at = self.header.index(name)
        return [row[at] for row in self.rows if at < len(row)]


def _frame(text: str) -> _Frame | None:
    """The DataFrame in an attachment's text view (``attachments.table_text``), or ``None`` for any other."""
    lines = text.splitlines()
    title = re.fullmatch(r"Attached (.*(?:DataFrame|Series)) `([^`]+)`:", lines[0]) if lines else None
    if title is None or len(lines) < 3 or not lines[2].startswith("Columns (dtype): "):
        return None
    dtypes = dict(re.findall(r"(.+?) \(([^()]*)\)(?:, |$)", lines[2].removeprefix("Columns (dtype): ")))
    table = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines if line.startswith("|")]
    header = table[0] if table else []
    first = 1 if header and header[0] == "" else 0  # the index column, when the frame has one
    rows = [row[first:] for row in table[2:]]
    return _Frame(title.group(2), title.group(1), lines[1], dtypes, header[first:], rows)


def _attached_tables(request: ChatRequest) -> list[_Frame]:
    """The DataFrames attached to the last user message (``attach=`` or ``@name``)."""
    user = _last_user(request.messages)
    parts = user.parts[1:] if user is not None else []
    found = (_frame(part.text) for part in parts if isinstance(part, TextPart))
    return [frame for frame in found if frame is not None]


def _about_column(frame: _Frame, column: str) -> str | None:
    """What the rows sent say of one column: a number column's range, total and mean; a text column's values."""
    cells = frame.column(column) if column in frame.header else []
    if not cells:
        return None
    numbers = [n for n in (_number(cell) for cell in cells) if n is not None]
    if len(numbers) == len(cells):
        return (
            f"`{column}` runs from {min(numbers):g} to {max(numbers):g} "
            f"(total {sum(numbers):g}, mean {sum(numbers) / len(numbers):.4g})"
        )
    values = list(dict.fromkeys(cells))
    listed = ", ".join(values[:5]) + (", …" if len(values) > 5 else "")
    return f"`{column}` has {len(values)} distinct value{'s' if len(values) != 1 else ''} ({listed})"


def _about_tables(frames: list[_Frame], text: str, variety: random.Random) -> ScriptedReply:
    """An answer about the attached DataFrames from their text views: shape, columns and dtypes, then what the rows
    sent say of the columns the message names (else of every column, in an order picked by the attempt)."""
    paragraphs: list[str] = []
    asked = _stems(text)
    for frame in frames:
        columns = ", ".join(f"`{c}` ({t})" for c, t in frame.dtypes.items())
        opening = variety.choice(
            (
                f"**`{frame.name}`** is a {frame.kind} of {frame.shape}: {columns}.",
                f"`{frame.name}` ({frame.kind}) has {frame.shape}; its columns are {columns}.",
                f"I got **`{frame.name}`**, {frame.shape}, with the columns {columns}.",
            )
        )
        named = [c for c in frame.header if _stems(c) & asked] or list(frame.header)
        if len(named) > 1:
            named = variety.sample(named, len(named))
        facts = [fact for fact in (_about_column(frame, c) for c in named) if fact is not None]
        seen = f"In the {len(frame.rows)} row{'s' if len(frame.rows) != 1 else ''} I was sent: "
        paragraphs.append(opening + ("\n\n" + seen + "; ".join(facts) + "." if facts else ""))
    return ScriptedReply(status="Reading the table…", text="\n\n".join(paragraphs))


# --- the quickstart's data section: a scripted analyst that reads the tables it is shown ------------------------------


@dataclass(frozen=True)
class _Group:
    """One group of a table's rows (the rows of one region): its measure's first and last value, and total."""

    name: str
    first: float
    last: float
    total: float

    @property
    def growth(self) -> float:
        return self.last / self.first - 1 if self.first else 0.0


@dataclass(frozen=True)
class _Table:
    """A table as the model got it (an attached DataFrame's text view), grouped by its coarsest text column."""

    name: str
    shape: str
    columns: list[str]
    by: str
    measure: str
    groups: list[_Group]

    @property
    def best(self) -> _Group:
        return max(self.groups, key=lambda g: g.growth)


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _table(text: str) -> _Table | None:
    """The table in an attached DataFrame's text view (its markdown rows), or ``None``."""
    lines = text.splitlines()
    rows = [[cell.strip() for cell in line.strip("|").split("|")][1:] for line in lines if line.startswith("|")]
    name = re.search(r"`([^`]+)`", lines[0])
    if len(rows) < 3 or name is None:
        return None
    columns, rows = rows[0], rows[2:]  # the header and its |---| line; the index column is dropped above
    numeric = [i for i in range(len(columns)) if all(_number(row[i]) is not None for row in rows)]
    text_columns = [i for i in range(len(columns)) if i not in numeric and len({r[i] for r in rows}) < len(rows)]
    if not numeric or not text_columns:
        return None

    # The coarsest grouping (region, not month): the fewest values, then the longest runs of one value.
    def coarseness(i: int) -> tuple[int, int]:
        return len({row[i] for row in rows}), sum(a[i] != b[i] for a, b in itertools.pairwise(rows))

    by = min(text_columns, key=coarseness)
    measure = numeric[-1]
    values: dict[str, list[float]] = {}
    for row in rows:
        values.setdefault(row[by], []).append(_number(row[measure]) or 0.0)
    groups = [_Group(key, v[0], v[-1], sum(v)) for key, v in values.items()]
    return _Table(name.group(1), lines[1], columns, columns[by], columns[measure], groups)


def _tables(request: ChatRequest) -> list[_Table]:
    """Every table the person attached in the conversation, oldest first."""
    parts = (part for m in request.messages if m.role is Role.USER for part in m.parts[1:])
    found = (_table(part.text) for part in parts if isinstance(part, TextPart) and part.text.startswith("Attached "))
    return [table for table in found if table is not None]


def _typed(schema: dict[str, Any], table: _Table) -> str:
    """A typed answer from the table: each field of the schema filled from the group that grew most, by its name (a
    text field gets the group's name; a number field named ``first``/``start``, ``last``/``end`` or ``growth``/``change``
    that number, any other its total)."""
    best = table.best
    answer: dict[str, Any] = {}
    for key, field in schema.get("properties", {}).items():
        words = set(re.split(r"[_\W]+", key.casefold()))
        if field.get("type") == "string":
            answer[key] = best.name
        elif words & {"first", "start", "initial"}:
            answer[key] = best.first
        elif words & {"last", "end", "final", "latest"}:
            answer[key] = best.last
        elif words & {"growth", "change", "ratio", "increase"}:
            answer[key] = round(best.growth, 4)
        else:
            answer[key] = best.total
    return json.dumps(answer)


def _analyst_reply(request: ChatRequest) -> ScriptedReply | str:
    tables = _tables(request)
    user = next((m for m in reversed(request.messages) if m.role is Role.USER), None)
    question = user.parts[0].text.casefold() if user and isinstance(user.parts[0], TextPart) else ""
    if not tables:
        return (
            "Attach a table and I will read it: `await analyst.ask('Summarise these sales', attach={'sales': sales})`."
        )
    table = tables[-1]
    best = table.best
    if request.tool_results():
        call = request.tool_results()[-1]
        if call.outcome is None or not call.outcome.ok:
            return (
                f"The `{call.tool_name}` call failed: {call.outcome.model_content() if call.outcome else 'no result'}"
            )
        return f"There it is: **{best.name}**'s {table.measure} rose from {best.first:g} to {best.last:g} ({best.growth:+.0%})."
    if request.output_schema is not None:
        return ScriptedReply(status="Reading the table…", text=_typed(request.output_schema, table))
    tool = next((t for t in request.tools if t.parameters.get("properties")), None)
    if tool is not None and ("plot" in question or "chart" in question):
        parameter = next(iter(tool.parameters["properties"]))
        return ScriptedReply(
            status="Picking the region…",
            text=f"{best.name} grew most; plotting it. ",
            tool_calls=[ScriptedToolCall(name=tool.name, arguments={parameter: best.name})],
        )
    rows = "\n".join(f"| {g.name} | {g.first:g} | {g.last:g} | {g.total:g} | {g.growth:+.0%} |" for g in table.groups)
    return ScriptedReply(
        status="Reading the table…",
        text=(
            f"**`{table.name}`**: {table.shape} ({', '.join(table.columns)}). {table.measure} by {table.by}:\n\n"
            f"| {table.by} | first | last | total | change |\n|---|---|---|---|---|\n{rows}\n\n"
            f"**{best.name}** grew most: {best.first:g} → {best.last:g} ({best.growth:+.0%})."
        ),
    )


def analyst_transport(*, realistic: bool = True) -> ScriptedTransport:
    """The scripted model of the quickstart's data section: it reads the DataFrames attached to the conversation
    (their text views, as any model gets them), summarises them, calls a plotting tool for the group that grew most,
    and answers typed questions from them. With ``realistic``, it pauses like a real model."""
    if realistic:
        return ScriptedTransport(_analyst_reply, delay=0.015, decide_delay=0.5)
    return ScriptedTransport(_analyst_reply)


def _reachable(base_url: str) -> bool:
    """Whether an OpenAI-compatible server answers at ``base_url`` (a quick GET of /models)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=1.5) as response:
            return bool(200 <= response.status < 500)
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (OSError, ValueError):
        return False


def pick_transport(environ: dict[str, str] | None = None) -> tuple[Any, str]:
    """The model the quickstart talks to, and a sentence that says which and why.

    A real provider when one is configured, the scripted model otherwise:

    - ``AI_WIDGETS_BASE_URL``: a local or hosted OpenAI-compatible server (Ollama ``http://localhost:11434/v1``,
      vLLM, LM Studio...), used when it answers; ``AI_WIDGETS_MODEL`` names the model.
    - ``OPENAI_API_KEY``: OpenAI.
    - ``ANTHROPIC_API_KEY``: Anthropic.
    - ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``: Gemini (the SDK uses ``GOOGLE_API_KEY`` when both are set).

    ``AI_WIDGETS_MODEL`` names the model; by default each provider's current small model
    (``ai_widgets.transports.DEFAULT_MODELS``).

    The key itself is never read into the sentence, the widget or the notebook: the SDK reads it from the
    environment. A provider's transport (and its SDK) loads only when it is the one picked.
    """
    env = dict(os.environ if environ is None else environ)
    base_url = env.get("AI_WIDGETS_BASE_URL")
    try:
        if base_url:
            if _reachable(base_url):
                name = default_model("openai-compatible", env)
                return transports.OpenAIChatTransport(name, base_url=base_url), (
                    f"Using the OpenAI-compatible server at {base_url} (model {name}), from AI_WIDGETS_BASE_URL."
                )
            fallback = f"AI_WIDGETS_BASE_URL is set, but nothing answers at {base_url}; "
        elif env.get("OPENAI_API_KEY"):
            name = default_model("openai-chat", env)
            return transports.OpenAIChatTransport(name), f"Using OpenAI {name} (OPENAI_API_KEY is set)."
        elif env.get("ANTHROPIC_API_KEY"):
            name = default_model("anthropic", env)
            return transports.AnthropicTransport(name), f"Using Anthropic {name} (ANTHROPIC_API_KEY is set)."
        elif env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY"):
            name = default_model("gemini", env)
            variable = "GOOGLE_API_KEY" if env.get("GOOGLE_API_KEY") else "GEMINI_API_KEY"
            return transports.GeminiTransport(name), f"Using Gemini {name} ({variable} is set)."
        else:
            fallback = "No provider is configured; "
    except ImportError as exc:
        fallback = f"A provider is configured but its SDK is missing ({exc}); "
    return demo_transport(), fallback + "using the built-in scripted model (no key, no network)."


def demo_chat(**widget_options: Any) -> ChatWidget:
    """A ``ChatWidget`` on the scripted model with the demo tools."""
    options: dict[str, Any] = {
        "transport": demo_transport(),
        "tools": demo_tools(),
        "suggestions": [
            "What's the weather in Oslo?",
            "Delete my notes",
            "Write some code to a file",
            "Search for anywidget",
        ],
    }
    options.update(widget_options)
    return ChatWidget(**options)
