"""ChatWidget in marimo (``marimo edit``, headless Chromium): the whole conversation shows, the person's messages
included, and it comes back when the page is reloaded.

marimo renders an anywidget's own model and nothing it references, and it replays a model's state as it was opened
(plus trait updates) to a page that reconnects, never custom messages. So this checks the two halves of the
"finished messages" protocol (docs/protocol.md): the ``finish`` op as it happens, and the ``sync``/``snapshot``
catch-up of a view that missed them.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import jupyter_e2e as J
import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, messages, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

# One cell (code hidden): a destructive tool and a model that calls it when asked to delete, else echoes.
APP = textwrap.dedent(
    '''\
    import marimo

    app = marimo.App()


    @app.cell(hide_code=True)
    def _():
        from ai_widgets import ChatWidget, ToolCallState, ToolRisk, tool
        from ai_widgets.transports import ScriptedReply, ScriptedToolCall, ScriptedTransport

        deleted = []

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
                if call.state is ToolCallState.REJECTED:
                    return ScriptedReply(status=None, text="Declined: nothing was deleted.")
                return ScriptedReply(status=None, text=f"Done: {call.outcome.value} ({len(deleted)} deleted)")
            text = request.last_user_text
            if "delete" in text.lower():
                call = ScriptedToolCall(name="delete_file", arguments={"path": "notes.txt"})
                return ScriptedReply(status="Deciding…", tool_calls=[call])
            return ScriptedReply(status=None, text=f"You said: *{text}*")

        chat = ChatWidget(
            transport=ScriptedTransport(model, delay=0.01, decide_delay=0.2),
            tools=[delete_file],
            suggestions=["Say hello", "What can you do?"],
        )
        chat
        return (chat,)


    if __name__ == "__main__":
        app.run()
    '''
)


class MarimoServer:
    """``marimo edit app.py`` on 127.0.0.1, a free port, no token, its own HOME and config (cells run on open)."""

    def __init__(self, startup_timeout: float = 60) -> None:
        self.base = J._mkdtemp("marimo")  # the run's tag: a leftover process is found by it
        (self.base / "app.py").write_text(APP)
        config = self.base / "config" / "marimo"
        config.mkdir(parents=True)
        (config / "marimo.toml").write_text("[runtime]\nauto_instantiate = true\n")
        self.log_path = self.base / "server.log"
        self.port = J.free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MARIMO_")}
        env.update(HOME=str(self.base / "home"), XDG_CONFIG_HOME=str(self.base / "config"), PYTHONUNBUFFERED="1")
        cmd = [sys.executable, "-m", "marimo", "edit", str(self.base / "app.py"), "--headless", "--no-token"]
        cmd += [f"--host={J.HOST}", f"--port={self.port}", "--skip-update-check", "--no-sandbox"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=self.base,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=J._die_with_parent if sys.platform == "linux" else None,
            )
        deadline = time.monotonic() + startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise J.ServerStartError(f"marimo exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}health", timeout=2):
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise J.ServerStartError(
                        f"marimo did not answer in {startup_timeout}s\n{self.log_tail()}"
                    ) from None
                time.sleep(0.25)

    @property
    def url(self) -> str:
        return f"http://{J.HOST}:{self.port}/"

    def log_tail(self, n: int = 60) -> str:
        return J.log_tail(self.log_path, n)

    def stop(self) -> None:
        """Stops the server and the kernels it started."""
        J.stop_process_group(self.proc)


@pytest.fixture(scope="module")
def marimo_server(e2e_ready) -> Iterator[MarimoServer]:
    if importlib.util.find_spec("marimo") is None:
        reason = "marimo is not installed (pip install -e '.[e2e]')"
        if os.environ.get("AIW_E2E_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    server = MarimoServer()
    try:
        yield server
    finally:
        server.stop()
        left = [p for p in J.leftover_processes() if str(server.base) in " ".join(p.cmdline())]
        assert not left, f"leftover marimo processes: {[(p.pid, p.name()) for p in left]}"


def open_app(page, server: MarimoServer):
    page.goto(server.url, wait_until="domcontentloaded")
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=60_000)  # marimo starts its kernel and runs the cell
    return widget


def test_marimo_shows_the_whole_conversation(chromium_page, marimo_server, artifacts):
    page = chromium_page
    widget = open_app(page, marimo_server)

    # A suggestion chip: the person's message shows, then the reply.
    widget.locator(".aiw-suggestion", has_text="Say hello").click()
    expect(messages(widget, "user")).to_have_text(["Say hello"])
    expect(last_assistant(widget)).to_have_text("You said: Say hello")
    wait_idle(widget)

    # A typed message and Enter; the destructive call waits for the person, who allows it once.
    send_from_input(widget, "Please delete my notes")
    expect(messages(widget, "user")).to_have_text(["Say hello", "Please delete my notes"])
    card = widget.locator(".aiw-tool-card")
    expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
    screenshot(widget, artifacts, "test_marimo_approval")
    card.locator(".aiw-approve-once").click()
    expect(card).to_have_attribute("data-state", "completed", timeout=WAIT)
    expect(last_assistant(widget)).to_contain_text("Done: Deleted notes.txt. (1 deleted)")
    wait_idle(widget)
    expect(card.locator(".aiw-approve-once")).to_have_count(0)
    shown = messages(widget).all_inner_texts()
    assert [m.get_attribute("data-role") for m in messages(widget).all()] == ["user", "assistant"] * 2
    screenshot(widget, artifacts, "test_marimo_conversation")

    # Reloaded, marimo reconnects to the same kernel and replays the widget's state as it was opened (before any
    # message): the view asks for the finished messages it lacks and shows the same conversation.
    page.reload(wait_until="domcontentloaded")
    widget = page.locator(".aiw[data-rendered='true']").first
    expect(widget).to_be_visible(timeout=60_000)
    expect(messages(widget)).to_have_count(4)
    expect(messages(widget, "user")).to_have_text(["Say hello", "Please delete my notes"])
    expect(widget.locator(".aiw-tool-card")).to_have_attribute("data-state", "completed")
    assert messages(widget).all_inner_texts() == shown
    screenshot(widget, artifacts, "test_marimo_reloaded")
    assert_no_widget_errors(page)
