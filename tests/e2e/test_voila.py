"""ChatWidget in a notebook served by Voilà (headless Chromium): the widget renders, a typed message streams its
reply, tool cards show, and approvals clicked in the page decide in the kernel; light, dark (``--theme=dark``) and
narrow.

Voilà runs the whole notebook on the server first and connects the page to the kernel afterwards, with no
JupyterLab shell around the outputs: the views and the widget manager are Voilà's own. Each page load starts a
kernel of its own, so every test gets a fresh conversation from the same server.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import jupyter_e2e as J
import pytest
from chat_ui import assert_no_widget_errors, last_assistant, messages, screenshot, send_from_input, wait_idle
from playwright.sync_api import Locator, Page, expect

pytestmark = pytest.mark.e2e

# A weather tool (a card), a destructive tool (an approval) whose side effect the model reports, and a model that
# streams a reply long enough to arrive in many patches.
APP = textwrap.dedent(
    '''\
    from ai_widgets import ChatWidget, ToolCallState, ToolRisk, tool
    from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

    deleted = []


    @tool(title="Weather", icon="🌦", risk=ToolRisk.READ_ONLY)
    def get_weather(city: str) -> dict:
        """Gets the current weather for a city.

        Args:
            city: The city.
        """
        return {"city": city, "sky": "sunny", "temperature": 21}


    @tool(title="Delete file", icon="🗑", risk=ToolRisk.DESTRUCTIVE)
    def delete_file(path: str) -> str:
        """Deletes a file.

        Args:
            path: The file.
        """
        deleted.append(path)
        return f"Deleted {path}."


    def model(request):
        if request.tool_results():
            call = request.tool_results()[-1]
            if call.tool_name == "get_weather":
                v = call.outcome.value
                return ScriptedReply(status=None, text=f"It is **{v['sky']}** in {v['city']}.")
            if call.state is ToolCallState.REJECTED:
                return ScriptedReply(status=None, text=f"Declined ({call.decision_reason}): {len(deleted)} deleted.")
            if call.state is ToolCallState.CANCELLED:
                return ScriptedReply(status=None, text=f"Cancelled: {len(deleted)} deleted.")
            return ScriptedReply(status=None, text=f"Done: {call.outcome.value} ({len(deleted)} deleted)")
        text = request.last_user_text
        if "weather" in text.lower():
            call = ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon"})
            return ScriptedReply(status="Checking the forecast…", tool_calls=[call])
        if "delete" in text.lower():
            call = ScriptedToolCall(name="delete_file", arguments={"path": "notes.txt"})
            return ScriptedReply(status="Deciding…", tool_calls=[call])
        return ScriptedReply(status=None, text=f"You said: *{text}*. " + "Streaming word by word. " * 12)


    chat = ChatWidget(
        transport=ScriptedTransport(model, delay=0.01, decide_delay=0.2), tools=[get_weather, delete_file]
    )
    chat
    '''
)

# Turns started by the notebook's own cells, which Voilà runs before the page connects: two a cell awaits (each
# shows under its cell; the approval of the second cannot be given, so it is cancelled instead of holding the page
# back for ever), one started with chat.send that is waiting for approval when the page arrives (the cell's last
# expression: what send returns shows nothing under it).
FROM_CODE = [
    'reply = await chat.ask("What\'s the weather?")\nprint("asked:", reply.text)',
    'reply = await chat.ask("delete my notes")\nprint("asked:", reply.text)',
    'chat.send("delete my notes, please")',
]

STREAMED = "You said: hello from Voilà. " + "Streaming word by word. " * 11 + "Streaming word by word."


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells, no outputs (Voilà runs it), the Python kernel named."""
    path.write_text(json.dumps(J.notebook_json(cells), indent=1))


