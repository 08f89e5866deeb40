"""A round's record of one call (:class:`Call`), from its approval to its outcome, and of a question it asked the
person (:class:`Asking`); the round (:class:`~ai_widgets.session.ToolRound`) keeps them."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ai_widgets._threads import running_loop
from ai_widgets.approval import ApprovalDecision
from ai_widgets.messages import InputResponse, ToolCallPart
from ai_widgets.messages._questions import SamplingReply, SamplingRequest
from ai_widgets.tools import Tool, ToolInvocation

__all__ = ["Asking", "Call", "RunModel", "set_on_its_loop"]

#: Runs the session's model on a sampling request (the person has allowed it).
RunModel = Callable[[SamplingRequest], Awaitable[SamplingReply]]


@dataclass(eq=False)
class Asking:
    """One question a running call put to the person, until it is answered or withdrawn."""

    future: asyncio.Future[InputResponse]
    answered: bool = False  # an answer (or a withdrawal) was taken: a second one is refused


@dataclass
class Call:
    """One call of a round, from its approval to its outcome."""

    part: ToolCallPart
    tool: Tool
    invocation: ToolInvocation
    decision: asyncio.Future[tuple[ApprovalDecision, str | None]] | None = None
    decided: bool = False
    task: asyncio.Task[None] | None = None
    cancel_reason: str | None = field(default=None)  # set before the session cancels the call's task
    abandoned: concurrent.futures.Future[Any] | None = None  # a sync call's thread, given up while it still ran
    asking: Asking | None = None  # the question the call waits on (awaiting_input)
    ask_lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one question at a time
    sampling: bool = False  # waits in awaiting_approval while it runs: its server asks to use the model

    def __post_init__(self) -> None:
        self.invocation._on_abandoned = self._abandon

    def _abandon(self, future: concurrent.futures.Future[Any]) -> None:
        self.abandoned = future


def set_on_its_loop(future: asyncio.Future[Any], result: Any) -> None:
    """Sets ``future``'s result from any thread, unless it is done (a decision or answer that came too late)."""

    def settle() -> None:
        if not future.done():
            future.set_result(result)

    loop = future.get_loop()
    if running_loop() is loop:
        settle()
    else:
        loop.call_soon_threadsafe(settle)
