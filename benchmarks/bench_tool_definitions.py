"""JSON bytes of the tool definitions sent on every request: ai_widgets against pydantic-ai, same 20 functions.

Both sides get the same plain functions. For pydantic-ai we capture the ``ToolDefinition`` list its agent hands
to the model (through a ``FunctionModel``), and count the same three fields a provider receives: name,
description and the parameters' JSON Schema.
"""

from __future__ import annotations

import datetime
import json
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field


class Unit(str, Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class Location(BaseModel):
    city: str = Field(description="City name")
    country: str | None = Field(description="ISO 3166 country code")


class Attendee(BaseModel):
    email: str
    optional: bool = False


class Label(BaseModel):
    name: str
    color: str | None = None


def get_weather(city: str, unit: Unit = Unit.celsius) -> str:
    """Gets the current weather for a city.

    Args:
        city: The city, e.g. "Lisbon".
        unit: Temperature unit.
    """
    return ""


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
    return ""


def search_web(query: str, max_results: Annotated[int, Field(ge=1, le=50)] = 5, site: str | None = None) -> list[str]:
    """Searches the web.

    Args:
        query: What to search for.
        max_results: How many results to return.
        site: Restrict results to this domain.
    """
    return []


def read_file(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """Reads a text file from the workspace.

    Args:
        path: Path relative to the workspace root.
        start_line: First line to read (1-based).
        end_line: Last line to read (inclusive).
    """
    return ""


def write_file(path: str, content: str, overwrite: bool = False) -> str:
    """Writes a text file in the workspace.

    Args:
        path: Path relative to the workspace root.
        content: The full new content of the file.
        overwrite: Replace the file if it exists.
    """
    return ""


def list_directory(path: str = ".", pattern: str | None = None, recursive: bool = False) -> list[str]:
    """Lists the files in a directory.

    Args:
        path: Directory relative to the workspace root.
        pattern: Glob pattern to filter names.
        recursive: Descend into subdirectories.
    """
    return []


def delete_file(path: str) -> str:
    """Deletes a file from the workspace.

    Args:
        path: Path relative to the workspace root.
    """
    return ""


def run_python(code: str, timeout_seconds: Annotated[float, Field(gt=0, le=600)] = 30.0) -> str:
    """Runs Python code in a sandbox and returns its output.

    Args:
        code: The program.
        timeout_seconds: Stop it after this long.
    """
    return ""


def sql_query(sql: str, database: Literal["analytics", "billing"], row_limit: int = 100) -> list[dict[str, Any]]:
    """Runs a read-only SQL query.

    Args:
        sql: A single SELECT statement.
        database: Which database to query.
        row_limit: At most this many rows.
    """
    return []


def send_email(to: list[str], subject: str, body: str, cc: list[str] | None = None) -> str:
    """Sends an email.

    Args:
        to: Recipient addresses.
        subject: Subject line.
        body: Plain-text body.
        cc: Addresses to copy.
    """
    return ""


def create_calendar_event(
    title: str, start: datetime.datetime, end: datetime.datetime, attendees: list[Attendee] | None = None
) -> str:
    """Creates a calendar event.

    Args:
        title: Event title.
        start: Start time.
        end: End time.
        attendees: People to invite.
    """
    return ""


def get_stock_price(ticker: str, exchange: str | None = None) -> float:
    """Gets the latest price of a stock.

    Args:
        ticker: Ticker symbol, e.g. AAPL.
        exchange: Exchange code, e.g. NASDAQ.
    """
    return 0.0


def convert_currency(amount: float, from_currency: str, to_currency: str) -> float:
    """Converts an amount between currencies.

    Args:
        amount: The amount to convert.
        from_currency: ISO 4217 code of the source currency.
        to_currency: ISO 4217 code of the target currency.
    """
    return 0.0


def translate(text: str, target_language: str, source_language: str | None = None) -> str:
    """Translates text.

    Args:
        text: Text to translate.
        target_language: BCP 47 code of the target language.
        source_language: BCP 47 code of the source; detected when omitted.
    """
    return ""


def summarize_url(url: str, max_words: int = 200) -> str:
    """Fetches a web page and summarises it.

    Args:
        url: The page address.
        max_words: Length of the summary.
    """
    return ""


def create_issue(repository: str, title: str, body: str = "", labels: list[Label] | None = None) -> str:
    """Opens an issue in a repository.

    Args:
        repository: owner/name.
        title: Issue title.
        body: Issue text in markdown.
        labels: Labels to add.
    """
    return ""


def http_request(
    url: str,
    method: Literal["GET", "POST", "PUT", "DELETE"] = "GET",
    headers: dict[str, str] | None = None,
    body: str | None = None,
) -> str:
    """Makes an HTTP request.

    Args:
        url: The address.
        method: HTTP method.
        headers: Extra request headers.
        body: Request body.
    """
    return ""


def resize_image(path: str, width: int, height: int | None = None, keep_aspect: bool = True) -> str:
    """Resizes an image file.

    Args:
        path: Image path.
        width: New width in pixels.
        height: New height in pixels; from the aspect ratio when omitted.
        keep_aspect: Keep the aspect ratio.
    """
    return ""


def geocode(address: str) -> dict[str, float]:
    """Finds the coordinates of an address.

    Args:
        address: A postal address or place name.
    """
    return {}


def set_reminder(message: str, at: datetime.datetime, repeat: Literal["none", "daily", "weekly"] = "none") -> str:
    """Sets a reminder.

    Args:
        message: What to remind about.
        at: When.
        repeat: How often to repeat.
    """
    return ""


FUNCTIONS = [
    get_weather,
    get_forecast,
    search_web,
    read_file,
    write_file,
    list_directory,
    delete_file,
    run_python,
    sql_query,
    send_email,
    create_calendar_event,
    get_stock_price,
    convert_currency,
    translate,
    summarize_url,
    create_issue,
    http_request,
    resize_image,
    geocode,
    set_reminder,
]


def _dumps(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def ours() -> list[dict[str, Any]]:
    from ai_widgets import tool

    return [tool(fn).definition.model_schema() for fn in FUNCTIONS]


def pydantic_ai() -> list[dict[str, Any]]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    captured: list[dict[str, Any]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        captured.extend(
            {"name": t.name, "description": t.description or "", "parameters": t.parameters_json_schema}
            for t in info.function_tools
        )
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(model), tools=FUNCTIONS)
    agent.run_sync("hi")
    return captured


def run(*, quick: bool = False) -> str:
    mine, theirs = ours(), pydantic_ai()
    by_name = {d["name"]: d for d in theirs}
    rows = []
    for definition in mine:
        other = by_name[definition["name"]]
        rows.append((definition["name"], _dumps(definition), _dumps(other)))
    total_ours = sum(r[1] for r in rows)
    total_theirs = sum(r[2] for r in rows)
    lines = [
        "## Tool definitions: JSON bytes sent on every request (20 realistic tools)",
        "",
        "Name, description and parameters schema, compact JSON. Lower is better.",
        "",
        "| tool | ai_widgets (B) | pydantic-ai (B) | ours / theirs |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {a} | {b} | {a / b:.2f} |" for name, a, b in rows]
    lines.append(f"| **total** | **{total_ours}** | **{total_theirs}** | **{total_ours / total_theirs:.2f}** |")
    larger = [name for name, a, b in rows if a > b]
    lines.append("")
    lines.append("Larger than pydantic-ai's: " + (", ".join(larger) if larger else "none"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
