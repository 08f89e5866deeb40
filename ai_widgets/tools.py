"""Tools: what a model is told about a function, and how a call of it is validated, run and answered.

A tool is a :class:`ToolDefinition` (what the model and the card see) plus an async ``invoke``. ``@tool`` builds
one from a plain function, deriving the JSON Schema from its signature with pydantic; the same pydantic model
validates and binds the arguments, so what the model is told is exactly what gets bound.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import logging
import math
import pickle
import re
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, Protocol, TypeVar, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from ai_widgets._remote_progress import ProgressSender, RemoteCall, RemoteRegistration, register_remote_call
from ai_widgets._safe import UnsafeValueError, json_safe, redact, safe_text
from ai_widgets._schema import derive_signature
from ai_widgets._threads import ToolThreads, default_tool_threads
from ai_widgets._traceback import user_first_traceback
from ai_widgets.arguments import StreamingArguments

__all__ = [
    "Attachment",
    "Citation",
    "Tool",
    "ToolDefinition",
    "ToolError",
    "ToolInvocation",
    "ToolOutcome",
    "ToolProgress",
    "ToolRegistry",
    "ToolRisk",
    "ToolSource",
    "tool",
]

T = TypeVar("T")

_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolRisk(str, Enum):
    """How much harm a call can do; ``DESTRUCTIVE`` tools ask for approval by default."""

    READ_ONLY = "read_only"
    NORMAL = "normal"
    DESTRUCTIVE = "destructive"


class ToolDefinition(BaseModel):
    """What the model is told about a tool, and what its card shows.

    Attributes:
        name: The name the model calls it by (letters, digits, ``_`` and ``-``; at most 64).
        description: What the tool does, for the model.
        parameters: The JSON Schema of its arguments (an object schema).
        title: A human title for the card; the name is shown when ``None``.
        icon: A short icon for the card (an emoji or a single character).
        risk: How much harm a call can do.
        requires_approval: Whether every call needs a person's decision, whatever the risk.
        sequential: Whether calls of this tool run alone rather than concurrently with other calls.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    title: str | None = None
    icon: str | None = None
    risk: ToolRisk = ToolRisk.NORMAL
    requires_approval: bool = False
    sequential: bool = False

    def model_post_init(self, context: Any, /) -> None:
        _check_name(self.name)
        if self.parameters.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON Schema of type 'object'")

    def model_schema(self) -> dict[str, Any]:
        """The definition as a provider needs it: name, description and parameters, nothing for the UI."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def _check_name(name: str) -> None:
    if not _NAME_PATTERN.match(name):
        raise ValueError(f"invalid tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' (what providers accept)")


class Citation(BaseModel):
    """A source a tool's result is based on."""

    model_config = ConfigDict(frozen=True)

    url: str
    title: str | None = None
    snippet: str | None = None


class Attachment(BaseModel):
    """A file that comes with a result: inline base64 ``data`` or a ``url``, with its MIME type."""

    model_config = ConfigDict(frozen=True)

    mime_type: str
    data: str | None = None
    url: str | None = None
    name: str | None = None

    def model_post_init(self, context: Any, /) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("an attachment needs exactly one of data (base64) or url")