class VoilaServer:
    """``voila`` on 127.0.0.1, a free port, no token, serving the notebooks of its own temporary root, with its own
    Jupyter config, data and runtime dirs."""

    def __init__(self, *, theme: str = "light", startup_timeout: float = 60) -> None:
        self.base = J._mkdtemp("voila")  # the run's tag: a leftover process is found by it
        self.root = self.base / "root"
        self.root.mkdir()
        (self.base / "runtime").mkdir()
        write_notebook(self.root / "chat.ipynb", [APP])
        write_notebook(self.root / "from_code.ipynb", [APP, *FROM_CODE])
        self.log_path = self.base / "server.log"
        self.port = J.free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_TOKEN", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")}
        env.update(
            JUPYTER_CONFIG_DIR=str(self.base / "config"),
            JUPYTER_DATA_DIR=str(self.base / "data"),
            JUPYTER_RUNTIME_DIR=str(self.base / "runtime"),
            IPYTHONDIR=str(self.base / "ipython"),
            JUPYTER_PLATFORM_DIRS="1",
            PYTHONUNBUFFERED="1",
        )
        cmd = [sys.executable, "-m", "voila", "--no-browser", f"--Voila.ip={J.HOST}", f"--port={self.port}"]
        cmd += [f"--Voila.root_dir={self.root}", f"--theme={theme}", "--show_tracebacks=True"]
        # Kernel connection files under the run's tag too, so the leftover check sees the kernels.
        cmd.append(f"--Voila.connection_dir_root={self.base / 'runtime'}")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=J._die_with_parent if sys.platform == "linux" else None,
            )
        deadline = time.monotonic() + startup_timeout
        while not self._answers():
            if self.proc.poll() is not None:
                raise J.ServerStartError(f"voila exited with {self.proc.returncode}\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise J.ServerStartError(f"voila did not answer in {startup_timeout}s\n{self.log_tail()}")
            time.sleep(0.25)

    def _answers(self) -> bool:
        """Whether the server answers HTTP (its static files: asking for a notebook would start a kernel)."""
        connection = http.client.HTTPConnection(J.HOST, self.port, timeout=2)
        try:
            connection.request("GET", "/voila/static/voila.js")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def url(self, notebook: str) -> str:
        return f"http://{J.HOST}:{self.port}/voila/render/{notebook}"

    def log_tail(self, n: int = 80) -> str:
        return J.log_tail(self.log_path, n)

    @contextlib.contextmanager
    def log_on_failure(self) -> Iterator[None]:
        """A failure inside says what the server logged (the notebook's errors and tracebacks land there)."""
        try:
            yield
        except Exception as exc:
            raise AssertionError(f"{exc}\n--- voila log (tail) ---\n{self.log_tail()}") from exc

    def stop(self) -> None:
        """Stops the server and the kernels it started."""
        J.stop_process_group(self.proc)


@pytest.fixture(scope="module")
def voila(e2e_ready) -> Iterator[dict[str, VoilaServer]]:
    """``voila[theme]``: a Voilà server started with that theme on first use; all stopped after the module."""
    if importlib.util.find_spec("voila") is None:
        # Voilà is in the e2e extra and the lock: its absence is a broken environment, never a reason to skip.
        pytest.fail(
            "voila is not installed, though the e2e extra and requirements/dev.lock have it: pip install -e '.[e2e]'"
        )
    started: dict[str, VoilaServer] = {}

    class Servers(dict):
        def __missing__(self, theme: str) -> VoilaServer:
            started[theme] = self[theme] = VoilaServer(theme=theme)
            return started[theme]

    try:
        yield Servers()
    finally:
        for server in started.values():
            server.stop()
        bases = [str(server.base) for server in started.values()]
        left = [p for p in J.leftover_processes() if any(b in " ".join(p.cmdline()) for b in bases)]
        assert not left, f"leftover voila processes: {[(p.pid, p.name()) for p in left]}"
        for server in started.values():
            shutil.rmtree(server.base, ignore_errors=True)


# Errors of our code in the page: the widget's own error markers (jupyter_e2e.widget_errors), and any console error
# or uncaught error that names the bundle (imported from a blob: URL), its classes or the package. Voilà's page also
# loads every JupyterLab extension of the environment, built against a newer JupyterLab than Voilà's; their
# failures name only those extensions.
OURS = re.compile(r"blob:|ai_widgets|\baiw-|anywidget", re.IGNORECASE)


def assert_no_errors_from_us(page: Page) -> None:
    assert_no_widget_errors(page)
    logged: list[str] = page.e2e_messages  # type: ignore[attr-defined]
    ours = [m for m in logged if m.startswith(("pageerror", "console.error")) and OURS.search(m)]
    assert not ours, ours


def open_chat(page: Page, server: VoilaServer, notebook: str = "chat.ipynb") -> Locator:
    """Loads the notebook in Voilà (a kernel of its own runs it) and returns the rendered widget: the positive
    marker, since a widget that fails to render leaves an empty output."""
    page.goto(server.url(notebook), wait_until="domcontentloaded")
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=60_000)
    body = page.locator("body")
    for text in (
        "Traceback",
        "Error displaying widget",
        "front-end code of this notebook is missing",
        "Model not found",
    ):
        expect(body).not_to_contain_text(text, timeout=1)
    expect(page.locator("[data-mime-type='application/vnd.jupyter.stderr']")).to_have_count(0, timeout=1)
    # Only the live view: the static transcript output beside it (for readers without the widget) stays hidden.
    expect(page.locator("[data-aiw-transcript]:visible")).to_have_count(0, timeout=1)
    return widget


