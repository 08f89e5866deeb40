"""Outside a kernel both waits are plain waits; an unrecognised kernel gets a clear error, never a hang."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
import types
from typing import Any

import pytest

from tests.kernel._module import load_kernel_module

K = load_kernel_module()


def test_no_kernel_is_detected() -> None:
    support = K.kernel_support()
    assert (support.kind, support.version) == ("none", None)
    assert K.main_loop() is None


async def test_await_with_comms_is_a_plain_await() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert await K.await_with_comms(answer()) == 42

    async def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await K.await_with_comms(fail())


async def test_await_with_comms_propagates_cancellation() -> None:
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(3600)

    task = asyncio.ensure_future(K.await_with_comms(forever()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_wait_with_comms_is_future_result() -> None:
    future: concurrent.futures.Future[str] = concurrent.futures.Future()
    threading.Timer(0.05, future.set_result, args=("done",)).start()
    assert K.wait_with_comms(future) == "done"

    failed: concurrent.futures.Future[str] = concurrent.futures.Future()
    failed.set_exception(KeyError("x"))
    with pytest.raises(KeyError):
        K.wait_with_comms(failed)
    with pytest.raises(ValueError, match="poll_interval"):
        K.wait_with_comms(future, poll_interval=0)


async def test_run_on_main_loop_outside_a_kernel_uses_the_running_loop() -> None:
    async def where() -> tuple[str, bool]:
        return threading.current_thread().name, asyncio.get_running_loop() is loop

    loop = asyncio.get_running_loop()
    result = K.run_on_main_loop(where())
    assert isinstance(result, concurrent.futures.Future)
    assert await asyncio.wrap_future(result) == (threading.current_thread().name, True)

    async def fail() -> None:
        raise RuntimeError("inner")

    with pytest.raises(RuntimeError, match="inner"):
        await asyncio.wrap_future(K.run_on_main_loop(fail()))

    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    pending = K.run_on_main_loop(forever())
    await asyncio.sleep(0)
    pending.cancel()
    await asyncio.wait_for(cancelled.wait(), 2)


def test_run_on_main_loop_without_any_loop_raises_and_closes_the_coroutine() -> None:
    async def nothing() -> None:
        return None

    coro = nothing()
    with pytest.raises(RuntimeError, match="no kernel event loop"):
        K.run_on_main_loop(coro)
    assert coro.cr_frame is None  # closed: no "never awaited" warning


@pytest.fixture
def fake_kernel(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Pretends to run inside a kernel whose internals are not ipykernel's."""
    kernel = types.SimpleNamespace()
    shell = types.SimpleNamespace(kernel=kernel)
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    return kernel


async def test_unknown_kernel_raises_before_awaiting(fake_kernel: Any) -> None:
    support = K.kernel_support()
    assert support.kind == "unknown"

    async def turn() -> None:
        raise AssertionError("must not run")

    coro = turn()
    with pytest.raises(K.UnsupportedKernelError, match=r"chat\.send\(\)"):
        await K.await_with_comms(coro)
    assert coro.cr_frame is None

    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    with pytest.raises(K.UnsupportedKernelError, match="background"):
        K.wait_with_comms(future)


async def test_kernel_with_concurrent_comms_but_unknown_internals(fake_kernel: Any) -> None:
    async def dispatch_shell(msg: Any, /, subshell_id: str | None = None, *, concurrent: bool = False) -> None:
        return None

    fake_kernel.dispatch_shell = dispatch_shell
    assert K.kernel_support().kind == "ipykernel7-concurrent-comms"

    async def answer() -> int:
        return 7

    assert await K.await_with_comms(answer()) == 7  # the kernel handles comms itself while a cell awaits
    with pytest.raises(K.UnsupportedKernelError):  # but a blocking wait needs the pump
        K.wait_with_comms(concurrent.futures.Future())
