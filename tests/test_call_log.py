"""A tool call's log (issue 21) without a kernel or a server: the lines a call keeps and how they travel (the part's
record, the widget's ``call`` op), the progress object's ``log``, the Python logger of a server's log messages, and
the call deadline that pauses while the person is asked."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest

from ai_widgets.messages import ToolCallPart, ToolCallState
from ai_widgets.messages._call_log import LOG_LINES_KEPT, kept_log
from ai_widgets.tools import ToolProgress
from ai_widgets.widget._serialize import CALL_FIELDS, call_fields


def test_the_last_lines_are_kept_sanitised() -> None:
    lines = kept_log((), *(f"line {n}" for n in range(30)))
    assert len(lines) == LOG_LINES_KEPT
    assert lines[0] == "line 10"
    assert lines[-1] == "line 29"
    assert kept_log(lines, "two\nlines\x1b[0m\u202e") == (*lines[1:], "two lines[0m")
    assert kept_log((), "x" * 900)[0] == "x" * 499 + "…"
    assert kept_log((), "key sk-abcdefghijklmnopqrstuvwxyz0123456789") == ("key [redacted]",)
    with pytest.raises(ValueError, match="strings"):
        kept_log((), 3)  # type: ignore[arg-type]


def test_a_part_keeps_its_log_through_its_record_and_the_call_op() -> None:
    part = ToolCallPart("c1", "search", "{}", state=ToolCallState.RUNNING)
    assert "log_lines" not in part.to_dict()  # an old record reads the same
    assert call_fields(part)["log_lines"] == []
    part.log_lines = ("one", "two")
    record = part.to_dict()
    assert record["log_lines"] == ["one", "two"]
    assert ToolCallPart.from_dict(record).log_lines == ("one", "two")
    assert "log_lines" in CALL_FIELDS
    assert call_fields(part)["log_lines"] == ["one", "two"]
    with pytest.raises(ValueError, match="strings"):
        ToolCallPart.from_dict({**record, "log_lines": [1]})


async def test_progress_log_reaches_the_session_from_any_thread() -> None:
    got: list[str] = []
    progress = ToolProgress(on_log=got.append)
    progress.log("here")
    await asyncio.to_thread(progress.log, "from a thread")
    await asyncio.sleep(0.05)
    assert got == ["here", "from a thread"]
    with pytest.raises(ValueError, match="string"):
        progress.log(3)  # type: ignore[arg-type]
    ToolProgress().log("nobody listens")  # no callback: nothing happens


pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

from ai_widgets.mcp._asking import Callers  # noqa: E402
from ai_widgets.mcp._deadline import CallDeadline  # noqa: E402
from ai_widgets.mcp._features import Features, server_logger  # noqa: E402
from ai_widgets.tools import ToolInvocation  # noqa: E402


async def test_a_server_log_goes_to_its_logger_and_the_running_call(caplog: pytest.LogCaptureFixture) -> None:
    callers = Callers()
    features = Features(callers, lambda: "files")
    got: list[str] = []
    invocation = ToolInvocation("c1", "read", progress=ToolProgress(on_log=got.append))
    caplog.set_level(logging.DEBUG, logger="ai_widgets.mcp.server")
    on_log = features.client_options()["logging_callback"]
    with callers.running(invocation):
        await on_log(SimpleNamespace(level="error", data={"code": 7}, logger="io"))
        await on_log(SimpleNamespace(level="debug", data="noise", logger=None))
    await on_log(SimpleNamespace(level="info", data="no call runs", logger=None))  # the logger only
    assert got == ['error: io: {"code": 7}']
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("ai_widgets.mcp.server.files", logging.ERROR, 'io: {"code": 7}'),
        ("ai_widgets.mcp.server.files", logging.DEBUG, "noise"),
        ("ai_widgets.mcp.server.files", logging.INFO, "no call runs"),
    ]
    assert server_logger("files").name == "ai_widgets.mcp.server.files"


def test_roots_are_declared_only_when_given() -> None:
    callers = Callers()
    assert "list_roots_callback" not in Features(callers, lambda: "s").client_options()  # none by default
    assert "list_roots_callback" not in Features(callers, lambda: "s", roots=()).client_options()
    given = Features(callers, lambda: "s", roots=["file:///a"])
    assert "list_roots_callback" in given.client_options()
    assert given.roots == ("file:///a",)


async def test_the_roots_answer(tmp_path: Path) -> None:
    spaced = tmp_path / "my data"
    spaced.mkdir()
    answer = Features(Callers(), lambda: "s", roots=[spaced]).client_options()["list_roots_callback"]
    result = await answer(None)
    assert [(str(root.uri), root.name) for root in result.roots] == [(spaced.resolve().as_uri(), "my data")]


async def test_the_deadline_runs_out_unless_paused() -> None:
    deadline = CallDeadline(0.3)
    with deadline.scope():
        await anyio.sleep(1)
    assert deadline.expired

    deadline = CallDeadline(0.3)
    with deadline.scope():
        with deadline.paused():
            await anyio.sleep(0.6)  # twice the bound, while the person is asked
        await anyio.sleep(0.1)
    assert not deadline.expired

    deadline = CallDeadline(0.3)
    with deadline.scope():
        with deadline.paused():
            await anyio.sleep(0.2)
        await anyio.sleep(1)  # the clock runs again after the pause
    assert deadline.expired

    unbounded = CallDeadline(None)
    with unbounded.scope(), unbounded.paused():
        await anyio.sleep(0.01)
    assert not unbounded.expired


async def test_a_pause_from_another_task_holds_the_call() -> None:
    deadline = CallDeadline(0.3)
    asked = asyncio.Event()

    async def person() -> None:
        await asked.wait()
        with deadline.paused():
            await asyncio.sleep(0.6)

    helper = asyncio.ensure_future(person())
    with deadline.scope():
        asked.set()
        await helper
    assert not deadline.expired