# Records every length the newest assistant text had while it streamed (one entry per DOM change).
WATCH_STREAM = """root => {
  window.__aiwLengths = [];
  const newest = () => [...root.querySelectorAll('.aiw-message[data-role="assistant"] .aiw-text')].pop();
  new MutationObserver(() => {
    const text = newest();
    const n = text ? text.textContent.length : 0;
    if (n !== window.__aiwLengths.at(-1)) window.__aiwLengths.push(n);
  }).observe(root, {subtree: true, childList: true, characterData: true});
}"""


def test_voila_chat_streams_cards_and_approvals(chromium_page, voila, artifacts):
    page, server = chromium_page, voila["light"]
    with server.log_on_failure():
        widget = open_chat(page, server)

        # A typed message and Enter: the reply streams in (many lengths seen on the way) and completes.
        # Without JupyterLab's shell around it, Shift+Enter is a new line in the box, and sends nothing.
        box = widget.locator(".aiw-input")
        box.click()
        box.type("first line")
        box.press("Shift+Enter")
        box.type("second line")
        expect(box).to_have_value("first line\nsecond line")
        expect(messages(widget)).to_have_count(0)
        widget.evaluate(WATCH_STREAM)
        send_from_input(widget, "hello from Voilà")
        expect(messages(widget, "user")).to_have_text(["hello from Voilà"])
        expect(last_assistant(widget)).to_have_text(STREAMED)
        wait_idle(widget)
        lengths = page.evaluate("window.__aiwLengths")
        assert len([n for n in lengths if 0 < n < len(STREAMED)]) >= 3, f"the reply did not stream: {lengths}"
        assert lengths == sorted(lengths), lengths

        # A tool call: its card fills in, runs, and the answer comes from its result.
        send_from_input(widget, "What's the weather?")
        cards = widget.locator(".aiw-tool-card")
        card = cards.nth(0)
        expect(card).to_have_attribute("data-state", "completed")
        expect(card.locator(".aiw-tool-title")).to_have_text("Weather")
        expect(last_assistant(widget)).to_contain_text("It is sunny in Lisbon.")
        wait_idle(widget)

        # Decline with a reason: nothing runs in the kernel, and the model says so from the kernel's state.
        send_from_input(widget, "delete my notes")
        card = cards.nth(1)
        expect(card).to_have_attribute("data-state", "awaiting_approval")
        expect(card.locator(".aiw-approve-once")).to_be_visible()
        screenshot(widget, artifacts, "test_voila_approval")
        card.locator(".aiw-decline-reason").fill("keep them")
        card.locator(".aiw-decline").click()
        expect(card).to_have_attribute("data-state", "rejected")
        expect(card.locator(".aiw-decision")).to_have_text(re.compile(r"^Declined after [\d.]+s: keep them$"))
        expect(last_assistant(widget)).to_contain_text("Declined (keep them): 0 deleted.")
        wait_idle(widget)

        # Allow once: the tool runs once in the kernel.
        send_from_input(widget, "delete my notes, please")
        card = cards.nth(2)
        expect(card).to_have_attribute("data-state", "awaiting_approval")
        card.locator(".aiw-approve-once").click()
        expect(card).to_have_attribute("data-state", "completed")
        expect(card.locator(".aiw-decision")).to_have_text(re.compile(r"^Allowed once after [\d.]+s$"))
        expect(last_assistant(widget)).to_contain_text("Done: Deleted notes.txt. (1 deleted)")
        wait_idle(widget)

        # Allow always: runs, and the next call runs without asking (the kernel's policy remembers it).
        send_from_input(widget, "delete my notes again")
        card = cards.nth(3)
        expect(card).to_have_attribute("data-state", "awaiting_approval")
        card.locator(".aiw-approve-always").click()
        expect(card).to_have_attribute("data-state", "completed")
        expect(last_assistant(widget)).to_contain_text("Done: Deleted notes.txt. (2 deleted)")
        wait_idle(widget)
        send_from_input(widget, "and delete once more")
        card = cards.nth(4)
        expect(card).to_have_attribute("data-state", "completed")
        expect(card.locator(".aiw-remembered")).to_have_text("allowed always")
        expect(last_assistant(widget)).to_contain_text("Done: Deleted notes.txt. (3 deleted)")
        wait_idle(widget)
        expect(widget.locator(".aiw-approval")).to_have_count(0)
        expect(messages(widget)).to_have_count(12)
        screenshot(widget, artifacts, "test_voila_light")
        assert_no_errors_from_us(page)


