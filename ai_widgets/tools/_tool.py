"""``Tool`` (a definition plus the handler that answers a call) and ``@tool``, which builds one from a function."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, overload

from pydantic import BaseModel, ValidationError

from ai_widgets._rich import is_rich
from ai_widgets._safe import UnsafeValueError
from ai_widgets._schema import UnusableSchemaError, argument_problems, derive_signature
from ai_widgets._threads import ToolThreads, default_tool_threads
from ai_widgets.outcome import ToolError, ToolOutcome
from ai_widgets.tools._checks import ToolWarning, check_tool
from ai_widgets.tools._definition import NAME_PATTERN, ToolDefinition, ToolRisk
from ai_widgets.tools._detached import DetachedCall, run_detached
from ai_widgets.tools._display import tool_html, tool_markdown
from ai_widgets.tools._invocation import Handler, ToolInvocation, parse_arguments
from ai_widgets.tools._live import ToolPlace, announce, place_of
from ai_widgets.tools._problems import ArgumentProblems, InvalidArguments

__all__ = ["Tool", "bind_arguments", "tool"]


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
        # Where the function is defined, across re-runs of its cell (see ai_widgets.tools._live); None: no place.
        self._place: ToolPlace | None = None

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
        if not tool_name or tool_name == "<lambda>" or not NAME_PATTERN.match(tool_name):
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
        instance._place = place_of(fn)
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
        return not runs_on_loop(self._handler)

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

    def check(self) -> list[ToolWarning]:
        """Where a provider would refuse this tool's definition, or take it and do worse with it.

        Checks what the transports really send: names each provider refuses, schemas OpenAI refuses (and, where
        strict mode is used, what it refuses), recursion and keywords Gemini cannot take, schemas that are not valid
        JSON Schema for Anthropic, missing descriptions, parameters the model can never fill, values that are not
        JSON (:mod:`ai_widgets.tools._checks` lists the rules and their sources).

        Returns:
            The warnings; ``[]`` for a clean tool.
        """
        return check_tool(self)

    def _repr_html_(self) -> str:
        """The definition as each provider receives it, with its size, risk, approval and warnings."""
        return tool_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """HTML for notebooks, markdown for front ends without HTML, and the repr."""
        return {"text/plain": repr(self), "text/html": tool_html(self), "text/markdown": tool_markdown(self)}

    def bind(self, arguments: str | Mapping[str, Any]) -> dict[str, Any] | ToolOutcome:
        """Validates arguments; returns the bound keyword arguments, or a failure for the model.

        Args:
            arguments: The raw JSON text the model produced (empty means no arguments), or an already parsed dict
                (the one parse the person saw).
        """
        bound = bind_arguments(self, arguments)
        return bound.outcome if isinstance(bound, InvalidArguments) else bound

    def _check_schema(self, parsed: dict[str, Any]) -> dict[str, Any] | InvalidArguments:
        """Checks arguments against a definition's own JSON Schema (a tool built from a definition).

        A schema that cannot be evaluated fails this call (saying so), never the turn or the other calls.
        """
        try:
            found = argument_problems(self._definition.parameters, parsed)
        except UnusableSchemaError as exc:
            return InvalidArguments(
                ToolOutcome.failure(
                    f"The tool {self.name} cannot be called: its parameters schema cannot be used to check arguments "
                    f"({exc}). Nothing was run; calling it again will not help.",
                    retryable=False,
                    error=exc,
                )
            )
        if not found:
            return parsed
        problems = ArgumentProblems.from_schema_errors(found)
        return InvalidArguments(ToolOutcome.failure(problems.message(self.name)), problems)

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
            result = await self._run(bound, invocation, executor, include_detailed_errors=include_detailed_errors)
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

    async def _run(
        self,
        bound: dict[str, Any],
        invocation: ToolInvocation,
        executor: Executor | None,
        *,
        include_detailed_errors: bool,
    ) -> Any:
        if self._function is None:
            args: tuple[Any, ...] = (invocation,)
            kwargs: dict[str, Any] = {}
        else:
            args = tuple(bound.pop(name) for name in self._positional_only)
            kwargs = bound
            if self._invocation_parameter is not None:
                kwargs[self._invocation_parameter] = invocation
        handler = self._handler
        if is_async_generator(handler):
            # An async generator function: what it yields is the value, a list (as a generator's is).
            return [item async for item in handler(*args, **kwargs)]
        if runs_on_loop(handler):
            return await handler(*args, **kwargs)
        loop = asyncio.get_running_loop()
        if executor is not None and not isinstance(executor, ToolThreads):
            # Another executor (a process pool, a cluster): the call travels pickled, without context variables.
            # The invocation (its progress is bound to this event loop, ``cancelled`` is a threading.Event) cannot
            # travel, so the handler gets a stand-in built where it runs. On a Dask executor the stand-in's progress
            # comes back as Dask events and drives this invocation's (see ai_widgets._remote_progress), and its
            # ``cancelled`` follows the Dask task's; other executors have no way back, and the card says so.
            # What comes back is read apart from the executor's own transport, and a call runs at most once there
            # (see ai_widgets.tools._detached).
            fields: dict[str, Any] | None = None
            if self._function is None or self._invocation_parameter is not None:
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
            call = DetachedCall(self.name, handler, args, kwargs, fields, self._invocation_parameter)
            result = await run_detached(executor, call, invocation, include_detailed_errors=include_detailed_errors)
        else:
            threads = executor if isinstance(executor, ToolThreads) else default_tool_threads()
            # With the caller's context variables, as a direct call would see them.
            context = contextvars.copy_context()
            future = threads.submit(
                context.run,
                shown_on_its_thread(handler),
                *args,
                __label__=f"{self.name} ({invocation.tool_call_id})",
                **kwargs,
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


def shown_on_its_thread(handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler``, whose rich result (a figure, a frame) becomes its outcome on the tool's own thread: drawing a
    figure's PNG takes a while, which the event loop (the kernel's, in a notebook) should not wait for."""

    def call(*args: Any, **kwargs: Any) -> Any:
        result = handler(*args, **kwargs)
        return ToolOutcome.success(result) if is_rich(result) and not isinstance(result, ToolOutcome) else result

    return call


