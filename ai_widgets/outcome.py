"""What a call gives back: its outcome (value or failure, with citations, attachments and what it shows), made safe
to keep, and the one line a notebook shows for it."""

from __future__ import annotations

import json
import traceback
import weakref
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr
from pydantic_core import to_jsonable_python

from ai_widgets._html import clipped, escaped, json_text
from ai_widgets._media import IMAGE_TYPES
from ai_widgets._rich import WIDGET_VIEW_TYPE, display_form, is_rich
from ai_widgets._safe import UnsafeValueError, check_size, checked_json, redact, safe_text
from ai_widgets._traceback import user_first_traceback

__all__ = [
    "MAX_CELL_IMAGES",
    "Attachment",
    "CellOutput",
    "CellRun",
    "Citation",
    "DisplayBundle",
    "ToolError",
    "ToolOutcome",
    "display_outcome",
    "mark_shown_by_card",
    "outcome_html",
    "outcome_summary",
    "safe_outcome",
]


class Citation(BaseModel):
    """A source a tool's result is based on."""

    model_config = ConfigDict(frozen=True)

    url: str
    title: str | None = None
    snippet: str | None = None


class Attachment(BaseModel):
    """A file that comes with a result: inline base64 ``data`` or a ``url``, with its MIME type. ``card_only``: shown
    in the card, never sent to the model (an MCP server's content for the user alone)."""

    model_config = ConfigDict(frozen=True)

    mime_type: str
    data: str | None = None
    url: str | None = None
    name: str | None = None
    card_only: bool = False

    def model_post_init(self, context: Any, /) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("an attachment needs exactly one of data (base64) or url")


class DisplayBundle(BaseModel):
    """What a tool's result shows, as a notebook shows it: its mime bundle (``data``: mime type to text, base64 for
    images, JSON for JSON types; always with ``text/plain``), the bundle's ``metadata``, and ``text``, what the
    model reads of it (a frame's bounded text view, else its ``text/plain``). JSON, so it is kept in the history.

    Build one with :meth:`of`.
    """

    model_config = ConfigDict(frozen=True)

    data: dict[str, Any]
    metadata: dict[str, Any] = {}
    text: str = ""

    @classmethod
    def of(cls, value: Any) -> DisplayBundle:
        """What ``value`` shows: a matplotlib figure or PIL image as PNG, a pandas or polars frame as its HTML table
        (and its bounded text view for the model), anything else by its rich repr (``_repr_mimebundle_``,
        ``_repr_png_``, ``_repr_html_``...: an ``IPython.display`` object, a plotly or altair chart, an ipywidget).
        A dict of mime types (``{"text/html": ..., "text/plain": ...}``) is taken as a bundle.

        Never raises: what cannot be kept (a repr that raises, a broken image, more than
        :data:`ai_widgets._rich.MAX_DISPLAY_CHARS` characters) is left out, and the text says so.
        """
        if isinstance(value, DisplayBundle):
            return value
        if isinstance(value, dict) and value and all(isinstance(k, str) and "/" in k for k in value):
            value = _Bundle(value)
        form = display_form(value)
        return cls(data=form.data, metadata=form.metadata, text=form.text)

    def image(self) -> tuple[str, str] | None:
        """The bundle's image a model can take, as (media type, base64 data): PNG first, then JPEG, GIF, WebP."""
        for mime in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            data = self.data.get(mime)
            if isinstance(data, str) and mime in IMAGE_TYPES:
                return mime, data
        return None

    @property
    def widget_model_id(self) -> str | None:
        """The model id of the ipywidget this shows, if it is one (the card shows it live where it can)."""
        view = self.data.get(WIDGET_VIEW_TYPE)
        model_id = view.get("model_id") if isinstance(view, dict) else None
        return model_id if isinstance(model_id, str) else None


class _Bundle:
    """A mime bundle given as a dict, shown as an object with that bundle would be."""

    def __init__(self, bundle: dict[str, Any]) -> None:
        self._bundle = bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self._bundle

    def __repr__(self) -> str:
        text = self._bundle.get("text/plain")
        return text if isinstance(text, str) else "(a display bundle)"


#: The most images (figures) of one cell run that the model receives; the card shows all of them.
MAX_CELL_IMAGES = 4


