"""An ACP agent's cards in JupyterLab, dark and 500 px wide (issue 32): the project's test agent
(``tests/integrations/acp_agent.py``) run by ``ChatWidget(acp=[python, acp_agent.py])``. Its demo edit: the thought,
the plan's checklist updating in place, the read, the edit waiting with its diff and no Edit or reason, Allow, the
file written. Then a command it runs in a terminal the chat serves: asked with the command and its directory, its
output in the card once allowed, and the exit code."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

pytest.importorskip("acp")

AGENT = Path(__file__).resolve().parents[1] / "integrations" / "acp_agent.py"
UNTIDY = "def greet(name):   \n\treturn f'hello {name}'  \n"


def notebook() -> str:
    return textwrap.dedent(
        f"""\
        from ai_widgets import ChatWidget

        chat = ChatWidget(acp=[{sys.executable!r}, {str(AGENT)!r}])
        chat
        """
    )


def test_an_acp_agents_plan_diff_and_terminal_in_jupyterlab_dark_at_500px(
    chromium_page, server, notebook_name, artifacts
):
    page, srv = chromium_page, server("lab", theme="JupyterLab Dark")
    page.set_viewport_size({"width": 500, "height": 1000})
    name = "acp-agent-dark-500"
    target = Path(srv.root) / f"{Path(notebook_name).stem}.py"
    target.write_text(UNTIDY)
    srv.write_notebook(notebook_name, [notebook()])
    widget = open_and_run(page, srv, notebook_name)
    try:
        expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
        # The file browser closed, as a person in a narrow window keeps it: the notebook takes the width.
        current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if current.count():
            current.click()
        expect(page.locator("#jp-left-stack")).to_be_hidden()
        send_from_input(widget, f"demo {target.name}")
        reply = last_assistant(widget)
        edit = reply.locator(".aiw-tool-card").last
        expect(edit).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
        # The header says what the agent calls it, not the tool's name; the diff says the rest.
        expect(edit.locator(".aiw-tool-title")).to_contain_text(f"Edit {target}")
        diff = edit.locator(".aiw-diff")
        expect(diff.locator(".aiw-diff-line").first).to_be_visible()
        expect(diff).to_contain_text("return f'hello {name}'")
        expect(edit.locator(".aiw-tool-args")).to_be_hidden()
        expect(edit.locator(".aiw-edit-args")).to_have_count(0)
        expect(edit.locator(".aiw-decline-reason")).to_have_count(0)
        plan = reply.locator(".aiw-plan")
        expect(plan).to_be_visible()
        expect(plan.locator("li")).to_have_count(3)
        assert target.read_text() == UNTIDY  # nothing written before Allow
        screenshot(widget, artifacts, f"{name}-asking")

        edit.locator(".aiw-approve-once").click()
        wait_idle(widget)
        expect(edit).to_have_attribute("data-state", "completed")
        expect(reply).to_have_attribute("data-status", "completed")
        assert target.read_text() == "def greet(name):\n    return f'hello {name}'\n"
        expect(plan.locator('[aria-label="done"]')).to_have_count(3)  # the same checklist, updated in place
        screenshot(widget, artifacts, f"{name}-written")

        steps = {"steps": [{"terminal": {"command": "printf 'one\\ntwo\\n'; exit 3"}}]}
        send_from_input(widget, json.dumps(steps))
        reply = last_assistant(widget)
        run = reply.locator(".aiw-tool-card").last
        expect(run).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT)
        terminal = run.locator(".aiw-terminal")
        expect(terminal.locator(".aiw-terminal-command")).to_contain_text("printf")
        expect(terminal.locator(".aiw-terminal-cwd")).to_contain_text(str(srv.root))
        expect(terminal.locator(".aiw-terminal-exit")).to_have_text("not run yet")
        screenshot(widget, artifacts, f"{name}-command-asking")
        run.locator(".aiw-approve-once").click()
        wait_idle(widget)
        expect(terminal.locator(".aiw-terminal-output")).to_have_text("one\ntwo\n")
        expect(terminal.locator(".aiw-terminal-exit")).to_have_text("exit code 3")
        expect(reply).to_contain_text("exit 3")
        screenshot(widget, artifacts, f"{name}-command-ran")
        assert_no_widget_errors(page)
    finally:
        srv.kernel_eval(notebook_name, "chat.close()")
