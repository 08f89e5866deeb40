"""Every ```python block of the README and of the guides in docs/ runs as pasted, so an example cannot drift from the
API: a block without a marker is run, and its test fails when it raises.

A block runs in a fresh namespace, top-level ``await`` allowed, as a notebook cell would run it, in an empty folder,
with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` pointing at a loopback server (so a block that only builds a chat for
OpenAI builds it). An HTML comment on the line before a block says how else to run it:

- ``<!-- example: openai (...) -->``: the block asks OpenAI by model string; the loopback server answers like
  OpenAI's Chat Completions, and the ``chat`` or ``session`` it makes is then sent a message, which must be answered
  (through the block's own tool, where it has one).
- ``<!-- example: kernel (...) -->``: the block needs a Jupyter kernel (``await chat.ask(...)``, ``chat.ask_sync``):
  it runs as a cell in a real ipykernel (nbclient), with OpenAI and Anthropic answered by loopback servers (fake
  keys in the kernel's environment) and a person who allows every call that asks; every message it sends must be
  answered, in the order it sends them.
- ``<!-- example: continues (...) -->``: it runs in the namespace the block before it on the same page left (in the
  kernel, when that block runs in one).
- ``<!-- example: not run: <why> -->``: it is not run, and must say why.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import itertools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from ai_widgets import ChatSession, ChatWidget, MessageStatus
from tests.helpers import wait_for
from tests.integrations.fake_anthropic import Reply, ToolUse, reframe
from tests.providers.local_server_emulators import JSON, Turn, VLLMEmulator
from tests.providers.loopback import Request, Response, loopback

ROOT = Path(__file__).resolve().parent.parent
NOTES = Path("notes.txt")  # what the README's delete_file is asked to delete, in the test's own folder
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- example: (openai|kernel|continues|not run: .+?)(?: \(.*\))? -->")
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    code: str
    mode: str  # "run", "openai", "kernel", "continues", or "not run: why"

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples(pages: list[Path] = PAGES) -> list[Example]:
    found = []
    for page in pages:
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


def model_turn(question: str, offered: set[str], answered: bool) -> tuple[str, tuple[str, dict[str, Any]] | None]:
    """What the examples' model says (text, or a call): it calls the tool the question is about when the request
    offers it and has no result yet; otherwise it answers (:func:`answer_to`), from the result."""
    city = "Oslo" if "Oslo" in question else "Lisbon"
    if "delete" in question.lower() and "delete_file" in offered and not answered:
        return "", ("delete_file", {"path": "notes.txt"})
    if "get_weather" in offered and not answered and "delete" not in question.lower():
        return "", ("get_weather", {"city": city})
    return answer_to(question), None


def answer_to(question: str) -> str:
    """The model's last word on ``question``: each question has its own, so an answer shows which it answers."""
    return (
        "Deleted notes.txt."
        if "delete" in question.lower()
        else f"Sunny in {'Oslo' if 'Oslo' in question else 'Lisbon'}."
    )


def weather_model(body: JSON) -> Turn:
    """:func:`model_turn` for a Chat Completions request."""
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    asked = [message for message in body["messages"] if message.get("role") == "user"][-1]["content"]
    answered = body["messages"][-1].get("role") == "tool"
    text, call = model_turn(str(asked), offered, answered)
    return Turn(text=text, calls=[call] if call else [])


def anthropic_model(body: JSON) -> Reply:
    """:func:`model_turn` for an Anthropic Messages request."""
    offered = {tool["name"] for tool in body.get("tools") or []}
    questions = [m for m in body["messages"] if m["role"] == "user" and not tool_results_in(m)]
    content = questions[-1]["content"]
    asked = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
    text, call = model_turn(asked, offered, answered=tool_results_in(body["messages"][-1]))
    use = ToolUse(f"toolu_{len(body['messages'])}", call[0], call[1]) if call else None
    return Reply(text=text, tool_use=use)


def tool_results_in(message: JSON) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)


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


