"""Small helpers shared by the tests."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
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


def gone(pid: int) -> bool:
    """Whether ``pid`` runs no more (an orphan's zombie counts as gone: only its new parent can reap it)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def until_gone(pid: int, timeout: float = 5.0) -> None:
    """Waits on the running loop until ``pid`` runs no more; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not gone(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        await asyncio.sleep(0.02)


@contextlib.contextmanager
def no_new_children(settle: float = 5.0) -> Iterator[None]:
    """Fails if the block leaves a child process of this process behind (each one it started was ended and reaped),
    after up to ``settle`` seconds for the last ones to go."""
    before = children()
    yield
    deadline = time.monotonic() + settle
    while (left := children() - before) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not left, f"child processes left behind: {[psutil.Process(p).cmdline() for p in left]}"


def raw_tool(parameters: dict[str, Any], name: str = "raw", description: str = "A tool.") -> Tool:
    """A tool of the JSON Schema ``parameters`` as given (none of ``@tool``'s checks of a function), answering "ran"."""
    return Tool(ToolDefinition(name=name, description=description, parameters=parameters), lambda inv: "ran")
