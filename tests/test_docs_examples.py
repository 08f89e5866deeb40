"""Every ```python block of the README and of the guides in docs/ runs as pasted, so an example cannot drift from the
API.

A block runs in a fresh namespace, top-level ``await`` allowed, as a notebook cell would run it, in an empty folder,
with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` pointing at a loopback server (so a block that only builds a chat for
OpenAI builds it). An HTML comment on the line before a block says how else to run it:

- ``<!-- example: openai (...) -->``: the block asks OpenAI by model string; the loopback server answers like
  OpenAI's Chat Completions, and the ``chat`` or ``session`` it makes is then sent a message, which must be answered (through the block's own tool, where it has
  one).
- ``<!-- example: continues (...) -->``: it runs in the namespace the block before it on the same page left.
- ``<!-- example: not run: <why> -->``: it is not run, and must say why.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ai_widgets import ChatSession, ChatWidget, MessageStatus
from tests.helpers import wait_for
from tests.providers.local_server_emulators import JSON, Turn, VLLMEmulator
from tests.providers.loopback import Request, Response, loopback

ROOT = Path(__file__).resolve().parent.parent
NOTES = Path("notes.txt")  # what the README's delete_file is asked to delete, in the test's own folder
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- example: (openai|continues|not run: .+?)(?: \(.*\))? -->")
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    code: str
    mode: str  # "run", "openai", "continues", or "not run: why"

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.fullmatch(before.strip())
            if before.strip().startswith("<!-- example") and marker is None:
                raise AssertionError(f"{page.name}: unreadable example marker {before!r}")
            line = text.count("\n", 0, match.start()) + 1
            found.append(Example(page, line, match.group(1), marker.group(1) if marker else "run"))
    return found


EXAMPLES = examples()
PREVIOUS = {b.id: a for a, b in itertools.pairwise(EXAMPLES) if a.page == b.page}


def weather_model(body: JSON) -> Turn:
    """Calls the tool the last question is about when the request offers it and has no result yet; otherwise answers
    from the result."""
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    asked = [message for message in body["messages"] if message.get("role") == "user"][-1]["content"]
    answered = body["messages"][-1].get("role") == "tool"
    if "delete" in str(asked):
        return Turn(text="Deleted.") if answered else Turn(calls=[("delete_file", {"path": "notes.txt"})])
    if "get_weather" in offered and not answered:
        return Turn(calls=[("get_weather", {"city": "Lisbon"})])
    return Turn(text="Sunny in Lisbon.")


@contextmanager
def openai_like(monkeypatch: pytest.MonkeyPatch) -> Iterator[VLLMEmulator]:
    """A loopback server that answers Chat Completions for whatever model is asked, as the environment's OpenAI."""
    emulator = VLLMEmulator(weather_model)

    def handle(request: Request) -> Response:
        if request.method == "POST":
            emulator.served_model_name = request.json().get("model")
        return emulator(request)

    with loopback(handle) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-example")
        yield emulator


async def run(code: str, namespace: dict[str, Any], name: str) -> None:
    compiled = compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, namespace)
    if inspect.iscoroutine(result):
        await result


def close_all(namespace: dict[str, Any]) -> None:
    for value in namespace.values():
        if isinstance(value, (ChatWidget, ChatSession)):
            value.close()


def test_every_example_is_run_or_says_why_not() -> None:
    assert len(EXAMPLES) >= 15  # the pages were found
    for example in EXAMPLES:
        if example.mode.startswith("not run"):
            assert len(example.mode) > len("not run: ") + 10, example.id
        if example.mode == "continues":
            assert example.id in PREVIOUS, f"{example.id} continues nothing"
    readme = [e for e in EXAMPLES if e.page.name == "README.md"]
    assert readme
    assert all(e.mode in ("run", "openai") for e in readme), "the README's examples all run"


def chain(example: Example) -> list[Example]:
    """The example, after the ones it continues (each test runs them itself, so tests may run in any order)."""
    blocks = [example]
    while blocks[0].mode == "continues":
        blocks.insert(0, PREVIOUS[blocks[0].id])
    return blocks


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not e.mode.startswith("not run")], ids=lambda e: e.id)
async def test_example_runs_as_pasted(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with openai_like(monkeypatch) as emulator:
        try:
            for block in chain(example):
                await run(block.code, namespace, block.id)
            if example.mode == "openai":
                await chat_through_the_loopback(namespace, emulator)
        finally:
            close_all(namespace)


async def chat_through_the_loopback(namespace: dict[str, Any], emulator: VLLMEmulator) -> None:
    """The chat the example made answers a message through the provider's HTTP API, running the example's tool."""
    made = namespace.get("chat", namespace.get("session"))
    session = made.session if isinstance(made, ChatWidget) else made
    assert isinstance(session, ChatSession), "an openai example makes a `chat` or a `session`"
    reply = await session.send("What's the weather in Lisbon?")
    assert reply.status is MessageStatus.COMPLETED, reply.error
    assert reply.text == "Sunny in Lisbon."
    assert emulator.bodies, "the request went to the loopback server"
    if "get_weather" in namespace:
        [call] = reply.tool_calls
        assert call.tool_name == "get_weather"
        assert call.outcome is not None
        assert call.outcome.value == {"city": "Lisbon", "forecast": "sunny"}
    if "delete_file" in namespace:  # the README's risky tool asks in its card, and runs once allowed
        await asyncio.to_thread(NOTES.write_text, "x")
        turn = asyncio.ensure_future(session.send("Please delete notes.txt"))
        await wait_for(lambda: bool(session.pending_approvals) or turn.done())
        [waiting] = session.pending_approvals
        assert waiting.tool_name == "delete_file"
        assert await asyncio.to_thread(NOTES.is_file)  # nothing ran before the decision
        session.approve(waiting.tool_call_id, "approved")
        reply = await turn
        assert reply.status is MessageStatus.COMPLETED, reply.error
        assert not await asyncio.to_thread(NOTES.is_file)