def in_a_kernel(example: Example) -> bool:
    """Whether the example runs in a kernel: it says so, or continues one that does."""
    return any(block.mode == "kernel" for block in chain(example))


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
    not_run = [e.id for e in EXAMPLES if e.mode.startswith("not run")]
    assert len(not_run) <= 3, f"few examples may go unrun, each for a reason of its own: {not_run}"


def test_a_block_without_a_marker_is_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```python\nimport ai_widgets\n```\n\n<!-- example: kernel (a cell) -->\n```python\nx = 1\n```\n"
    )
    plain, kernel = examples([page])
    assert (plain.mode, plain.line, plain.code) == ("run", 3, "import ai_widgets\n")
    assert kernel.mode == "kernel"
    assert in_a_kernel(kernel)
    assert not in_a_kernel(plain)


def chain(example: Example) -> list[Example]:
    """The example, after the ones it continues (each test runs them itself, so tests may run in any order)."""
    blocks = [example]
    while blocks[0].mode == "continues":
        blocks.insert(0, PREVIOUS[blocks[0].id])
    return blocks


IN_PROCESS = [e for e in EXAMPLES if not e.mode.startswith("not run") and not in_a_kernel(e)]
IN_A_KERNEL = [e for e in EXAMPLES if not e.mode.startswith("not run") and in_a_kernel(e)]


