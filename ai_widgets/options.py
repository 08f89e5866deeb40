"""Options of a session and of each model request."""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Literal

__all__ = ["DEFAULT_MAX_TOOL_RESULT_CHARS", "RequestOptions", "SessionOptions", "ToolChoice"]

#: The most characters of one tool result sent to the model, unless a session says otherwise: about 25,000 tokens,
#: the cap Claude Code puts on an MCP tool's output. A larger result would be sent again with every later request,
#: and one past the model's context fails them all.
DEFAULT_MAX_TOOL_RESULT_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """Which tools the model may or must call.

    Use ``ToolChoice.AUTO`` (the model decides), ``ToolChoice.NONE`` (no tools are sent at all, so no provider can
    call one), ``ToolChoice.REQUIRED`` (it must call some tool) or ``ToolChoice.specific(name)``. A forcing choice
    applies to the first request of a turn; later requests of the same turn use ``AUTO``, so the model can answer
    from the results instead of calling tools until the limit.
    """

    mode: Literal["auto", "none", "required", "tool"]
    tool_name: str | None = None

    AUTO: ClassVar[ToolChoice]
    NONE: ClassVar[ToolChoice]
    REQUIRED: ClassVar[ToolChoice]

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "none", "required", "tool"):
            raise ValueError(f"unknown tool choice mode {self.mode!r}")
        if (self.mode == "tool") != bool(self.tool_name):
            raise ValueError("a tool name is given with ToolChoice.specific(name), and only there")

    @classmethod
    def specific(cls, tool_name: str) -> ToolChoice:
        """The model must call this tool."""
        return cls("tool", tool_name)

    @property
    def forces_call(self) -> bool:
        """Whether the model must call a tool."""
        return self.mode in ("required", "tool")


