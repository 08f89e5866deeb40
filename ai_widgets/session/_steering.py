"""Messages sent while a turn runs: queued until the turn's next tool boundary, then delivered, carried over to the
next turn, or handed back by a stop.

The queue is shared by the threads that send (any) and the turn's loop, so every step runs under the session's
claim lock (the caller holds it): whether a message joins the running turn or waits for the next one is decided in
the same step that decides whether a turn is running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from dataclasses import dataclass, field

from ai_widgets.messages import Message

__all__ = ["NotDeliveredError", "Steer", "SteeringQueue"]


class NotDeliveredError(RuntimeError):
    """A message sent while a turn ran was handed back before the model got it: ``stop()`` ended the turn first, or
    the caller stopped waiting. It is not in the conversation and was not sent."""


@dataclass(eq=False, slots=True)
class Steer:
    """One message sent while a turn runs, the loop its sender waits on (where a turn it starts runs), and the reply
    the sender waits for (the last reply of the turn that delivered it)."""

    message: Message
    loop: asyncio.AbstractEventLoop
    reply: concurrent.futures.Future[Message] = field(default_factory=concurrent.futures.Future)


@dataclass(slots=True)
class SteeringQueue:
    """The messages waiting for a tool boundary, and those the running turn delivered, whose senders wait for its
    end. Not thread-safe by itself: the session calls it under its claim lock."""

    waiting: list[Steer] = field(default_factory=list)
    delivered: list[Steer] = field(default_factory=list)

    def add(self, message: Message, loop: asyncio.AbstractEventLoop) -> Steer:
        """Queues ``message`` for the running turn's next tool boundary; its sender waits on ``loop``."""
        steer = Steer(message, loop)
        self.waiting.append(steer)
        return steer

    def withdraw(self, steer: Steer) -> bool:
        """Takes a message its sender no longer waits for out of the queue; whether it was still waiting."""
        if steer not in self.waiting:
            return False
        self.waiting.remove(steer)
        return True

    def take(self) -> list[Message]:
        """Delivers every waiting message to the running turn (at a tool boundary, or as the next turn starts)."""
        taken, self.waiting = self.waiting, []
        self.delivered.extend(taken)
        return [steer.message for steer in taken]

    def untake(self) -> None:
        """The turn the delivered messages were taken for never started: they wait again, first in the queue."""
        self.waiting[:0], self.delivered = self.delivered, []

    def settle(self, reply: Message) -> None:
        """The turn that delivered messages ended with ``reply``: their senders get it."""
        delivered, self.delivered = self.delivered, []
        for steer in delivered:
            if not steer.reply.done():
                steer.reply.set_result(reply)

    def hand_back(self) -> list[Message]:
        """Empties the queue (a stop): each waiting sender is told its message was not sent; returns the messages."""
        waiting, self.waiting = self.waiting, []
        for steer in waiting:
            if not steer.reply.done():
                steer.reply.set_exception(
                    NotDeliveredError("the turn was stopped before this message reached the model: it was not sent")
                )
        return [steer.message for steer in waiting]

    def queued(self) -> tuple[Message, ...]:
        """The messages waiting now, oldest first."""
        return tuple(steer.message for steer in self.waiting)