@pytest.mark.parametrize("example", IN_PROCESS, ids=lambda e: e.id)
async def test_example_runs_as_pasted(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    await run_in_process(example, monkeypatch, tmp_path)


async def test_a_block_that_fails_fails_its_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An example that drifted from the API (a name gone) fails: nothing hides its error."""
    drifted = Example(ROOT / "README.md", 1, "from ai_widgets import ask_the_model\n", "run")
    with pytest.raises(ImportError, match="ask_the_model"):
        await run_in_process(drifted, monkeypatch, tmp_path)


async def run_in_process(example: Example, monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.chdir(folder)
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


# --- in a kernel ------------------------------------------------------------------------------------------------------

#: Run before the example, leaving no name behind (so it cannot stand in for an import the example lacks): a person
#: at the chat, who allows every call that waits for approval (as the card's Allow does: ``approve``).
PERSON = """
def _docs_person():
    import threading, time
    from ai_widgets import ChatSession, ChatWidget

    def allow():
        while True:
            for value in list(get_ipython().user_ns.values()):
                if isinstance(value, (ChatWidget, ChatSession)):
                    session = value.session if isinstance(value, ChatWidget) else value
                    for waiting in session.pending_approvals:
                        try:
                            value.approve(waiting.tool_call_id, "approved")
                        except Exception:
                            pass  # decided meanwhile
            time.sleep(0.02)

    threading.Thread(target=allow, name="docs-person", daemon=True).start()
_docs_person()
del _docs_person
"""

#: Run after it: once no turn runs, what each chat or session the example made holds, as one JSON line.
REPORT = """
async def _docs_report():
    import asyncio, json, time
    import ai_widgets
    from ai_widgets import ChatSession, ChatWidget

    made = {}
    for name, value in list(get_ipython().user_ns.items()):
        if not name.startswith("_") and isinstance(value, (ChatWidget, ChatSession)):
            made[name] = value.session if isinstance(value, ChatWidget) else value
    deadline = time.monotonic() + 60
    while any(s.busy for s in made.values()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    said = {
        name: [[m.role.value, m.text, m.status.value] for m in session.messages] for name, session in made.items()
    }
    print("DOCS-REPORT", json.dumps({"package": ai_widgets.__file__, "made": said}))
await _docs_report()
del _docs_report
"""


def sent_questions(code: str) -> list[str]:
    """The messages a block sends (``x.send("...")``, ``x.ask("...")``, ``x.ask_sync("...")``), in its order."""
    calls = [
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("send", "ask", "ask_sync")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    return [node.args[0].value for node in calls]  # type: ignore[attr-defined]


@contextmanager
def providers_for_a_kernel(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """OpenAI (Chat Completions) and Anthropic answered by loopback servers, for a kernel started now: their URLs
    and fake keys in the environment it inherits. Yields the questions they were asked, in order."""
    asked: list[str] = []
    emulator = VLLMEmulator(weather_model)

    def openai(request: Request) -> Response:
        if request.method == "POST":
            body = request.json()
            emulator.served_model_name = body.get("model")
            asked.append(str([m for m in body["messages"] if m.get("role") == "user"][-1]["content"]))
        return emulator(request)

    def anthropic(request: Request) -> Response:
        if request.path.startswith("/v1/messages/count_tokens"):
            return Response(headers={"content-type": "application/json"}, chunks=[b'{"input_tokens": 12}'])
        body = request.json()
        reply = anthropic_model(body)
        questions = [m for m in body["messages"] if m["role"] == "user" and not tool_results_in(m)]
        content = questions[-1]["content"]
        asked.append(content if isinstance(content, str) else " ".join(b.get("text", "") for b in content))
        return Response(chunks=[reframe(reply, str(body.get("model")))])

    with loopback(openai) as openai_server, loopback(anthropic) as anthropic_server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{openai_server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-example-not-a-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs-example-not-a-key")
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "AI_WIDGETS_BASE_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports this checkout's ai_widgets
        yield asked


def run_in_a_kernel(
    example: Example, monkeypatch: pytest.MonkeyPatch, folder: Path
) -> tuple[dict[str, Any], list[str]]:
    """Runs the example's blocks as cells of a notebook in a real kernel (between :data:`PERSON` and
    :data:`REPORT`); a cell that raises fails it (nbclient's ``CellExecutionError``, with the traceback). Returns the
    report and the questions the providers were asked."""
    cells = [PERSON, *(block.code for block in chain(example)), REPORT]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in cells])
    with providers_for_a_kernel(monkeypatch) as asked:
        NotebookClient(
            notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
        ).execute()
    printed = "".join(output.get("text", "") for output in notebook.cells[-1].get("outputs", []))
    line = next(line for line in printed.splitlines() if line.startswith("DOCS-REPORT "))
    return json.loads(line.removeprefix("DOCS-REPORT ")), asked


@pytest.mark.kernel
@pytest.mark.parametrize("example", IN_A_KERNEL, ids=lambda e: e.id)
def test_example_runs_as_pasted_in_a_kernel(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The example runs; every message it sends is answered, each by the answer to it, in the order it sends them
    (``chat.send(x)`` then ``await chat.ask(y)`` in one cell: x first, then y; neither lost)."""
    deleted = tmp_path / NOTES  # what an example's delete_file is asked to delete, in the kernel's folder
    deleted.write_text("x")
    report, asked = run_in_a_kernel(example, monkeypatch, tmp_path)
    assert Path(report["package"]).is_relative_to(ROOT), report["package"]
    if any("delete_file" in block.code for block in chain(example)):
        assert not deleted.exists()  # its tool ran, once allowed
    questions = [q for block in chain(example) for q in sent_questions(block.code)]
    assert questions, "a kernel example sends something"
    said = [message for messages in report["made"].values() for message in messages]
    users = [text for role, text, _ in said if role == "user"]
    assert users == questions, said
    for at, (role, text, _status) in enumerate(said):
        if role == "user":
            reply_role, reply_text, reply_status = said[at + 1]
            assert (reply_role, reply_status) == ("assistant", "completed"), said
            assert reply_text.strip().endswith(answer_to(text)), said
    # The providers were asked in that order too (a question's requests follow each other: the call, its result).
    assert [question for question, _ in itertools.groupby(asked)] == questions, asked


@pytest.mark.kernel
def test_a_block_that_fails_in_a_kernel_fails_its_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    drifted = Example(
        ROOT / "README.md", 1, "from ai_widgets import ChatWidget\nChatWidget(modle='openai:x')\n", "kernel"
    )
    with pytest.raises(CellExecutionError, match="modle"):
        run_in_a_kernel(drifted, monkeypatch, tmp_path)