ToolChoice.AUTO = ToolChoice("auto")
ToolChoice.NONE = ToolChoice("none")
ToolChoice.REQUIRED = ToolChoice("required")


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestOptions:
    """What every model request of a session carries.

    Attributes:
        tool_choice: Which tools the model may or must call.
        system_prompt: Instructions sent before the conversation.
        temperature: Sampling temperature, or the provider's default.
        max_tokens: At most this many output tokens per response.
        extra: Provider-specific request fields, passed through as they are.
        max_tool_result_chars: The most characters of one tool result the model is sent (its text, or its value as
            JSON). A longer one is cut in the middle, its beginning and end kept, with a note saying how much was
            left out; the call's outcome, the card and the transcript keep it whole. ``None`` sends every result
            whole.
        cache: Ask for prompt caching where the provider offers it, so the tools, system prompt and conversation
            sent again with each request are read from the provider's cache (cheaper, faster): Anthropic's
            ``cache_control`` breakpoints (the tools, the system prompt and the last message), OpenAI's
            ``prompt_cache_key`` (the conversation's id). Gemini caches on its own (implicit caching). The hits
            are in ``Usage.cached_tokens``, priced at the cache's price.
        context_window: The most tokens one request may take (what is sent, the tools' definitions, the system prompt
            and ``max_tokens`` of output), or ``None`` for the model's known window (its transport's
            ``context_window``; unknown: nothing is shortened). A conversation longer than that is shortened for the
            request only (the oldest tool results cut, then the oldest turns left out, never the current one, the
            model told what was left out); ``session.messages`` keeps everything.
    """

    tool_choice: ToolChoice = ToolChoice.AUTO
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
    cache: bool = False
    context_window: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cache, bool):
            raise TypeError(f"cache must be True or False, not {self.cache!r}")
        if not isinstance(self.tool_choice, ToolChoice):
            raise TypeError("tool_choice must be a ToolChoice (ToolChoice.AUTO, NONE, REQUIRED or specific(name))")
        if self.temperature is not None and not (0 <= self.temperature <= 2):
            raise ValueError(f"temperature must be from 0 to 2, not {self.temperature!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {self.max_tokens!r}")
        limit = self.max_tool_result_chars
        if limit is not None and (type(limit) is not int or limit < 1):
            raise ValueError(f"max_tool_result_chars must be a whole number of at least 1, or None, not {limit!r}")
        window = self.context_window
        if window is not None and (type(window) is not int or window < 1):
            raise ValueError(f"context_window must be a whole number of tokens of at least 1, or None, not {window!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOptions:
    """How a session runs a turn.

    Attributes:
        execute_tools: Run tool calls locally; when off, all running is left to the transport.
        max_iterations: Rounds of tool calls per turn. When the model asks for tools once more after that, those
            calls get a "not run" result and the turn ends as ``limit_reached``; ``session.resume()`` runs them.
        max_consecutive_errors: The turn ends, showing the error, after this many tool rounds in a row in which a
            call failed.
        concurrent_tools: Run the calls of one reply concurrently (a tool marked ``sequential`` runs alone anyway).
        include_detailed_errors: Tell the model a failing tool's exception type and text (which can hold secrets).
        terminate_on_unknown_calls: End the turn when the model calls a tool that is not registered, rather than
            telling the model and going on.
        tool_timeout: Seconds a call may run before it fails; ``None`` for no limit. A sync tool that times out
            is told through ``invocation.cancelled``; its thread cannot be killed and stops counting against the
            library's thread limit.
        tool_executor: Where sync tools run: a ``concurrent.futures.Executor`` (a Dask or Ray executor sends them
            to a cluster; the call then travels pickled, without context variables, and the handler's
            ``ToolInvocation`` is a stand-in built where it runs, with ``context`` ``None``), or ``None`` for the
            library's own threads. On Dask's executor (``client.get_executor()``) the stand-in's progress reports
            come back to the card (as Dask events, at most 20 a second per call, the last one always) and its
            ``cancelled`` is set once the call is cancelled here (which cancels the Dask task); other executors
            cannot send progress back (the card says so) and never set ``cancelled``. A call runs at most once: a
            run Dask starts again after the worker died refuses to call the tool, and a call whose worker (or pool
            process) dies fails saying so. A result or exception that cannot be pickled there or read here fails
            that call, saying so.
        waiting_status: The status line shown from each model request until its first content (text, reasoning
            or a tool call), so a person sees that the model is working; a transport may replace it with what it
            knows (reasoning started, a search running). ``None`` shows nothing.
        output_retries: With ``send(..., output_type=...)``: how many times a final answer that does not validate
            is asked for again, the validation errors told to the model, before the turn ends in error.
        max_cost: The most one turn may spend, in USD (a ``Decimal``, or a number: kept as a ``Decimal``), or
            ``None`` for no limit. Once the turn's requests have cost this much (``Usage.cost``), the turn ends as
            ``limit_reached`` after the request that reached it, whatever the next request was for (a tool round,
            an answer that did not validate asked for again, a retry shortened): the calls the model asked for are
            left ``skipped``, the reply's error says what was spent, and ``session.resume()`` runs them with a fresh
            budget. A model whose price is unknown cannot be kept to a budget: the turn ends the same way after
            its first request, saying so, rather than spend without a limit.
    """

    execute_tools: bool = True
    max_iterations: int = 10
    max_consecutive_errors: int = 3
    concurrent_tools: bool = True
    include_detailed_errors: bool = False
    terminate_on_unknown_calls: bool = False
    tool_timeout: float | None = None
    tool_executor: Executor | None = None
    waiting_status: str | None = "Thinking…"
    output_retries: int = 2
    max_cost: Decimal | float | int | None = None

    def __post_init__(self) -> None:
        if self.max_cost is not None:
            object.__setattr__(self, "max_cost", _budget(self.max_cost))
        if type(self.output_retries) is not int or self.output_retries < 0:
            raise ValueError(f"output_retries must be a whole number of at least 0, not {self.output_retries!r}")
        if self.waiting_status is not None and not isinstance(self.waiting_status, str):
            raise TypeError(f"waiting_status must be text or None, not {type(self.waiting_status).__name__}")
        if self.tool_executor is not None and not isinstance(self.tool_executor, Executor):
            raise TypeError(
                f"tool_executor must be a concurrent.futures.Executor, not {type(self.tool_executor).__name__}"
            )
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, not {self.max_iterations!r}")
        if self.max_consecutive_errors < 1:
            raise ValueError(f"max_consecutive_errors must be at least 1, not {self.max_consecutive_errors!r}")
        if self.tool_timeout is not None and not (self.tool_timeout > 0 and math.isfinite(self.tool_timeout)):
            raise ValueError(f"tool_timeout must be a positive number of seconds, not {self.tool_timeout!r}")


def _budget(value: object) -> Decimal:
    """``max_cost`` as a ``Decimal`` (a float by its shortest text: ``0.1`` is ``Decimal("0.1")``).

    Raises:
        ValueError: It is not a positive, finite amount.
    """
    try:
        if isinstance(value, bool) or not isinstance(value, (Decimal, float, int)):
            raise InvalidOperation
        amount = value if isinstance(value, Decimal) else Decimal(str(value))
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite() or amount <= 0:
        raise ValueError(f"max_cost must be a positive amount of USD (a Decimal or a number), or None, not {value!r}")
    return amount