class ToolError(BaseModel):
    """An exception a tool raised, kept for the person (never sent to the model unless asked for)."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    traceback: str | None = None
    _exception: BaseException | None = PrivateAttr(default=None)

    @classmethod
    def from_exception(cls, exc: BaseException) -> ToolError:
        """Captures an exception with its traceback, secrets redacted (even one whose ``str()`` raises).

        The traceback shows the user's frames first; the frames of this package, asyncio and the thread pool that
        ran them are listed after (:func:`ai_widgets._traceback.user_first_traceback`).
        """
        try:
            message = str(exc)
        except Exception as broken:
            message = f"(the exception's text could not be read: {type(broken).__name__})"
        try:
            trace: str | None = user_first_traceback(exc)  # the tool author's frames first
        except Exception:
            try:
                trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            except Exception:
                trace = None
        error = cls(
            type=safe_text(type(exc).__qualname__),
            message=redact(safe_text(message)),
            traceback=None if trace is None else redact(safe_text(trace)),
        )
        error._exception = exc
        return error

    @property
    def exception(self) -> BaseException | None:
        """The original exception, while this process holds it (not serialised)."""
        return self._exception


class ToolOutcome(BaseModel):
    """The result of a tool call: a success with a value, or a failure with a message for the model.

    Build one with :meth:`success` or :meth:`failure`.
    """

    model_config = ConfigDict(frozen=True)

    status: Literal["success", "failure"]
    value: Any = None
    text: str | None = None
    citations: tuple[Citation, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    message: str | None = None
    retryable: bool = False
    error: ToolError | None = None

    @classmethod
    def success(
        cls,
        value: Any = None,
        *,
        text: str | None = None,
        citations: tuple[Citation | str | dict[str, Any], ...] | list[Any] = (),
        attachments: tuple[Attachment | dict[str, Any], ...] | list[Any] = (),
    ) -> ToolOutcome:
        """A successful result.

        Args:
            value: What the model receives, as JSON (a pydantic model, dataclass, dict, list, str, number...).
            text: Display text for the card (markdown); the model receives it when ``value`` is ``None``.
            citations: Sources, as :class:`Citation`, URLs or dicts.
            attachments: Files, as :class:`Attachment` or dicts.
        """
        return cls(
            status="success",
            value=_jsonable(value),
            text=text,
            citations=tuple(Citation(url=c) if isinstance(c, str) else Citation.model_validate(c) for c in citations),
            attachments=tuple(Attachment.model_validate(a) for a in attachments),
        )

    @classmethod
    def failure(
        cls, message: str, *, retryable: bool = True, error: BaseException | ToolError | str | None = None
    ) -> ToolOutcome:
        """A failed result.

        Args:
            message: What the model is told, as written.
            retryable: Whether calling again (perhaps with other arguments) may succeed.
            error: The exception or details behind it, for the person.
        """
        match error:
            case BaseException():
                tool_error: ToolError | None = ToolError.from_exception(error)
            case str():
                tool_error = ToolError(type="Error", message=error)
            case _:
                tool_error = error
        return cls(status="failure", message=message, retryable=retryable, error=tool_error)

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.status == "success"

    def model_content(self) -> str:
        """The text the model receives for this result."""
        if self.status == "failure":
            return self.message or "The tool call failed."
        if self.value is None:
            return self.text if self.text is not None else ""
        if isinstance(self.value, str):
            return self.value
        return json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))

    def _repr_html_(self) -> str:
        """One line for a notebook: ``Result: …`` or ``Failed: …``, escaped."""
        from ai_widgets._html import outcome_html

        return outcome_html(self)

    def _ipython_display_(self) -> None:
        """Shows :meth:`_repr_html_`, except as the value of a ``run_tool(...)`` cell, whose card shows it."""
        from ai_widgets._html import display_outcome

        display_outcome(self)


def _jsonable(value: Any) -> Any:
    """A tool's value as JSON-safe data (see :func:`ai_widgets._safe.json_safe`); bytes that are not UTF-8 become
    base64.

    Raises:
        UnsafeValueError: The value cannot be made JSON (a cycle, nesting too deep, an integer too long).
    """
    if value is None or type(value) in (str, int, float, bool):
        return json_safe(value, where="the tool's result")
    try:
        try:
            plain = to_jsonable_python(value, fallback=repr)
        except UnicodeDecodeError:
            plain = to_jsonable_python(value, fallback=repr, bytes_mode="base64")
    except (ValueError, RecursionError) as exc:
        raise UnsafeValueError(f"the tool's result cannot be written as JSON: {exc}") from None
    return json_safe(plain, where="the tool's result")


def safe_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """``outcome`` made safe to keep: JSON- and UTF-8-safe value and texts, secrets redacted from what a person
    sees. An outcome that cannot be made safe becomes a failure saying why.

    Args:
        outcome: Any outcome, from a tool, a transport or a person.
    """
    try:
        update: dict[str, Any] = {}
        value = json_safe(outcome.value, where="the result")
        if value is not outcome.value:
            update["value"] = value
        for name in ("text", "message"):
            original = getattr(outcome, name)
            if original is not None:
                cleaned = safe_text(original)
                if cleaned is not original:
                    update[name] = cleaned
        if outcome.error is not None:
            error = outcome.error
            cleaned_error = ToolError(
                type=safe_text(error.type),
                message=redact(safe_text(error.message)),
                traceback=None if error.traceback is None else redact(safe_text(error.traceback)),
            )
            if cleaned_error != error:
                cleaned_error._exception = error._exception
                update["error"] = cleaned_error
        if outcome.citations or outcome.attachments:
            dumped = json_safe(
                {
                    "citations": [c.model_dump() for c in outcome.citations],
                    "attachments": [a.model_dump() for a in outcome.attachments],
                },
                where="the result's citations",
            )
            update["citations"] = tuple(Citation.model_validate(c) for c in dumped["citations"])
            update["attachments"] = tuple(Attachment.model_validate(a) for a in dumped["attachments"])
        return outcome.model_copy(update=update) if update else outcome
    except (UnsafeValueError, ValueError) as exc:
        return ToolOutcome.failure(
            f"The result could not be kept: {exc}. Nothing of it was sent to the model.",
            retryable=False,
            error=ToolError(type="UnsafeValueError", message=safe_text(str(exc))),
        )


ProgressCallback = Callable[[float | None, str | None], None]


class ToolProgress:
    """Progress reporting for a running call; ``report`` is safe from any thread."""

    __slots__ = ("_callback", "_loop", "_loop_thread", "fraction", "message")

    def __init__(self, callback: ProgressCallback | None = None) -> None:
        self._callback = callback
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            self._loop_thread: int | None = threading.get_ident()
        except RuntimeError:
            self._loop = None
            self._loop_thread = None
        self.fraction: float | None = None
        self.message: str | None = None

    def report(self, fraction: float | None = None, message: str | None = None) -> None:
        """Reports how far the call is.

        Args:
            fraction: Done so far, from 0 to 1; ``None`` when unknown (an indeterminate bar).
            message: A short line about what is happening.

        Raises:
            ValueError: ``fraction`` is not a number from 0 to 1.
        """
        if fraction is not None:
            if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or math.isnan(fraction):
                raise ValueError(f"progress fraction must be a number from 0 to 1, not {fraction!r}")
            if not 0.0 <= fraction <= 1.0:
                raise ValueError(f"progress fraction must be from 0 to 1, not {fraction!r}")
            fraction = float(fraction)
        if message is not None and not isinstance(message, str):
            raise ValueError(f"progress message must be a string, not {type(message).__name__}")
        self.fraction, self.message = fraction, message
        callback = self._callback
        if callback is None:
            return
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(callback, fraction, message)
            return
        callback(fraction, message)


@dataclass
class ToolInvocation:
    """One call of a tool, as its handler sees it.

    Attributes:
        tool_call_id: The provider's id of the call.
        tool_name: The name the model used.
        arguments: The raw JSON text of the arguments the call runs with (the person's edit, when they changed it).
        conversation_id: The session's conversation id.
        message_id: The id of the assistant message the call belongs to.
        progress: Where the handler reports progress; never ``None``.
        context: The application's context object, passed through from the session.
        cancelled: Set when the call is cancelled, stopped or timed out; a sync tool can check it and return early.
        parsed_arguments: The one parse of ``arguments`` that the card showed and the person approved; derived from
            ``arguments`` when not given.
    """

    tool_call_id: str
    tool_name: str
    arguments: str = "{}"
    conversation_id: str | None = None
    message_id: str | None = None
    progress: ToolProgress = field(default_factory=ToolProgress)
    context: Any = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    parsed_arguments: dict[str, Any] | None = None
    # Told the future of a sync call whose thread goes on after the call was given up (a cancel, a stop, a
    # timeout), so the session can say when it returns; set by the session, not part of the handler's view.
    _on_abandoned: Callable[[Future[Any]], None] | None = field(default=None, init=False, repr=False, compare=False)

    def get_arguments(self, type_: type[T]) -> T:
        """Validates the arguments as ``type_`` (a pydantic model, TypedDict, dataclass or ``dict``).

        Raises:
            pydantic.ValidationError: The arguments do not fit ``type_``.
            ValueError: The arguments are not a valid JSON object.
        """
        parsed = parse_arguments(self.arguments) if self.parsed_arguments is None else self.parsed_arguments
        if isinstance(parsed, str):
            raise ValueError(parsed)
        return TypeAdapter(type_).validate_python(parsed)


def parse_arguments(text: str) -> dict[str, Any] | str:
    """The arguments in ``text`` as a dict, or why they are not a valid, complete JSON object.

    The same strict parser that shows a call's arguments while they stream: NaN, Infinity, duplicate keys and
    nesting deeper than the limit are refused, so a text can never be read two ways.
    """
    if not text.strip():
        return {}
    parser = StreamingArguments.parse(text)
    if parser.error is not None:
        return parser.error
    if not parser.complete:
        return "the JSON object is incomplete (it broke off before its closing brace)"
    return parser.value


Handler = Callable[..., Any]


class Tool:
    """A tool: a definition plus the handler that runs a call.

    Build one with ``@tool`` from a function (schema derived), or directly from a :class:`ToolDefinition` and a
    handler for a dynamic schema. A handler given directly is called with the :class:`ToolInvocation` only; it
    reads its arguments with ``invocation.get_arguments(...)``. It may be sync (run off the event loop) or async.

    One tool instance serves every conversation: it keeps no per-call state.
    """

    def __init__(self, definition: ToolDefinition, handler: Handler) -> None:
        if not callable(handler):
            raise TypeError(f"tool {definition.name!r}: handler must be callable")
        self._definition = definition
        self._handler = handler
        self._arguments_model: type[BaseModel] | None = None
        self._invocation_parameter: str | None = None
        self._positional_only: tuple[str, ...] = ()
        self._parameter_names: dict[str, str] = {}
        self._function: Callable[..., Any] | None = None

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        icon: str | None = None,
        risk: ToolRisk | str = ToolRisk.NORMAL,
        requires_approval: bool = False,
        sequential: bool = False,
    ) -> Tool:
        """Builds a tool from a plain function, deriving its schema from the signature (see :func:`tool`)."""
        if isinstance(fn, Tool):
            raise TypeError(f"{fn.name!r} is already a Tool")
        if not callable(fn):
            raise TypeError(f"@tool needs a function, not {type(fn).__name__}")
        tool_name = name if name is not None else getattr(fn, "__name__", None)
        if not tool_name or tool_name == "<lambda>" or not _NAME_PATTERN.match(tool_name):
            raise ValueError(
                f"cannot use {tool_name!r} as a tool name: pass name=... "
                "(a lambda or a callable without a usable __name__ needs one)"
            )
        derived = derive_signature(fn, tool_name=tool_name, invocation_type=ToolInvocation, description=description)
        definition = ToolDefinition(
            name=tool_name,
            description=derived.description,
            parameters=derived.parameters,
            title=title,
            icon=icon,
            risk=ToolRisk(risk),
            requires_approval=requires_approval,
            sequential=sequential,
        )
        instance = cls(definition, fn)
        instance._arguments_model = derived.arguments_model
        instance._invocation_parameter = derived.invocation_parameter
        instance._positional_only = derived.positional_only
        instance._parameter_names = derived.parameter_names
        instance._function = fn
        functools.update_wrapper(instance, fn)
        return instance

    @property
    def definition(self) -> ToolDefinition:
        """What the model and the card are told."""
        return self._definition

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._definition.name

    @property
    def is_sync(self) -> bool:
        """Whether the handler is a plain function (it runs on a thread, which cannot be stopped from outside)."""
        return not inspect.iscoroutinefunction(self._handler)

    @property
    def handler(self) -> Handler:
        """The function that runs a call."""
        return self._handler

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the original function directly, as if it were not a tool (handy while developing it)."""
        if self._function is None:
            return self._handler(*args, **kwargs)
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, risk={self._definition.risk.value!r})"

    def bind(self, arguments: str | Mapping[str, Any]) -> dict[str, Any] | ToolOutcome:
        """Validates arguments; returns the bound keyword arguments, or a failure for the model.

        Args:
            arguments: The raw JSON text the model produced (empty means no arguments), or an already parsed dict
                (the one parse the person saw).
        """
        if isinstance(arguments, str):
            parsed = parse_arguments(arguments)
            if isinstance(parsed, str):
                return ToolOutcome.failure(
                    f"The arguments for {self.name} are not valid JSON ({parsed}). Send a JSON object that matches "
                    "the tool's parameters, each key once.",
                )
        else:
            parsed = dict(arguments)
        if self._arguments_model is None:
            return self._check_schema(parsed)
        try:
            model = self._arguments_model.model_validate(parsed)
        except ValidationError as exc:
            return ToolOutcome.failure(_describe_validation_error(self.name, exc), error=exc)
        return {self._parameter_names.get(name, name): getattr(model, name) for name in type(model).model_fields}

    def _check_schema(self, parsed: dict[str, Any]) -> dict[str, Any] | ToolOutcome:
        """Checks arguments against a definition's own JSON Schema (a tool built from a definition)."""
        import jsonschema  # type: ignore[import-untyped]

        validator_class = jsonschema.validators.validator_for(self._definition.parameters)
        validator = validator_class(self._definition.parameters)
        problems = sorted(validator.iter_errors(parsed), key=lambda e: list(e.absolute_path))
        if not problems:
            return parsed
        described = "; ".join(
            f"{'.'.join(str(p) for p in error.absolute_path) or '(arguments)'}: {error.message[:200]}"
            for error in problems[:5]
        )
        return ToolOutcome.failure(f"Invalid arguments for {self.name}: {described}. Correct them and call again.")

    async def invoke(
        self,
        invocation: ToolInvocation,
        *,
        include_detailed_errors: bool = False,
        executor: Executor | None = None,
    ) -> ToolOutcome:
        """Validates the arguments, runs the handler and turns what it returns or raises into an outcome.

        Invalid arguments give a failure and the handler never runs. A handler that raises gives a failed,
        retryable outcome that keeps the exception and traceback (secrets redacted); the model is told the
        exception's text only when ``include_detailed_errors`` is on. A value that cannot be written as JSON fails
        the call, saying why.

        Args:
            invocation: The call; its ``parsed_arguments`` (when set) are what is validated and run.
            include_detailed_errors: Whether the model may see the exception's type and text.
            executor: Where a sync handler runs; the library's own threads by default.
        """
        arguments = invocation.arguments if invocation.parsed_arguments is None else invocation.parsed_arguments
        bound = self.bind(arguments)
        if isinstance(bound, ToolOutcome):
            return bound
        try:
            result = await self._run(bound, invocation, executor)
        except Exception as exc:
            if include_detailed_errors:
                error = ToolError.from_exception(exc)
                message = f"The tool {self.name} failed: {error.type}: {error.message}"
            else:
                message = f"The tool {self.name} failed with an internal error."
            return ToolOutcome.failure(message, retryable=True, error=exc)
        if isinstance(result, ToolOutcome):
            return result
        try:
            return ToolOutcome.success(result)
        except UnsafeValueError as exc:
            return ToolOutcome.failure(
                f"The tool {self.name} returned a value that cannot be sent to the model: {exc}.",
                retryable=False,
                error=exc,
            )

    async def _run(self, bound: dict[str, Any], invocation: ToolInvocation, executor: Executor | None) -> Any:
        if self._function is None:
            args: tuple[Any, ...] = (invocation,)
            kwargs: dict[str, Any] = {}
        else:
            args = tuple(bound.pop(name) for name in self._positional_only)
            kwargs = bound
            if self._invocation_parameter is not None:
                kwargs[self._invocation_parameter] = invocation
        handler = self._handler
        if inspect.iscoroutinefunction(handler):
            return await handler(*args, **kwargs)
        loop = asyncio.get_running_loop()
        if executor is not None and not isinstance(executor, ToolThreads):
            # Another executor (a process pool, a cluster): the call travels pickled, without context variables.
            # The invocation (its progress is bound to this event loop, ``cancelled`` is a threading.Event) cannot
            # travel, so the handler gets a stand-in built where it runs. On a Dask executor the stand-in's progress
            # comes back as Dask events and drives this invocation's (see ai_widgets._remote_progress), and its
            # ``cancelled`` follows the Dask task's; other executors have no way back, and the card says so.
            where = type(executor).__name__
            takes_invocation = self._function is None or self._invocation_parameter is not None
            remote: RemoteRegistration | None = None
            if takes_invocation:
                fields = {
                    "tool_call_id": invocation.tool_call_id,
                    "tool_name": invocation.tool_name,
                    "arguments": invocation.arguments,
                    "conversation_id": invocation.conversation_id,
                    "message_id": invocation.message_id,
                    "parsed_arguments": invocation.parsed_arguments,
                }
                if self._function is None:
                    args = ()
                else:
                    kwargs.pop(self._invocation_parameter or "", None)
                remote = register_remote_call(executor, invocation.progress.report)
                if remote is None:
                    invocation.progress.report(
                        None, f"running on {where}: its progress cannot come back to this card (only Dask's can)"
                    )
                else:
                    invocation.progress.report(None, f"sent to the Dask cluster ({where})")
                target: Callable[..., Any] = functools.partial(
                    _call_detached, handler, fields, self._invocation_parameter, None if remote is None else remote.call
                )
            else:
                target = handler
            try:
                try:
                    future = executor.submit(target, *args, **kwargs)
                except Exception as exc:
                    raise RuntimeError(
                        f"could not send the call of {self.name} to the executor {where}: {safe_text(str(exc))} "
                        "(the handler and its arguments must be picklable)"
                    ) from exc
                try:
                    # A cancel here (a cancel, a stop, a timeout) cancels ``future``, and with it the Dask task.
                    result = await asyncio.wrap_future(future, loop=loop)
                except (pickle.PicklingError, TypeError, AttributeError) as exc:
                    if not isinstance(exc, pickle.PicklingError) and "pickl" not in str(exc):
                        raise
                    raise RuntimeError(
                        f"could not send the call of {self.name} to the executor {where}: {safe_text(str(exc))} "
                        "(the handler and its arguments must be picklable)"
                    ) from exc
                except BaseException:
                    # Given up (a cancel, a stop, a timeout): a call the executor cannot cancel any more (a thread
                    # pool's started call) runs on; its card says so until it returns.
                    if not future.done() and not future.cancel() and invocation._on_abandoned is not None:
                        invocation._on_abandoned(future)
                    raise
            finally:
                # Every report the worker sent before the call returned has been handed on by now (Dask delivers
                # them ahead of the result); later ones are for a call that has ended.
                if remote is not None:
                    remote.close()
        else:
            threads = executor if isinstance(executor, ToolThreads) else default_tool_threads()
            # With the caller's context variables, as a direct call would see them.
            context = contextvars.copy_context()
            future = threads.submit(
                context.run, handler, *args, __label__=f"{self.name} ({invocation.tool_call_id})", **kwargs
            )
            try:
                result = await asyncio.wrap_future(future, loop=loop)
            except BaseException:
                if not future.done():
                    threads.abandon(future)
                    if invocation._on_abandoned is not None:
                        invocation._on_abandoned(future)
                raise
        if inspect.isawaitable(result):
            return await result
        return result


