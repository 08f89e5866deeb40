"""Helpers for the tests that drive the test ACP agent (``acp_agent.py``) as a subprocess: its transport with its
log and state directory, a prompt's JSON script, and waiting for a card to ask."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ai_widgets import ChatSession
from ai_widgets.integrations.acp import ACPTransport
from ai_widgets.messages import Message, ToolCallPart
from tests.helpers import wait_for

AGENT = str(Path(__file__).with_name("acp_agent.py"))


def script(*steps: dict[str, Any]) -> str:
    """A prompt the test agent plays, step by step (its docstring lists the steps)."""
    return json.dumps({"steps": list(steps)})


class Agent:
    """The test agent's transport, its log and its state directory.

    Args:
        tmp_path: Where its files go.
        env: More of the agent's environment (``ACP_AGENT_NO_HTTP``, ``ACP_AGENT_NAME``...).
        options: The transport's keyword options.
    """

    def __init__(self, tmp_path: Path, env: dict[str, str] | None = None, **options: Any) -> None:
        self.log_path = tmp_path / "agent.log"
        state = tmp_path / "state"
        state.mkdir(parents=True, exist_ok=True)
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        variables = {"ACP_AGENT_LOG": str(self.log_path), "ACP_AGENT_STATE": str(state), **(env or {})}
        self.transport = ACPTransport(sys.executable, [AGENT], cwd=self.work, env=variables, **options)

    def log(self, kind: str) -> list[Any]:
        """What the agent logged of ``kind`` (``initialize``, ``new_session``, ``prompt``, ``mcp_result``...)."""
        if not self.log_path.exists():
            return []
        entries = [json.loads(line) for line in self.log_path.read_text().splitlines()]
        return [entry["data"] for entry in entries if entry["kind"] == kind]


async def asked(session: ChatSession, task: asyncio.Task[Message]) -> ToolCallPart:
    """The first call waiting for the person's decision, once one does (the turn must not have ended)."""
    await wait_for(lambda: bool(session.pending_approvals) or task.done(), timeout=30)
    assert not task.done(), task.result().error
    return session.pending_approvals[0]
