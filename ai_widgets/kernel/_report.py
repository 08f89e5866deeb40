"""What the model is told of one run of code: a bounded text (the head and tail of what it printed, its value, how
many figures it drew, its error with the code's own frames, where it stopped, what it changed), and the whole text
that ``read_output`` pages through when the bounded one had to cut."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from ai_widgets.kernel._cell import RunRecord, is_own_frame, named_lines
from ai_widgets.outcome import MAX_CELL_IMAGES

__all__ = ["RunReport", "report_of"]


@dataclass(frozen=True, slots=True)
class RunReport:
    """The model's bounded text of a run, and the whole text behind it.

    Attributes:
        told: What the model is told (at most the run's ``max_output_chars``, give or take a line of notes).
        full: Everything the run printed and showed, as text, in order (what ``read_output`` reads).
        cut: Whether ``told`` left out some of ``full``.
    """

    told: str
    full: str
    cut: bool


def report_of(
    record: RunRecord, *, filename: str, tool_call_id: str, max_chars: int, changes: str | None = None
) -> RunReport:
    """The report of a finished (or stopped) run.

    Args:
        record: What the run did.
        filename: The name its code's frames carry.
        tool_call_id: The call, for the ``read_output`` hint.
        max_chars: The most characters of printed text, value and traceback the model is told together.
        changes: The one line saying which variables the run changed, or ``None``.
    """
    printed: list[str] = []
    full: list[str] = []
    for output in record.outputs:
        match output.kind:
            case "stream":
                printed.append(output.text)
                full.append(output.text)
            case "display":
                if output.display is not None and output.display.image() is None:
                    printed.append(output.display.text + "\n")
                    full.append(output.display.text + "\n")
            case "result" if output.display is not None:
                full.append(f"Out: {output.display.text}\n")
            case "error":
                full.append(output.text)
    whole = "".join(full)
    notes: list[str] = []
    value = None if record.value_text is None else bounded_middle(record.value_text, max(200, max_chars // 4))
    error = None if record.error is None else model_traceback(record.error, filename, max(400, max_chars // 4))
    images = sum(1 for o in record.outputs if o.display is not None and o.display.image() is not None)
    if images:
        sent = min(images, MAX_CELL_IMAGES)
        notes.append(
            f"({images} image{'s' if images != 1 else ''} sent with this result)"
            if sent == images
            else f"({images} images: the first {sent} sent with this result, the card shows all)"
        )
    if record.displays_left_out:
        notes.append(f"({record.displays_left_out} more display outputs were left out)")
    if record.stopped_at is not None:
        notes.append(f"Stopped at {record.stopped_at}.")
    if not (printed or value or error or images):
        notes.append("The code ran and printed nothing.")
    if changes:
        notes.append(changes)
    room = max(0, max_chars - len(value or "") - len(error or ""))
    text = "".join(printed)
    cut = len(text) > room or (value is not None and value != record.value_text) or record.left_out > 0
    parts: list[str] = []
    if text:
        parts.append(head_and_tail(text, room, tool_call_id).rstrip("\n"))
    if value is not None:
        parts.append(f"Out: {value}")
    if error is not None:
        parts.append(error.rstrip("\n"))
    parts.extend(notes)
    if cut:
        parts.append(
            f"[Not all of the output is shown here ({len(whole):,} characters in all): "
            f'read_output("{tool_call_id}", start) reads it from character start.]'
        )
    told = "\n".join(parts)
    return RunReport(told=told, full=whole, cut=cut)


def head_and_tail(text: str, room: int, tool_call_id: str) -> str:
    """``text``, or its first and last characters within ``room``, saying where the cut is."""
    if len(text) <= room:
        return text
    head = room // 2
    tail = room - head
    skipped = len(text) - head - tail
    return (
        f"{text[:head]}\n[… {skipped:,} characters left out: "
        f'read_output("{tool_call_id}", {head}) reads from here …]\n{text[len(text) - tail :] if tail else ""}'
    )


def bounded_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}[… {len(text) - 2 * half:,} characters left out …]{text[len(text) - half :]}"


def model_traceback(exc: BaseException, filename: str, limit: int) -> str:
    """The exception for the model: its type and message, and the frames of the code itself (a run of frames of
    libraries between them is one line; the last frame, where it was raised, is kept)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    frames = [f for f in traceback.extract_tb(tb) if not is_own_frame(f.filename)]
    lines: list[str] = []
    hidden = 0
    for index, frame in enumerate(frames):
        if frame.filename == filename or index == len(frames) - 1:
            if hidden:
                lines.append(f"  [{hidden} frame{'s' if hidden != 1 else ''} of libraries]\n")
                hidden = 0
            lines.extend(traceback.StackSummary.from_list([frame]).format())
        else:
            hidden += 1
    only = "".join(traceback.format_exception_only(type(exc), exc))
    text = ("Traceback (most recent call last):\n" + "".join(lines) if lines else "") + only
    return bounded_middle(named_lines(text, filename), limit)