class _DetachedProgress(ToolProgress):
    """The progress of a call running where an executor sent it: sent back to the card through ``sender`` (on a
    Dask worker), or else kept there and not shown on the card (logged once)."""

    __slots__ = ("_logged", "_sender")

    def __init__(self, sender: ProgressSender | None = None) -> None:
        super().__init__()
        self._sender = sender
        self._logged = False

    def report(self, fraction: float | None = None, message: str | None = None) -> None:
        super().report(fraction, message)
        if self._sender is not None:
            self._sender.send(self.fraction, self.message)
            return
        if not self._logged:
            self._logged = True
            logging.getLogger(__name__).info(
                "progress reported by a tool running on another executor is not shown on its card"
            )


def _call_detached(
    handler: Handler,
    fields: dict[str, Any],
    invocation_parameter: str | None,
    remote: RemoteCall | None,
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """Runs where the executor sends it: builds the call's invocation there and calls the handler with it.

    ``context`` is ``None`` (it stays in the kernel). On a Dask worker (``remote`` given) ``progress`` goes back to
    the card and ``cancelled`` is set once the kernel has cancelled the call; elsewhere ``progress`` is not shown
    and ``cancelled`` is never set (nothing crosses back over the process boundary).
    """
    link = None if remote is None else remote.attach()
    if link is None:
        invocation = ToolInvocation(**fields, progress=_DetachedProgress())
    else:
        invocation = ToolInvocation(**fields, progress=_DetachedProgress(link.sender), cancelled=link.cancelled)
    try:
        if invocation_parameter is None:
            return handler(invocation, *args, **kwargs)
        return handler(*args, **kwargs, **{invocation_parameter: invocation})
    finally:
        if link is not None:
            link.close()


def _describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        detail = error["msg"]
        if error["type"] != "missing":
            detail += f" (got {json.dumps(error.get('input'), default=repr, ensure_ascii=False)[:80]})"
        problems.append(f"{location}: {detail}")
    return f"Invalid arguments for {tool_name}: " + "; ".join(problems) + ". Correct them and call again."


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    icon: str | None = None,
    risk: ToolRisk | str = ToolRisk.NORMAL,
    requires_approval: bool = False,
    sequential: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    icon: str | None = None,
    risk: ToolRisk | str = ToolRisk.NORMAL,
    requires_approval: bool = False,
    sequential: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Makes a tool from a function (sync or async), bare (``@tool``) or with options (``@tool(...)``).

    The schema comes from the signature: ``Annotated[..., Field(description=...)]`` and the docstring's
    ``Args:`` section give descriptions; a parameter with a default is optional, one without is required (also
    when its type is ``Optional``). A parameter annotated :class:`ToolInvocation` receives the call and is not
    part of the schema.

    Args:
        fn: The function (when used bare).
        name: The tool's name; the function's name by default.
        description: What it does; the docstring's summary by default.
        title: A human title for the card.
        icon: An icon for the card.
        risk: ``read_only``, ``normal`` or ``destructive`` (destructive tools ask for approval by default).
        requires_approval: Ask a person before every call.
        sequential: Run calls of this tool alone rather than concurrently with other calls.

    Returns:
        The :class:`Tool` (still callable like the function), or a decorator that makes one.
    """
    options = {
        "name": name,
        "description": description,
        "title": title,
        "icon": icon,
        "risk": risk,
        "requires_approval": requires_approval,
        "sequential": sequential,
    }

    def decorate(function: Callable[..., Any]) -> Tool:
        return Tool.from_function(function, **options)  # type: ignore[arg-type]

    if fn is not None:
        return decorate(fn)
    return decorate


RegistryListener = Callable[["ToolRegistry"], None]


@runtime_checkable
class ToolSource(Protocol):
    """A source of tools that may change, such as an MCP server (:class:`ai_widgets.mcp.MCPServer`).

    Added to a registry with :meth:`ToolRegistry.add` (or in ``tools=[...]``), it is asked for its tools before
    every request (:meth:`ToolRegistry.refresh`); it keeps its own cache, so asking is cheap when nothing changed.
    """

    async def list_tools(self) -> Sequence[Tool]:
        """The source's tools as they are now.

        Raises:
            Exception: They cannot be listed (say which source, and why: the turn shows it as its error).
        """
        ...


class ToolRegistry:
    """The tools a session can call: a case-insensitive map from name to tool.

    It may change while a session runs (re-running the cell that defines a tool replaces it); the session reads
    it on every request. Sources of tools (:class:`ToolSource`, such as an MCP server) are asked for their tools
    before every request (:meth:`refresh`); between two refreshes the registry holds what they last listed.
    """

    def __init__(self, tools: ToolRegistry | Iterable[Tool | Callable[..., Any] | ToolSource] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self._listeners: list[RegistryListener] = []
        self._sources: list[ToolSource] = []
        # The sources' tools as the last refresh listed them: name (casefolded) -> (tool, its source).
        self._listed: dict[str, tuple[Tool, ToolSource]] = {}
        if isinstance(tools, ToolRegistry):
            tools = [*tools._tools.values(), *tools._sources]
        for item in tools or ():
            self.add(item)

    def add(self, item: Tool | Callable[..., Any] | ToolSource, /) -> Tool | ToolSource:
        """Adds a tool, a function (made a tool with default options) or a source of tools (an MCP server).

        A source's tools are listed before every request (:meth:`refresh`), so they follow the source's changes.

        Returns:
            The registered tool, or the source.
        """
        if isinstance(item, ToolSource) and not isinstance(item, Tool):
            if not any(source is item for source in self._sources):
                self._sources.append(item)
                self._changed()
            return item
        return self.register(item)

    def remove(self, source: ToolSource, /) -> None:
        """Removes a source of tools (its tools go with it).

        Raises:
            KeyError: The source was not added.
        """
        if not any(s is source for s in self._sources):
            raise KeyError(f"{source!r} is not a source of this registry")
        self._sources = [s for s in self._sources if s is not source]
        self._listed = {key: entry for key, entry in self._listed.items() if entry[1] is not source}
        self._changed()

    @property
    def sources(self) -> list[ToolSource]:
        """The sources of tools added (MCP servers), in order."""
        return list(self._sources)

    async def refresh(self) -> None:
        """Asks every source for its tools again; the session calls it before each request.

        A source caches its listing, so this is cheap when nothing changed. Listeners are told when the tools
        changed.

        Raises:
            Exception: A source could not list its tools (its error says which and why).
            ValueError: Two tools would have one name (give a source a prefix).
        """
        sources = list(self._sources)
        if not sources and not self._listed:
            return
        listings = await asyncio.gather(*(source.list_tools() for source in sources), return_exceptions=True)
        for listing in listings:
            if isinstance(listing, BaseException):
                raise listing
        listed: dict[str, tuple[Tool, ToolSource]] = {}
        for source, tools in zip(sources, listings, strict=True):
            assert not isinstance(tools, BaseException)
            for item in tools:
                key = item.name.casefold()
                if key in self._tools:
                    raise ValueError(
                        f"the tool {item.name!r} of {source!r} has the name of a registered tool: "
                        "give the source a prefix, or rename the registered tool"
                    )
                if key in listed:
                    raise ValueError(
                        f"the tool name {item.name!r} is offered by both {listed[key][1]!r} and {source!r}: "
                        "give one of them a prefix"
                    )
                listed[key] = (item, source)
        before = [entry[0].definition for entry in self._listed.values()]
        self._listed = listed
        if [entry[0].definition for entry in listed.values()] != before:
            self._changed()

    def register(self, item: Tool | Callable[..., Any], /) -> Tool:
        """Adds a tool (or a function, made a tool with default options), replacing one of the same name.

        Returns:
            The registered tool.
        """
        registered = item if isinstance(item, Tool) else Tool.from_function(item)
        self._tools[registered.name.casefold()] = registered
        self._changed()
        return registered

    @overload
    def tool(self, fn: Callable[..., Any], /) -> Tool: ...

    @overload
    def tool(self, fn: None = None, /, **options: Any) -> Callable[[Callable[..., Any]], Tool]: ...

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Tool | Callable[..., Tool]:
        """Like :func:`tool`, and registers the tool here as it is defined."""
        if fn is not None:
            return self.register(tool(fn, **options))

        def decorate(function: Callable[..., Any]) -> Tool:
            return self.register(tool(function, **options))

        return decorate

    def unregister(self, name: str, /) -> Tool:
        """Removes a tool by name (any case).

        Raises:
            KeyError: No tool has that name.
        """
        try:
            removed = self._tools.pop(name.casefold())
        except KeyError:
            raise KeyError(
                f"no tool named {name!r} is registered (have: {', '.join(self.names()) or 'none'})"
            ) from None
        self._changed()
        return removed

    def get(self, name: str, /) -> Tool | None:
        """The tool with this name in any case, or ``None``."""
        key = name.casefold()
        found = self._tools.get(key)
        if found is None and key in self._listed:
            return self._listed[key][0]
        return found

    def __getitem__(self, name: str) -> Tool:
        found = self.get(name)
        if found is None:
            raise KeyError(f"no tool named {name!r} is registered (have: {', '.join(self.names()) or 'none'})")
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name.casefold() in self._tools or name.casefold() in self._listed)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._tools) + len(self._listed)

    def _all(self) -> list[Tool]:
        """The registered tools in registration order, then the sources' tools as last listed."""
        return [*self._tools.values(), *(entry[0] for entry in self._listed.values())]

    def names(self) -> list[str]:
        """The tools' names, as registered (the sources' tools as last listed come after)."""
        return [t.name for t in self._all()]

    def definitions(self) -> list[ToolDefinition]:
        """The definitions of every tool, in registration order (the sources' tools as last listed come after)."""
        return [t.definition for t in self._all()]

    def subscribe(self, listener: RegistryListener) -> Callable[[], None]:
        """Calls ``listener(registry)`` after every change; returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener(self)

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"

    def _repr_html_(self) -> str:
        """The tools as a notebook shows a registry: icon, name, title, risk, whether a call asks for approval,
        description, and the parameters as a tree (:func:`ai_widgets._html.registry_html`)."""
        from ai_widgets._html import registry_html

        return registry_html(self.definitions())
