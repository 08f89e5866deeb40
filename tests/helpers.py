"""Small helpers shared by the tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import psutil

from ai_widgets import Tool, ToolDefinition, ToolInvocation


async def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Polls ``predicate`` on the running loop until it holds; fails the test after ``timeout`` seconds (generous:
    a stdio server starting on a loaded machine takes seconds, and a passing test never waits that long)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


class NeverAsk:
    """An approval policy that runs every call (for tests of what calls do, not of approvals)."""

    async def requires_approval(self, definition: ToolDefinition, invocation: ToolInvocation) -> bool:
        return False

    def record_decision(self, definition: ToolDefinition, invocation: ToolInvocation, decision: Any) -> None:
        pass


def children() -> set[int]:
    """This process's child processes (zombies too: a child not reaped is a leftover)."""
    return {child.pid for child in psutil.Process().children(recursive=True)}


def raw_tool(parameters: dict[str, Any], name: str = "raw", description: str = "A tool.") -> Tool:
    """A tool of the JSON Schema ``parameters`` as given (none of ``@tool``'s checks of a function), answering "ran"."""
    return Tool(ToolDefinition(name=name, description=description, parameters=parameters), lambda inv: "ran")
