"""The client side of ACP's terminals (``_acp_terminals``), with real commands: merged output, the shell for a
command line, stdin from /dev/null, output bounded at a character boundary, kill and release of whole process groups
(a background job included), live updates at most 10 a second, and nothing left running after any test."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_widgets.integrations._acp_terminals import (
    DEFAULT_OUTPUT_LIMIT,
    MAX_OUTPUT_LIMIT,
    MAX_TERMINALS,
    UPDATE_INTERVAL,
    ExitStatus,
    OutputBuffer,
    Terminal,
    TerminalError,
    TerminalOutput,
    Terminals,
)
from tests.helpers import gone, no_new_children, until_gone, wait_for

PYTHON = sys.executable


@pytest.fixture(autouse=True)
def nothing_left_running() -> Iterator[None]:
    """Every test ends with no child process of its own left (each command was ended and reaped)."""
    with no_new_children():
        yield


async def test_a_command_with_args_runs_with_stdout_and_stderr_merged(tmp_path: Path) -> None:
    terminals = Terminals(cwd=tmp_path)
    try:
        code = "import sys; print('out', flush=True); print('err', file=sys.stderr, flush=True); sys.exit(3)"
        terminal = await terminals.create(PYTHON, ["-c", code])
        assert terminal.id == "terminal-1"
        assert terminals.get("terminal-1") is terminal
        assert await asyncio.wait_for(terminal.wait(), 10) == ExitStatus(3, None)
        assert terminal.output() == TerminalOutput("out\nerr\n", False, ExitStatus(3, None))
        assert terminal.cwd == str(tmp_path)
    finally:
        await terminals.close()


async def test_a_command_without_args_is_a_shell_command_line(tmp_path: Path) -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("echo one && echo two | tr a-z A-Z; pwd; exit 4", cwd=str(tmp_path))
        assert await asyncio.wait_for(terminal.wait(), 10) == ExitStatus(4, None)
        assert terminal.output().output == f"one\nTWO\n{tmp_path}\n"
    finally:
        await terminals.close()


async def test_stdin_is_empty_and_env_is_added_to_this_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIW_TEST_FROM_KERNEL", "kernel")
    terminals = Terminals()
    try:
        code = "import os, sys; print(repr(sys.stdin.read()), os.environ['AIW_TEST_FROM_KERNEL'], os.environ['AIW_X'])"
        terminal = await terminals.create(PYTHON, ["-c", code], env={"AIW_X": "given"})
        assert await asyncio.wait_for(terminal.wait(), 10) == ExitStatus(0, None)
        assert terminal.output().output == "'' kernel given\n"
    finally:
        await terminals.close()


async def test_output_keeps_its_last_bytes_within_the_limit_from_a_character_start() -> None:
    terminals = Terminals()
    try:
        # 3000 two-byte characters, then an end marker; an odd limit falls inside a character.
        code = "import sys; sys.stdout.write('é' * 3000 + 'END')"
        terminal = await terminals.create(
            PYTHON, ["-c", code], output_byte_limit=1001, env={"PYTHONIOENCODING": "utf-8"}
        )
        await asyncio.wait_for(terminal.wait(), 10)
        output = terminal.output()
        assert output.truncated
        assert output.output == "é" * 499 + "END"  # 998 + 3 bytes: the half character at the cut is dropped
        assert len(output.output.encode()) <= 1001
    finally:
        await terminals.close()


async def test_a_flood_of_output_stays_bounded() -> None:
    terminals = Terminals()
    try:
        code = "import sys\nfor n in range(400): sys.stdout.write(str(n % 10) * 100_000)\nsys.stdout.write('LAST')"
        terminal = await terminals.create(PYTHON, ["-c", code])  # 40 MB
        assert terminal.output_byte_limit == DEFAULT_OUTPUT_LIMIT
        while terminal.exit_status is None:
            assert len(terminal.output().output) <= DEFAULT_OUTPUT_LIMIT  # one byte a character here
            await asyncio.sleep(0.01)
        output = terminal.output()
        assert output.truncated
        assert len(output.output) == DEFAULT_OUTPUT_LIMIT
        assert output.output.endswith("9" * 1000 + "LAST")
    finally:
        await terminals.close()


async def test_the_limit_the_agent_asks_is_capped_and_zero_keeps_nothing() -> None:
    terminals = Terminals()
    try:
        huge = await terminals.create("true", output_byte_limit=10**12)
        assert huge.output_byte_limit == MAX_OUTPUT_LIMIT
        nothing = await terminals.create("echo something", output_byte_limit=0)
        await asyncio.wait_for(nothing.wait(), 10)
        assert nothing.output() == TerminalOutput("", True, ExitStatus(0, None))
    finally:
        await terminals.close()


def test_the_buffer_holds_back_a_character_whose_end_has_not_come() -> None:
    buffer = OutputBuffer(100)
    buffer.append("ab€".encode()[:-1])  # the euro sign's last byte is still coming
    assert buffer.text(final=False) == "ab"
    assert buffer.text(final=True) == "ab\ufffd"
    buffer.append(b"\xac")
    assert buffer.text(final=False) == "ab€"
    buffer.append(b"\xff x")  # not UTF-8 at all: shown as U+FFFD, not held back
    assert buffer.text(final=False) == "ab€\ufffd x"
    assert not buffer.truncated


def test_the_buffer_cuts_at_a_character_start() -> None:
    buffer = OutputBuffer(4)
    buffer.append("a😀b".encode())  # 1 + 4 + 1 bytes: keeping 4 would start inside the emoji
    assert buffer.truncated
    assert buffer.text(final=True) == "b"
    buffer.append("😀".encode())  # 5 bytes: the b goes
    assert buffer.text(final=True) == "😀"
    assert len(buffer) == 4


async def test_kill_ends_the_command_and_its_background_job_and_keeps_the_output() -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("sleep 60 & echo $!; echo started; wait")
        await wait_for(lambda: "started" in terminal.output().output)
        job = int(terminal.output().output.split()[0])
        started = time.monotonic()
        await terminal.kill()
        assert time.monotonic() - started < 1.5
        assert terminal.exit_status == ExitStatus(None, "SIGTERM")
        await until_gone(job, 1)
        assert terminal.output().output == f"{job}\nstarted\n"  # still readable until released
        assert terminals.get(terminal.id) is terminal
    finally:
        await terminals.close()


async def test_kill_of_a_command_that_ignores_sigterm_sends_sigkill_after_2_s() -> None:
    terminals = Terminals()
    try:
        code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)"
        terminal = await terminals.create(PYTHON, ["-c", code])
        await wait_for(lambda: "ready" in terminal.output().output)
        started = time.monotonic()
        await terminal.kill()
        assert 1.9 < time.monotonic() - started < 3.5
        assert terminal.exit_status == ExitStatus(None, "SIGKILL")
    finally:
        await terminals.close()


async def test_wait_returns_at_the_exit_though_a_background_job_holds_the_output() -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("sleep 60 & echo $!; exit 0")
        started = time.monotonic()
        assert await asyncio.wait_for(terminal.wait(), 5) == ExitStatus(0, None)
        assert time.monotonic() - started < 2
        job = int(terminal.output().output.split()[0])
        assert not gone(job)  # a background job is the agent's to end: kill or release
        await terminals.release(terminal.id)
        await until_gone(job, 1)
    finally:
        await terminals.close()


async def test_release_kills_and_forgets_the_terminal() -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("sleep 60")
        await terminals.release(terminal.id)
        await until_gone(terminal.pid, 1)
        assert len(terminals) == 0
        with pytest.raises(TerminalError, match="no terminal 'terminal-1': it was released, or never created"):
            terminals.get(terminal.id)
        with pytest.raises(TerminalError, match="no terminal 'terminal-1'"):
            await terminals.release(terminal.id)
        with pytest.raises(TerminalError, match="no terminal 'nope'"):
            terminals.get("nope")
    finally:
        await terminals.close()


async def test_a_signal_is_the_exit_status() -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("kill -9 $$")
        assert await asyncio.wait_for(terminal.wait(), 10) == ExitStatus(None, "SIGKILL")
    finally:
        await terminals.close()


async def test_live_output_comes_at_most_10_times_a_second_and_last_with_the_exit() -> None:
    seen: list[tuple[float, TerminalOutput]] = []

    def on_output(terminal: Terminal) -> None:
        seen.append((time.monotonic(), terminal.output()))

    terminals = Terminals()
    try:
        code = "import time\nfor n in range(150):\n    print(n, flush=True)\n    time.sleep(0.005)"
        terminal = await terminals.create(PYTHON, ["-c", code], on_output=on_output)
        await asyncio.wait_for(terminal.wait(), 20)
        await asyncio.sleep(UPDATE_INTERVAL * 2)
        elapsed = seen[-1][0] - seen[0][0]
        assert 3 <= len(seen) <= elapsed / UPDATE_INTERVAL + 2
        gaps = [later[0] - earlier[0] for earlier, later in itertools.pairwise(seen)]
        assert min(gaps) >= UPDATE_INTERVAL * 0.9
        last = seen[-1][1]
        assert last.exit_status == ExitStatus(0, None)
        assert last.output == "".join(f"{n}\n" for n in range(150))
        assert all(output.exit_status is None for _, output in seen[:-1])
    finally:
        await terminals.close()


async def test_a_failing_callback_is_logged_and_the_terminal_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    def broken(terminal: Terminal) -> None:
        raise ValueError("the card is gone")

    terminals = Terminals()
    try:
        terminal = await terminals.create("echo fine", on_output=broken)
        assert await asyncio.wait_for(terminal.wait(), 10) == ExitStatus(0, None)
        assert terminal.output().output == "fine\n"
        assert "the live output callback of terminal terminal-1 failed" in caplog.text
    finally:
        await terminals.close()


async def test_no_update_comes_after_release() -> None:
    seen: list[TerminalOutput] = []
    terminals = Terminals()
    try:
        terminal = await terminals.create(
            "while true; do echo tick; sleep 0.01; done", on_output=lambda t: seen.append(t.output())
        )
        await asyncio.sleep(0.3)
        await terminals.release(terminal.id)
        count = len(seen)
        await asyncio.sleep(UPDATE_INTERVAL * 3)
        assert len(seen) == count
    finally:
        await terminals.close()


async def test_kill_all_ends_every_command_and_close_releases_them() -> None:
    terminals = Terminals()
    try:
        first = await terminals.create("sleep 60")
        second = await terminals.create(PYTHON, ["-c", "import time; time.sleep(60)"])
        await terminals.kill_all()
        assert first.exit_status == ExitStatus(None, "SIGTERM")
        assert second.exit_status == ExitStatus(None, "SIGTERM")
        assert len(terminals) == 2
        third = await terminals.create("sleep 60")
    finally:
        await terminals.close()
    await until_gone(third.pid, 1)
    assert len(terminals) == 0
    with pytest.raises(TerminalError, match="the terminals were closed"):
        await terminals.create("true")


async def test_too_many_terminals_are_refused() -> None:
    terminals = Terminals()
    try:
        for _ in range(MAX_TERMINALS):
            await terminals.create("true")
        with pytest.raises(TerminalError, match=f"{MAX_TERMINALS} terminals are open already"):
            await terminals.create("true")
        await terminals.release("terminal-1")
        await terminals.create("true")
    finally:
        await terminals.close()


@pytest.mark.parametrize(
    ("command", "args", "cwd", "limit", "said"),
    [
        ("no-such-program-here", ["x"], None, None, "cannot run 'no-such-program-here': not found"),
        ("", [], None, None, "command must be a non-empty string"),
        ("ls", "-la", None, None, "args must be a list of strings"),
        ("ls", [], "relative/dir", None, "cwd must be an absolute path, not 'relative/dir'"),
        ("ls", [], "/no/such/dir", None, "its working directory '/no/such/dir' does not exist"),
        ("ls", [], None, -1, "output_byte_limit must be a whole number of bytes, not -1"),
    ],
    ids=["not-found", "empty", "args-string", "relative-cwd", "missing-cwd", "negative-limit"],
)
async def test_bad_requests_are_clear_errors(command: str, args: list[str], cwd: str, limit: int, said: str) -> None:
    terminals = Terminals()
    with pytest.raises(TerminalError, match=said):
        await terminals.create(command, args, cwd=cwd, output_byte_limit=limit)
    assert len(terminals) == 0


async def test_a_command_line_that_is_not_found_is_the_shells_exit_127() -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("no-such-program-here --flag")
        assert await asyncio.wait_for(terminal.wait(), 10) == ExitStatus(127, None)
        assert "no-such-program-here" in terminal.output().output
    finally:
        await terminals.close()


async def test_logging_is_quiet_for_a_normal_run(caplog: pytest.LogCaptureFixture) -> None:
    terminals = Terminals()
    with caplog.at_level(logging.DEBUG, logger="ai_widgets"):
        terminal = await terminals.create("echo hi", on_output=lambda t: None)
        await terminal.wait()
        await terminals.close()
    assert caplog.records == []


async def test_a_terminal_never_released_is_killed_when_python_exits() -> None:
    script = (
        "import asyncio\nfrom ai_widgets.integrations._acp_terminals import Terminals\n"
        "async def main():\n"
        "    terminal = await Terminals().create('sleep 60')\n"
        "    print(terminal.pid, flush=True)\n"
        "asyncio.run(main())\n"
    )
    host = await asyncio.create_subprocess_exec(
        PYTHON, "-c", script, stdout=asyncio.subprocess.PIPE, cwd=Path(__file__).parents[2]
    )
    out, _ = await asyncio.wait_for(host.communicate(), 20)
    assert host.returncode == 0
    await until_gone(int(out), 2)


async def test_a_wait_in_progress_ends_when_the_terminal_is_released() -> None:
    terminals = Terminals()
    try:
        terminal = await terminals.create("sleep 60")
        waiting = asyncio.ensure_future(terminal.wait())
        await asyncio.sleep(0.1)
        await terminals.release(terminal.id)
        assert await asyncio.wait_for(waiting, 1) == ExitStatus(None, "SIGTERM")
    finally:
        await terminals.close()


async def test_a_terminal_starting_while_the_set_closes_is_ended() -> None:
    terminals = Terminals()
    starting = asyncio.ensure_future(terminals.create("sleep 60"))
    await asyncio.sleep(0)  # the create is under way, waiting for its process
    await terminals.close()
    with pytest.raises(TerminalError, match="the terminals were closed"):
        await starting
    assert len(terminals) == 0
