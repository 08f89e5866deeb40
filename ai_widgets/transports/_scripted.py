"""Transports that need no network: a scripted model for demos and tests, and an echo."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ai_widgets.events import (
    ProviderToolResult,
    ReasoningDelta,
    ResponseCompleted,
    ResponseStarted,
    StatusUpdate,
    StreamEvent,
    TextDelta,
    ToolApprovalRequested,
    ToolCallArgumentsDone,
    ToolCallDelta,
    ToolCallStarted,
    ToolProgressUpdate,
    UsageUpdate,
)
from ai_widgets.messages import FinishReason
from ai_widgets.outcome import ToolOutcome
from ai_widgets.transports._base import NO_PROFILE, ChatRequest, TransportProfile

__all__ = ["EchoTransport", "ScriptExhaustedError", "ScriptedReply", "ScriptedToolCall", "ScriptedTransport"]


class ScriptExhaustedError(RuntimeError):
    """The scripted model was asked for more replies than its script has."""


@dataclass(frozen=True, kw_only=True)
class ScriptedToolCall:
    """A tool call the scripted model makes.

    Attributes:
        name: The tool's name.
        arguments: The arguments, as a dict (sent as JSON) or raw JSON text (sent as written, even if invalid).
        id: The call id; ``call_<n>`` when omitted.
        stream: Send the arguments in slices; otherwise complete with the call's start.
        provider_result: Makes this a provider-run call: progress events, then this result (a ``ToolOutcome``
            or a value).
        progress: ``(fraction, message)`` steps a provider-run call reports before its result.
        approval_reason: Ask for a person's decision on this call, with this question.
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    stream: bool = True
    provider_result: Any = None
    progress: Sequence[tuple[float | None, str | None]] = ()
    approval_reason: str | None = None

    @property
    def provider_executed(self) -> bool:
        """Whether the provider runs this call."""
        return self.provider_result is not None

    @property
    def arguments_json(self) -> str:
        """The arguments as the JSON text the model sends."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    """One scripted model response.

    Attributes:
        text: The reply text, streamed in slices.
        reasoning: Reasoning streamed before the text.
        status: The status line shown while the model "decides"; ``None`` for none.
        tool_calls: Calls the model makes after its text.
        text_after_tools: Text streamed after the calls, as a model does after a provider-run tool's result.
        finish_reason: Why it stops; ``tool_calls`` when it makes local calls, ``stop`` otherwise.
        usage: Token usage of the response; estimated from its length (4 characters a token) when omitted. It is
            priced (``Usage.cost``) only when it names a ``model`` and a ``provider`` genai-prices knows.
        error: Raised after the first ``error_after`` events, as a provider failing mid-reply.
        error_after: How many events stream before ``error`` is raised (all of them when ``None``).
        truncate: End the stream without ``ResponseCompleted``, as a connection that drops.
    """

    text: str = ""
    reasoning: str = ""
    status: str | None = "Thinking…"
    tool_calls: Sequence[ScriptedToolCall] = ()
    text_after_tools: str = ""
    finish_reason: FinishReason | None = None
    usage: UsageUpdate | None = None
    error: BaseException | None = None
    error_after: int | None = None
    truncate: bool = False


ScriptStep: TypeAlias = ScriptedReply | str | Callable[[ChatRequest], "ScriptedReply | str"]


class ScriptedTransport:
    """A model that plays scripted replies with realistic timing: no key, no network.

    The script is a list of steps, one per model request, or a function from the request to a reply. A step is a
    :class:`ScriptedReply`, a plain string (a text reply), or a function of the :class:`ChatRequest` that
    returns one, which is how a follow-up reads the tool's outcome off the request and answers from it::

        ScriptedTransport([
            ScriptedReply(tool_calls=[ScriptedToolCall(name="get_weather", arguments={"city": "Lisbon"})]),
            lambda request: f"It is {request.tool_results()[0].outcome.value['sky']} in Lisbon.",
        ])

    Args:
        script: The steps, played in order, or a function that answers every request.
        delay: Seconds between slices (0 streams as fast as the loop allows).
        decide_delay: Seconds the status line shows before the reply starts.
        slice_size: The range of characters per text or argument slice.
        seed: Seeds the slicing, so a stream is the same every run.
        repeat: Start the script again when it runs out (otherwise a further request fails clearly).
        profile: What the scripted model stands for (its context window, attachment limits...), which the session
            keeps to as it would for that model; by default nothing is known.

    Raises:
        TypeError: ``profile`` is not a :class:`TransportProfile`, or a step of the script is not a reply, a string
            or a function (an example's ``...`` left in it, say): said here rather than when its turn comes.
        ValueError: ``slice_size`` is not a range of at least one character, or a delay is negative.

    A scripted model has no native structured output: it ignores ``request.output_schema``, and a typed turn's
    script answers with the JSON text (the session validates it like any provider's).
    """

    def __init__(
        self,
        script: Sequence[ScriptStep] | Callable[[ChatRequest], ScriptedReply | str],
        *,
        delay: float = 0.0,
        decide_delay: float = 0.0,
        slice_size: tuple[int, int] = (4, 8),
        seed: int = 0,
        repeat: bool = False,
        profile: TransportProfile = NO_PROFILE,
    ) -> None:
        low, high = slice_size
        if not 1 <= low <= high:
            raise ValueError(f"slice_size must be (low, high) with 1 <= low <= high, not {slice_size!r}")
        if delay < 0 or decide_delay < 0:
            raise ValueError("delays must not be negative")
        self._script = checked_script(script)
        self._delay = delay
        self._decide_delay = decide_delay
        self._slice_size = slice_size
        self._random = random.Random(seed)
        self._repeat = repeat
        self._position = 0
        self._call_counter = 0
        self._profile = checked_profile(profile)
        self.requests: list[ChatRequest] = []

    @property
    def profile(self) -> TransportProfile:
        """What the scripted model stands for (the ``profile`` it was given)."""
        return self._profile

    def _next_reply(self, request: ChatRequest) -> ScriptedReply:
        if callable(self._script):
            step: ScriptStep = self._script
        else:
            if self._position >= len(self._script):
                if not self._repeat or not self._script:
                    raise ScriptExhaustedError(
                        f"the scripted model has no reply for request {self._position + 1}: "
                        f"its script has {len(self._script)} step(s)"
                    )
                self._position = 0
            step = self._script[self._position]
            self._position += 1
        if callable(step):
            step = step(request)
        if isinstance(step, str):
            return ScriptedReply(text=step)
        if not isinstance(step, ScriptedReply):
            raise TypeError(f"a script step must give a ScriptedReply or a str, not {type(step).__name__}")
        return step

    def _slices(self, text: str) -> list[str]:
        low, high = self._slice_size
        out, i = [], 0
        while i < len(text):
            size = self._random.randint(low, high)
            out.append(text[i : i + size])
            i += size
        return out

    async def _pause(self, seconds: float) -> None:
        if seconds > 0:
            await asyncio.sleep(seconds)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Plays the next step of the script."""
        self.requests.append(request)
        reply = self._next_reply(request)
        limit = reply.error_after if reply.error is not None else None
        count = 0
        async for event in self._events(reply):
            if limit is not None and count >= limit:
                break
            yield event
            count += 1
        if reply.error is not None:
            raise reply.error

    async def _events(self, reply: ScriptedReply) -> AsyncIterator[StreamEvent]:
        yield ResponseStarted()
        if reply.status:
            yield StatusUpdate(reply.status)
            await self._pause(self._decide_delay)
        for piece in self._slices(reply.reasoning):
            yield ReasoningDelta(piece)
            await self._pause(self._delay)
        for piece in self._slices(reply.text):
            yield TextDelta(piece)
            await self._pause(self._delay)
        local_calls = False
        for call in reply.tool_calls:
            self._call_counter += 1
            call_id = call.id or f"call_{self._call_counter}"
            arguments = call.arguments_json
            if call.stream:
                yield ToolCallStarted(call_id, call.name, provider_executed=call.provider_executed)
                for piece in self._slices(arguments):
                    yield ToolCallDelta(call_id, piece)
                    await self._pause(self._delay)
            else:
                yield ToolCallStarted(call_id, call.name, arguments, provider_executed=call.provider_executed)
            yield ToolCallArgumentsDone(call_id)
            if call.approval_reason is not None:
                yield ToolApprovalRequested(call_id, call.approval_reason)
            if call.provider_executed:
                for fraction, message in call.progress:
                    yield ToolProgressUpdate(call_id, fraction, message)
                    await self._pause(max(self._delay, self._decide_delay / 2))
                result = call.provider_result
                outcome = result if isinstance(result, ToolOutcome) else ToolOutcome.success(result)
                yield ProviderToolResult(call_id, outcome)
            else:
                local_calls = True
        for piece in self._slices(reply.text_after_tools):
            yield TextDelta(piece)
            await self._pause(self._delay)
        if reply.usage is not None:
            yield reply.usage
        else:
            produced = len(reply.text) + len(reply.reasoning) + len(reply.text_after_tools)
            produced += sum(len(c.arguments_json) for c in reply.tool_calls)
            yield UsageUpdate(input_tokens=100, output_tokens=max(1, produced // 4))
        if reply.truncate:
            return
        finish = reply.finish_reason or (FinishReason.TOOL_CALLS if local_calls else FinishReason.STOP)
        yield ResponseCompleted(finish)


class EchoTransport:
    """A model that answers with the user's last message, streamed in slices. For trying the UI; ``profile`` as
    :class:`ScriptedTransport`'s."""

    def __init__(
        self,
        *,
        prefix: str = "",
        delay: float = 0.0,
        slice_size: tuple[int, int] = (4, 8),
        profile: TransportProfile = NO_PROFILE,
    ) -> None:
        self._scripted = ScriptedTransport(
            lambda request: ScriptedReply(text=prefix + request.last_user_text, status=None),
            delay=delay,
            slice_size=slice_size,
            profile=profile,
        )

    @property
    def profile(self) -> TransportProfile:
        """What the echo stands for (the ``profile`` it was given)."""
        return self._scripted.profile

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Echoes the last user message."""
        return self._scripted.stream(request)


def checked_script(script: object) -> Sequence[ScriptStep] | Callable[[ChatRequest], ScriptedReply | str]:
    """``script``, when it is a function or a sequence of steps that are each a reply, a string or a function.

    Raises:
        TypeError: It is not; the message names the first bad step.
    """
    if callable(script):
        return script
    if isinstance(script, str | bytes) or not isinstance(script, Sequence):
        raise TypeError(f"the script is a list of steps or a function, not {a_type(script)}")
    for number, step in enumerate(script, 1):
        if not isinstance(step, ScriptedReply | str) and not callable(step):
            what = "Ellipsis (...)" if step is Ellipsis else a_type(step)
            raise TypeError(
                f"step {number} of the script is {what}: a step is a ScriptedReply, a str, or a function of the "
                "request that returns one (replace any '...' placeholder with the reply)"
            )
    return script


def a_type(value: object) -> str:
    """``value``'s type with its article, for a message: ``an int``, ``a list``."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def checked_profile(profile: object) -> TransportProfile:
    """``profile``, when it is a :class:`TransportProfile`.

    Raises:
        TypeError: It is not.
    """
    if not isinstance(profile, TransportProfile):
        raise TypeError(f"profile must be a TransportProfile, not {type(profile).__name__}")
    return profile
