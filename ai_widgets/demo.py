"""A scripted model and tools for the quickstart: everything the widget shows, with no key and no network.

``demo_chat()`` builds a ``ChatWidget`` whose model answers by keyword: "weather" calls a tool and answers from its
result, "delete" calls a destructive tool that asks for approval (and answers differently when declined), "write"
streams a long file into a card, "search" runs a provider-side search with progress, anything else gets a short
markdown tour.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

import ai_widgets.transports as transports
from ai_widgets.messages import ToolCallState
from ai_widgets.tools import Citation, Tool, ToolInvocation, ToolOutcome, ToolRisk, tool
from ai_widgets.transports import ChatRequest, ScriptedReply, ScriptedToolCall, ScriptedTransport, default_model
from ai_widgets.widget import ChatWidget

__all__ = ["SANDBOX", "demo_chat", "demo_tools", "demo_transport", "pick_transport"]

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


def _answer_from_tools(request: ChatRequest) -> ScriptedReply:
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
        case _:
            return ScriptedReply(text=f"Done: {outcome.text or outcome.model_content()}")


def _reply(request: ChatRequest) -> ScriptedReply:
    if request.tool_results():
        return _answer_from_tools(request)
    text = request.last_user_text
    lowered = text.casefold()
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
            "Hi! I'm a **scripted** model (no API key needed). Try:\n\n"
            "| ask | what you'll see |\n|---|---|\n"
            "| *What's the weather in Oslo?* | a tool card filling in, running, and an answer from its result |\n"
            "| *Delete my notes* | a destructive tool that waits for your approval |\n"
            "| *Write some code to a file* | a long argument streaming into its card, with progress |\n"
            "| *Search for anywidget* | a provider-run search with progress and citations |\n\n"
            '```python\nchat.ask_sync("What\'s the weather in Lisbon?")\n```'
        ),
    )


def demo_transport(*, realistic: bool = True) -> ScriptedTransport:
    """The scripted model. With ``realistic``, it pauses like a real model (status line, streaming speed)."""
    if realistic:
        return ScriptedTransport(_reply, delay=0.02, decide_delay=0.8)
    return ScriptedTransport(_reply)


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