class CellOutput(BaseModel):
    """One output of code run as a notebook cell, as the notebook shows it.

    Attributes:
        kind: ``stream`` (printed text), ``display`` (a ``display(...)`` output or a figure), ``result`` (the value
            of the last expression) or ``error`` (the exception that ended the run, with its traceback as ``text``).
        name: A stream's name, ``stdout`` or ``stderr``.
        text: A stream's or an error's text.
        display: A display's or a result's mime bundle.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["stream", "display", "result", "error"]
    name: Literal["stdout", "stderr"] | None = None
    text: str = ""
    display: DisplayBundle | None = None


class CellRun(BaseModel):
    """Code a tool ran as a notebook cell (``KernelTools.run_python``): what ran, what it showed, what it changed.

    The card shows it as a notebook shows a cell; the model reads the outcome's bounded text and, of the outputs,
    the first :data:`MAX_CELL_IMAGES` images (:meth:`images`). JSON, so it is kept in the history.

    Attributes:
        code: The code as it ran (the person's edit, where they edited it).
        language: The code's language, for its colours.
        edited: Whether the person edited the code before allowing it.
        outputs: What it showed, in order.
        created: Names the run bound that did not exist before.
        rebound: Names it bound to another object.
        deleted: Names it removed.
        mutated: Names whose value it changed in place (where that can be seen cheaply); these cannot be undone.
        stopped_at: Where it was stopped (``line 3 of the code``), when it was stopped before it ended.
    """

    model_config = ConfigDict(frozen=True)

    code: str
    language: str = "python"
    edited: bool = False
    outputs: tuple[CellOutput, ...] = ()
    created: tuple[str, ...] = ()
    rebound: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    mutated: tuple[str, ...] = ()
    stopped_at: str | None = None

    def images(self, limit: int = MAX_CELL_IMAGES) -> list[tuple[str, str]]:
        """The images of the outputs, in order, as (media type, base64 data): the first ``limit``."""
        found: list[tuple[str, str]] = []
        for output in self.outputs:
            image = output.display.image() if output.display is not None else None
            if image is not None:
                found.append(image)
                if len(found) >= limit:
                    break
        return found


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

    Build one with :meth:`success` or :meth:`failure`. A tool that returns an object with a rich repr (a figure, a
    frame, an ``IPython.display`` object, an ipywidget) gets a success whose :attr:`display` shows it.
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
    display: DisplayBundle | None = None
    cell: CellRun | None = None

    @classmethod
    def success(
        cls,
        value: Any = None,
        *,
        text: str | None = None,
        citations: tuple[Citation | str | dict[str, Any], ...] | list[Any] = (),
        attachments: tuple[Attachment | dict[str, Any], ...] | list[Any] = (),
        display: Any = None,
        cell: CellRun | None = None,
    ) -> ToolOutcome:
        """A successful result.

        Args:
            value: What the model receives, as JSON (a pydantic model, dataclass, dict, list, str, number...). An
                object with a rich repr (a figure, a frame, an ``IPython.display`` object, an ipywidget) is shown
                instead, as ``display`` would be.
            text: Display text for the card (markdown); the model receives it when ``value`` is ``None``.
            citations: Sources, as :class:`Citation`, URLs or dicts.
            attachments: Files, as :class:`Attachment` or dicts.
            display: What the card shows, as a notebook would (:meth:`DisplayBundle.of`); the model also receives
                its text form and its image (PNG, JPEG, GIF or WebP), where it has one.
            cell: The code the call ran as a notebook cell, with its outputs and changes (the card shows it).
        """
        if display is None and is_rich(value) and not isinstance(value, ToolOutcome):
            value, display = None, value
        return cls(
            status="success",
            value=_jsonable(value),
            text=text,
            citations=tuple(Citation(url=c) if isinstance(c, str) else Citation.model_validate(c) for c in citations),
            attachments=tuple(Attachment.model_validate(a) for a in attachments),
            display=None if display is None else DisplayBundle.of(display),
            cell=cell,
        )

    @classmethod
    def failure(
        cls,
        message: str,
        *,
        retryable: bool = True,
        error: BaseException | ToolError | str | None = None,
        cell: CellRun | None = None,
    ) -> ToolOutcome:
        """A failed result.

        Args:
            message: What the model is told, as written.
            retryable: Whether calling again (perhaps with other arguments) may succeed.
            error: The exception or details behind it, for the person.
            cell: The code the call ran as a notebook cell, with what it showed before it failed.
        """
        match error:
            case BaseException():
                tool_error: ToolError | None = ToolError.from_exception(error)
            case str():
                tool_error = ToolError(type="Error", message=error)
            case _:
                tool_error = error
        return cls(status="failure", message=message, retryable=retryable, error=tool_error, cell=cell)

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.status == "success"

    def model_content(self) -> str:
        """The text the model receives for this result."""
        if self.status == "failure":
            return self.message or "The tool call failed."
        if self.value is None:
            told = self.text if self.text is not None else ""
        elif isinstance(self.value, str):
            told = self.value
        else:
            told = json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))
        if self.display is None or not self.display.text:
            return told
        return f"{told}\n\n{self.display.text}" if told else self.display.text

    def _repr_html_(self) -> str:
        """One line for a notebook: ``Result: …`` or ``Failed: …``, escaped."""
        return outcome_html(self)

    def _ipython_display_(self) -> None:
        """Shows :meth:`_repr_html_`, except as the value of a ``run_tool(...)`` cell, whose card shows it."""
        display_outcome(self)


def _jsonable(value: Any) -> Any:
    """A tool's value as JSON-safe data (see :func:`ai_widgets._safe.checked_json`); bytes that are not UTF-8 become
    base64.

    Raises:
        UnsafeValueError: The value cannot be made JSON (a cycle, nesting too deep, an integer too long).
    """
    if value is None or type(value) in (str, int, float, bool):
        return checked_json(value, where="the tool's result")
    check_size(value, where="the tool's result")
    try:
        try:
            plain = to_jsonable_python(value, fallback=repr)
        except UnicodeDecodeError:
            plain = to_jsonable_python(value, fallback=repr, bytes_mode="base64")
        except UnicodeEncodeError:
            # A key with a lone surrogate (``os.listdir`` gives them for file names that are not UTF-8), which
            # pydantic-core refuses to write; strings elsewhere become U+FFFD below.
            plain = to_jsonable_python(_keys_made_safe(value), fallback=repr, bytes_mode="base64")
    except (ValueError, RecursionError) as exc:
        raise UnsafeValueError(f"the tool's result cannot be written as JSON: {exc}") from None
    return checked_json(plain, where="the tool's result")


def _keys_made_safe(value: Any) -> Any:
    """A copy of ``value``'s dicts, lists and tuples with lone surrogates in string keys replaced by U+FFFD; other
    objects are kept as they are. Iterative; a container met again is its one copy again, so a shared value is
    copied once and a cycle stays a cycle (which the conversion after reports)."""
    if not isinstance(value, (dict, list, tuple)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    copies = {id(value): root}
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        is_dict = isinstance(source, dict)
        for key, item in source.items() if is_dict else enumerate(source):
            child = item
            if isinstance(item, (dict, list, tuple)):
                child = copies.get(id(item))
                if child is None:
                    child = copies[id(item)] = {} if isinstance(item, dict) else []
                    stack.append((item, child))
            if is_dict:
                target[safe_text(key) if isinstance(key, str) else key] = child
            else:
                target.append(child)
    return root


def safe_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """``outcome`` made safe to keep: JSON- and UTF-8-safe value and texts, secrets redacted from what a person
    sees. An outcome that cannot be made safe becomes a failure saying why.

    Args:
        outcome: Any outcome, from a tool, a transport or a person.
    """
    try:
        update: dict[str, Any] = {}
        value = checked_json(outcome.value, where="the result")
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
        if outcome.display is not None:
            shown = checked_json(outcome.display.model_dump(), where="the result's display")
            update["display"] = DisplayBundle(
                data=shown["data"], metadata=shown["metadata"], text=safe_text(shown["text"])
            )
        if outcome.cell is not None:
            update["cell"] = CellRun.model_validate(checked_json(outcome.cell.model_dump(), where="the run's cell"))
        if outcome.citations or outcome.attachments:
            dumped = checked_json(
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


# --- what a notebook shows ------------------------------------------------------------------------------------------

_MAX_SHOWN = 300  # characters of an outcome's value shown in its one line


def outcome_summary(outcome: ToolOutcome) -> tuple[str, str]:
    """A label (``Result``, ``Failed``) and one line of plain text for an outcome."""
    if outcome.status == "failure":
        error = outcome.error
        detail = f"{error.type}: {error.message}" if error is not None else (outcome.message or "failed")
        return "Failed", clipped(" ".join(detail.split()), _MAX_SHOWN)
    if outcome.value is not None:
        shown = outcome.value if isinstance(outcome.value, str) else json_text(outcome.value)
    elif outcome.text:
        shown = outcome.text
    else:
        shown = outcome.display.text if outcome.display is not None else ""
    return "Result", clipped(" ".join(shown.split()), _MAX_SHOWN)


def outcome_html(outcome: ToolOutcome) -> str:
    """An outcome in one line: ``Result: …`` or ``Failed: …``, escaped."""
    label, text = outcome_summary(outcome)
    colour = "var(--jp-error-color1, #d32f2f)" if label == "Failed" else "inherit"
    return (
        f'<div class="aiw-outcome"><strong style="color: {colour}">{label}</strong>'
        f'<span style="white-space: pre-wrap">: {escaped(text)}</span></div>'
    )


# The outcome a run_tool card shows in the cell running now, and that cell's number.
_card_shown: tuple[weakref.ref[ToolOutcome], int] | None = None


def _execution_count() -> int | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def mark_shown_by_card(outcome: ToolOutcome) -> None:
    """Records that the cell running now shows ``outcome`` in a card (``run_tool``), so the cell's value does not
    show it a second time under the card."""
    global _card_shown
    count = _execution_count()
    _card_shown = None if count is None else (weakref.ref(outcome), count)


def display_outcome(outcome: ToolOutcome) -> None:
    """Shows an outcome in one line (plain text and HTML); nothing when it is the value of the cell whose card
    shows it already. Displayed again in a later cell, it shows."""
    shown = _card_shown
    if shown is not None and shown[0]() is outcome and shown[1] == _execution_count():
        return
    from IPython.display import display

    display({"text/plain": repr(outcome), "text/html": outcome_html(outcome)}, raw=True)  # type: ignore[no-untyped-call]