def is_async_generator(handler: Any) -> bool:
    """Whether calling ``handler`` gives an async generator (a function, a ``functools.partial`` of one, or an object
    whose ``__call__`` is one)."""
    if inspect.isasyncgenfunction(handler):
        return True
    call = getattr(type(handler), "__call__", None)  # noqa: B004 (the method, not whether it exists)
    return not inspect.isroutine(handler) and inspect.isasyncgenfunction(call)


def runs_on_loop(handler: Any) -> bool:
    """Whether ``handler`` is async (run on the event loop, not on a thread): a coroutine function, an async generator
    function, a ``functools.partial`` of one, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(handler) or is_async_generator(handler):
        return True
    call = getattr(type(handler), "__call__", None)  # noqa: B004 (the method, not whether it exists)
    return (
        not inspect.isroutine(handler)
        and not isinstance(handler, functools.partial)
        and (inspect.iscoroutinefunction(call))
    )


def bind_arguments(tool: Tool, arguments: str | Mapping[str, Any]) -> dict[str, Any] | InvalidArguments:
    """What :meth:`Tool.bind` does, with the problems it found: the bound keyword arguments, or what is wrong (the
    failure the model is told, and the problems it is worded from, for a form to show at its fields).

    Args:
        tool: The tool.
        arguments: The raw JSON text the model produced (empty means no arguments), or an already parsed dict.
    """
    if isinstance(arguments, str):
        parsed = parse_arguments(arguments)
        if isinstance(parsed, str):
            return InvalidArguments(
                ToolOutcome.failure(
                    f"The arguments for {tool.name} are not valid JSON ({parsed}). Send a JSON object that matches "
                    "the tool's parameters, each key once.",
                )
            )
    else:
        parsed = dict(arguments)
    model_class = tool._arguments_model
    if model_class is None:
        return tool._check_schema(parsed)
    try:
        model = model_class.model_validate(parsed)
    except ValidationError as exc:
        problems = ArgumentProblems.from_validation_error(exc)
        return InvalidArguments(ToolOutcome.failure(problems.message(tool.name), error=exc), problems)
    return {tool._parameter_names.get(name, name): getattr(model, name) for name in type(model).model_fields}


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
        made = Tool.from_function(function, **options)  # type: ignore[arg-type]
        announce(made)  # its cell run again: the chats holding the tool it defined before get this one
        return made

    if fn is not None:
        return decorate(fn)
    return decorate
