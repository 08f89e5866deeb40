"""Ending the processes an ACP agent brings (the agent itself, the terminals it asks for) as whole process groups,
and waiting for a process's exit without waiting for its pipes.

Each such process is started with ``start_new_session=True``, so it leads a group of its own that its children join:
signalling the group reaches a grandchild that still holds the pipes after its parent exited (Gemini CLI relaunches
itself as a child; a shell's background job). asyncio's ``Process.wait()`` returns only once every pipe has closed
as well (Python 3.10 and 3.11), so a grandchild holding one would keep it waiting: the exit is polled instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

__all__ = ["EXIT_POLL", "KILL_WAIT", "exited", "kill_if_running", "signal_group", "stop_group"]

#: Seconds between two looks at whether a process has exited.
EXIT_POLL = 0.02
#: Seconds to wait for a process to go after SIGKILL (only a process stuck in the kernel takes longer).
KILL_WAIT = 5.0


def signal_group(process: asyncio.subprocess.Process, signum: signal.Signals) -> None:
    """Sends ``signum`` to every process of ``process``'s group (it leads one); a group already gone is no error."""
    if sys.platform == "win32":  # no process groups: the process alone
        with contextlib.suppress(ProcessLookupError):
            process.kill() if signum == signal.SIGKILL else process.terminate()
        return
    # PermissionError: on macOS a group whose members are all zombies answers EPERM.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


async def exited(process: asyncio.subprocess.Process, timeout: float | None, *, poll: float = EXIT_POLL) -> bool:
    """Whether ``process`` exited within ``timeout`` seconds (``None``: waits for it), whatever its pipes do."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while process.returncode is None:
        if deadline is not None and loop.time() >= deadline:
            return False
        await asyncio.sleep(poll)
    return True


async def stop_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """Ends ``process`` and its group: SIGTERM, then SIGKILL after ``grace`` seconds; once the leader has exited,
    SIGKILL for any member that outlived it (it would hold the pipes open)."""
    if process.returncode is None:
        signal_group(process, signal.SIGTERM)
        if not await exited(process, grace):
            signal_group(process, signal.SIGKILL)
            await exited(process, KILL_WAIT)
    signal_group(process, signal.SIGKILL)


def kill_if_running(process: asyncio.subprocess.Process) -> None:
    """SIGKILL for ``process``'s group if the process still runs (a last resort, at collection or exit: once it
    exited, its group id may be another's)."""
    if process.returncode is None:
        signal_group(process, signal.SIGKILL)