def test_voila_dark_and_narrow(chromium_page, voila, artifacts):
    page, server = chromium_page, voila["dark"]
    page.set_viewport_size({"width": 360, "height": 900})
    with server.log_on_failure():
        widget = open_chat(page, server)
        send_from_input(widget, "delete my notes")
        card = widget.locator(".aiw-tool-card").first
        expect(card).to_have_attribute("data-state", "awaiting_approval")
        # Dark: the widget's text is light on Voilà's dark page (the theme's variables reached it).
        colours = widget.evaluate(
            """root => ({text: getComputedStyle(root).color,
                         page: getComputedStyle(document.body).backgroundColor})"""
        )
        assert luminance(colours["text"]) > 150 > luminance(colours["page"]), colours
        # Narrow: the widget fits the page, and every approval button stays inside it.
        box = widget.bounding_box()
        assert box is not None
        assert box["x"] >= 0, box
        assert box["x"] + box["width"] <= 360 + 0.5, box
        assert page.evaluate("document.documentElement.scrollWidth") <= 360, "the page scrolls sideways"
        for selector in (".aiw-approve-once", ".aiw-approve-always", ".aiw-decline", ".aiw-tool-title"):
            b = card.locator(selector).bounding_box()
            assert b is not None, selector
            assert b["x"] >= box["x"] - 0.5, selector
            assert b["x"] + b["width"] <= box["x"] + box["width"] + 0.5, f"{selector} goes off the widget's right edge"
        screenshot(widget, artifacts, "test_voila_dark_narrow")
        card.locator(".aiw-approve-once").click()
        expect(card).to_have_attribute("data-state", "completed")
        expect(last_assistant(widget)).to_contain_text("Done: Deleted notes.txt. (1 deleted)")
        wait_idle(widget)
        screenshot(widget, artifacts, "test_voila_dark_narrow_done")
        assert_no_errors_from_us(page)


def test_voila_turns_started_by_the_notebook(chromium_page, voila, artifacts):
    """The page connects after the notebook ran: the chat catches up on the asked turns, each asking cell's view
    shows its turn (the approval no one could give cancelled, saying why), and the sent turn's approval, waiting
    since before the page existed, is decided by a click."""
    page, server = chromium_page, voila["light"]
    with server.log_on_failure():
        chat = open_chat(page, server, "from_code.ipynb")
        views = page.locator(".aiw[data-rendered='true']")
        expect(views).to_have_count(3)  # the chat, and each asking cell's view of its turn
        asked = views.nth(1)
        expect(messages(asked, "user")).to_have_text(["What's the weather?"])
        expect(asked.locator(".aiw-tool-card")).to_have_attribute("data-state", "completed")
        expect(last_assistant(asked)).to_contain_text("It is sunny in Lisbon.")
        expect(page.locator("body")).to_contain_text("asked: It is **sunny** in Lisbon.")
        cancelled = views.nth(2).locator(".aiw-tool-card")
        expect(cancelled).to_have_attribute("data-state", "cancelled")
        cancelled.locator(".aiw-tool-toggle").click()
        expect(cancelled.locator(".aiw-tool-result")).to_contain_text(
            "Voilà runs the notebook before it shows the page"
        )
        expect(page.locator("body")).to_contain_text("asked: Cancelled: 0 deleted.")

        expect(messages(chat, "user")).to_have_text(
            ["What's the weather?", "delete my notes", "delete my notes, please"]
        )
        card = chat.locator(".aiw-tool-card").nth(2)
        expect(card).to_have_attribute("data-state", "awaiting_approval")
        screenshot(chat, artifacts, "test_voila_from_code")
        expect(page.locator("body")).not_to_contain_text("Future")  # the sending cell shows no <Future ...>
        card.locator(".aiw-approve-once").click()
        expect(card).to_have_attribute("data-state", "completed")
        expect(last_assistant(chat)).to_contain_text("Done: Deleted notes.txt. (1 deleted)")
        wait_idle(chat)
        expect(views).to_have_count(3)
        screenshot(views.nth(2), artifacts, "test_voila_from_code_cancelled")
        assert_no_errors_from_us(page)


def luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in re.findall(r"\d+", rgb)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
