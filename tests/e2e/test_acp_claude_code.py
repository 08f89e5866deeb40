"""A real published agent in JupyterLab (issue 32): ``ChatWidget(acp=["claude-code-acp"])`` runs Claude Code
(``@zed-industries/claude-code-acp``, pinned and installed by ``scripts/acp_agents.sh``) with no key and no network,
against the loopback fake of Anthropic's Messages API (``tests/integrations/fake_anthropic.py``, in this test's
process). The person types in the widget's input and presses Enter; Claude Code's Write waits in its card with the
diff; Allow writes the file, and the reply ends with the agent's last words."""

from __future__ import annotations

import contextlib
import json
import textwrap
import time
from pathlib import Path

import pytest
from chat_ui import WAIT, assert_no_widget_errors, last_assistant, open_and_run, screenshot, send_from_input, wait_idle
from playwright.sync_api import expect

from tests.integrations.acp_installed import claude_code_acp, claude_code_env
from tests.integrations.fake_anthropic import Reply, ToolUse, fake_anthropic
from tests.integrations.proxy_trap import proxy_trap

pytestmark = pytest.mark.e2e

CONTENT = "rows,mean\n3,2.0\n"


def notebook(command: Path, env: dict[str, str]) -> str:
    """The cell: the agent's environment (the fake server, a fresh home), then the widget."""
    return textwrap.dedent(
        f"""\
        import json, os
        os.environ.update(json.loads({json.dumps(json.dumps(env))}))

        from ai_widgets import ChatWidget

        chat = ChatWidget(acp=[{str(command)!r}])
        chat
        """
    )


def test_claude_codes_write_waits_in_its_card_with_the_diff_and_allow_writes_the_file(
    chromium_page, server, notebook_name, artifacts, tmp_path
):
    command = claude_code_acp()
    page, srv = chromium_page, server("lab")
    target = Path(srv.root) / f"{Path(notebook_name).stem}-summary.csv"
    with fake_anthropic() as anthropic, proxy_trap() as trap:
        env = claude_code_env(tmp_path / "home", anthropic.url, trap.url)
        use = ToolUse("toolu_01e2e", "mcp__acp__Write", {"file_path": str(target), "content": CONTENT})
        anthropic.script(Reply("I'll save the summary.", use), Reply("Saved the summary."))
        srv.write_notebook(notebook_name, [notebook(command, env)])
        widget = open_and_run(page, srv, notebook_name)
        try:
            started = time.monotonic()
            send_from_input(widget, "Save the summary as a CSV")
            card = last_assistant(widget).locator(".aiw-tool-card")
            expect(card).to_have_attribute("data-state", "awaiting_approval", timeout=WAIT * 3)
            print(f"[timing] Enter to the card asking: {time.monotonic() - started:.1f}s")
            view = card.locator(".aiw-call-view")
            expect(view.locator(".aiw-call-view-title")).to_contain_text(f"Write {target}")
            diff = view.locator(".aiw-diff")
            expect(diff.locator(".aiw-diff-path")).to_contain_text(target.name)
            expect(diff.locator(".aiw-diff-line")).to_have_count(2)
            expect(diff).to_contain_text("rows,mean")
            expect(diff).to_contain_text("3,2.0")
            expect(last_assistant(widget).locator(".aiw-text").first).to_contain_text("I'll save the summary.")
            expect(card.locator(".aiw-approve-always")).to_be_visible()
            expect(card.locator(".aiw-edit-args")).to_have_count(0)  # ACP has no room for changed arguments
            assert not target.exists()  # nothing written before the person allows it
            screenshot(widget, artifacts, "acp-claude-code-asking")

            card.locator(".aiw-approve-once").click()
            wait_idle(widget)
            expect(card).to_have_attribute("data-state", "completed")
            expect(last_assistant(widget)).to_have_attribute("data-status", "completed")
            expect(last_assistant(widget).locator(".aiw-text").last).to_contain_text("Saved the summary.")
            assert target.read_text() == CONTENT
            screenshot(widget, artifacts, "acp-claude-code-allowed")
            assert anthropic.kinds() == ["count_tokens", "messages", "messages"]
            assert trap.caught == [], trap.caught
            assert_no_widget_errors(page)
            srv.kernel_eval(notebook_name, "chat.close()")  # the widget stops the agent it started
            srv.kernel_wait(notebook_name, "chat._owned_transport.running", lambda running: running is False)
        finally:
            with contextlib.suppress(Exception):  # after a failure: the agent must not outlive the kernel
                srv.kernel_eval(notebook_name, "chat.close()")
