"""The static transcript a widget's output carries beside its live view: sanitised HTML and markdown of the
messages it shows, for every reader that cannot run the widget (a notebook saved without widget state, GitHub,
nbviewer, ``jupyter nbconvert``).

Nothing here trusts what a model or a tool wrote. In the HTML, its markdown is rendered through an allow-list
(``_markdown``: tables, code blocks, emphasis, lists, ``http(s)`` links; raw HTML and the rest as escaped text) and
every other text is escaped; in the markdown, it is neutralised (no raw HTML, no links, code as escaped ``<code>``).
Links are only ever ``http(s)`` (or ``mailto:`` in rendered markdown) and images only inline raster data, so nothing
in a transcript can run script, whichever renderer shows it, trusted or not.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from ai_widgets._html import DIM, clipped, cut, escaped, json_text
from ai_widgets._safe import safe_text
from ai_widgets.changes import ContextCut
from ai_widgets.messages import (
    FilePart,
    Message,
    MessageStatus,
    PlanPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
)
from ai_widgets.messages._files import human_size
from ai_widgets.outcome import Attachment, CellRun, outcome_summary
from ai_widgets.widget._markdown import markdown_html

__all__ = ["transcript_html", "transcript_markdown"]

#: How much of a call's arguments and of its result the transcript keeps (the live card has the rest).
MAX_CALL_CHARS = 2_000
#: How much of one message's text or reasoning the transcript keeps.
MAX_TEXT_CHARS = 100_000
#: The largest image shown inline (base64 characters); a larger one is a chip with its name, kind and size. Each is
#: saved twice per output (HTML and markdown), in every output that shows its message, and sent again per turn.
MAX_IMAGE_CHARS = 500_000
#: The most a transcript holds (characters of each format): the newest messages that fit, and a note of how many
#: earlier ones it leaves out. It is sent again each time a turn ends, and every front end renders it again.
MAX_TRANSCRIPT_CHARS = 1_000_000
#: Image types a browser shows from a ``data:`` URL without running anything (never SVG: it can hold script).
RASTER_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
URL = re.compile(r"https?://[^\s\x00-\x1f\x7f\"'<>`]+", re.IGNORECASE)
BORDER = "border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px"


def who(message: Message) -> str:
    return "You" if message.role is Role.USER else "Assistant"


def state(part: ToolCallPart) -> str:
    return part.state.value.replace("_", " ")


def status_note(message: Message) -> str | None:
    if message.status in (MessageStatus.COMPLETED, MessageStatus.IN_PROGRESS):
        return None
    note = message.status.value.replace("_", " ")
    return f"{note}: {message.error}" if message.error else note


def image_data(media_type: str, data: str | None) -> str | None:
    """The ``data:`` URL of a file that is a raster image small enough to embed, else ``None``."""
    mime = media_type.strip().lower()
    if data is None or mime not in RASTER_TYPES or len(data) > MAX_IMAGE_CHARS or not BASE64.fullmatch(data):
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return f"data:{mime};base64,{data}"


def link(url: str | None) -> str | None:
    """``url`` when it is a plain ``http(s)`` URL (nothing a browser would read as another scheme), else ``None``."""
    return url if url is not None and URL.fullmatch(url) else None


# --- what a card and a file show, for both formats ---------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    tool_name: str
    state: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Label:
    text: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Prose:
    text: str


@dataclass(frozen=True)
class File:
    """A file: inline as an image (``image``, a checked ``data:`` URL), else a chip (name, kind, size) that links
    to ``link`` (a plain ``http(s)`` URL) where it has one."""

    name: str
    kind: str
    size: str | None
    image: str | None
    link: str | None


Block = Heading | Note | Label | Code | Prose | File


def kind(media_type: str) -> str:
    """A file's kind for a person: ``PNG image``, ``PDF``, ``CSV text``, else its media type."""
    main, _, sub = media_type.strip().lower().partition("/")
    sub = sub.split(";")[0].removeprefix("x-").split("+")[0]
    if media_type.strip().lower() == "application/pdf":
        return "PDF"
    if main == "image" and sub:
        return f"{sub.upper()} image"
    if main == "text" and sub:
        return "text" if sub == "plain" else f"{sub.upper()} text"
    return media_type


def file(name: str | None, media_type: str, *, data: str | None, url: str | None, size: int | None) -> File:
    return File(
        name=clipped(safe_text(name or kind(media_type)), 200),
        kind=clipped(safe_text(kind(media_type)), 100),
        size=None if size is None else human_size(size),
        image=image_data(media_type, data),
        link=link(url),
    )


def attachment_file(attachment: Attachment) -> File:
    data = attachment.data
    size = None if data is None else len(data) * 3 // 4 - data[-2:].count("=")
    return file(attachment.name, attachment.mime_type, data=data, url=attachment.url, size=size)


def card_blocks(part: ToolCallPart) -> list[Block]:
    """What a tool call's card shows in the transcript, in order (the one place that decides it, for both formats):
    the tool and its state, the arguments, the result (its text, its value, or the failure) and its files."""
    cell = part.outcome.cell if part.outcome is not None else None
    blocks: list[Block] = [
        Heading(part.tool_name, state(part)),
        # Code a call ran as a cell shows as that code, as it ran; other arguments as JSON.
        Code(cut(cell.code if cell is not None else json_text(part.effective_arguments), MAX_CALL_CHARS)),
    ]
    if part.edited_arguments is not None:
        blocks.append(Note("Edited by the person before it ran; the model asked for:"))
        blocks.append(Code(cut(json_text(part.parsed_arguments), MAX_CALL_CHARS)))
    if part.unasked_reason is not None:
        blocks.append(Note(f"Ran without asking: {cut(part.unasked_reason, 300)}"))
    asked = part.input_request
    if asked is not None:  # saved while the call's server waited for the person: what it asked, as text
        who = f"{asked.asker} asked" if asked.asker else "The tool asked"
        blocks.append(Note(f"{who} for your input when this was saved; it was not answered:"))
        blocks.append(Prose(cut(asked.message, MAX_CALL_CHARS)))
        if asked.url is not None:
            blocks.append(Note(f"It asked to open a page on {asked.domain}: {cut(asked.url, 500)}"))
    outcome = part.outcome
    if outcome is None:
        return blocks
    label, _line = outcome_summary(outcome)
    blocks.append(Label(label))
    if cell is not None:
        blocks.extend(cell_blocks(cell))
    elif outcome.status == "failure":
        error = outcome.error
        failure = f"{error.type}: {error.message}" if error is not None else (outcome.message or "failed")
        blocks.append(Code(cut(failure, MAX_CALL_CHARS)))
    else:
        if outcome.text:  # what the card shows; the value too, which is what the model was told
            blocks.append(Prose(cut(outcome.text, MAX_CALL_CHARS)))
        if outcome.value is not None:
            value = outcome.value if isinstance(outcome.value, str) else json_text(outcome.value)
            blocks.append(Code(cut(value, MAX_CALL_CHARS)))
        display = outcome.display
        if display is not None:  # a figure as its image; a table, a chart or a widget as its text form
            image = display.image()
            if image is not None:
                media_type, data = image
                blocks.append(file(None, media_type, data=data, url=None, size=len(data) * 3 // 4))
            elif display.text and display.text != outcome.text:
                blocks.append(Code(cut(display.text, MAX_CALL_CHARS)))
    blocks.extend(attachment_file(attachment) for attachment in outcome.attachments)
    return blocks


def cell_blocks(cell: CellRun) -> list[Block]:
    """A cell run's outputs as the notebook showed them, in order (a figure as its image, a table or a value as its
    text form), where it stopped, and what it changed."""
    blocks: list[Block] = []
    for output in cell.outputs:
        display = output.display
        if display is None:
            if output.text:
                blocks.append(Code(cut(output.text, MAX_CALL_CHARS)))
            continue
        image = display.image()
        if image is not None:
            media_type, data = image
            blocks.append(file(None, media_type, data=data, url=None, size=len(data) * 3 // 4))
        elif display.text:
            blocks.append(Code(cut(display.text, MAX_CALL_CHARS)))
    if cell.stopped_at is not None:
        blocks.append(Note(f"Stopped at {cell.stopped_at}."))
    changed = [
        f"{what} {', '.join(names)}"
        for what, names in (
            ("created", cell.created),
            ("rebound", cell.rebound),
            ("deleted", cell.deleted),
            ("changed in place", cell.mutated),
        )
        if names
    ]
    blocks.append(Note(cut(f"Changed: {'; '.join(changed)}." if changed else "No variables changed.", 1000)))
    return blocks


def answer_blocks(part: TextPart) -> list[Block] | None:
    """A typed answer (``output_type=``) as its object: what its refused tries were told, then its JSON (the
    validated object once valid). ``None`` for other text."""
    answer = part.answer
    if answer is None:
        return None
    name = answer.type_name
    blocks: list[Block] = [Note(f"Answer {n} did not match {name}: {e}") for n, e in enumerate(answer.refused, 1)]
    if answer.state == "invalid":
        blocks.append(Note(f"This answer does not match {name}: {answer.errors or ''}"))
    blocks.append(Label(f"Typed answer ({name})"))
    shown = json_text(answer.value) if answer.state == "valid" else part.text
    blocks.append(Code(cut(shown, MAX_TEXT_CHARS)))
    return blocks


# --- HTML -------------------------------------------------------------------------------------------------------


def html_pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap; margin: 0.25em 0">{escaped(text)}</pre>'


def html_file(file: File) -> str:
    if file.image is not None:
        return (
            f'<div><img src="{escape(file.image, quote=True)}" alt="{escaped(file.name)}" title="{escaped(file.name)}"'
            ' style="max-width: 100%; max-height: 240px"></div>'
        )
    name = escaped(file.name)
    if file.link is not None:
        name = f'<a href="{escape(file.link, quote=True)}" rel="noopener noreferrer nofollow">{name}</a>'
    details = " · ".join(escaped(item) for item in (file.kind, file.size) if item)
    return (
        f'<div><span class="aiw-transcript-file" style="{BORDER}; padding: 0 0.4em; display: inline-block">'
        f'📎 {name} <span style="{DIM}">{details}</span></span></div>'
    )


def html_block(block: Block) -> str:
    match block:
        case Heading(tool_name=name, state=state):
            return f'<div><strong>🔧 {escaped(name)}</strong> <span style="{DIM}">— {escaped(state)}</span></div>'
        case Note(text=text):
            return f'<div style="{DIM}">{escaped(text)}</div>'
        case Label(text=text):
            return f"<div><strong>{escaped(text)}</strong></div>"
        case Code(text=text):
            return html_pre(text)
        case Prose(text=text):
            return html_markdown(text)
        case File():
            return html_file(block)


def html_markdown(text: str, style: str = "") -> str:
    """A model's or a tool's markdown, rendered with nothing in it that can run."""
    shown = f' style="{style}"' if style else ""
    return f'<div class="aiw-transcript-text"{shown}>{markdown_html(text)}</div>'


def html_call(part: ToolCallPart) -> str:
    rows = "".join(html_block(block) for block in card_blocks(part))
    return f'<div class="aiw-transcript-call" style="{BORDER}; padding: 0.25em 0.5em; margin: 0.25em 0">{rows}</div>'


def html_message(message: Message) -> str:
    rows = [f"<b>{who(message)}</b>"]
    for part in message.parts:
        if isinstance(part, TextPart) and (answer := answer_blocks(part)) is not None:
            rows.extend(html_block(block) for block in answer)
        elif isinstance(part, TextPart):
            rows.append(html_markdown(cut(part.text, MAX_TEXT_CHARS)))
        elif isinstance(part, ReasoningPart):
            rows.append(
                f'<details><summary style="{DIM}">Reasoning</summary>'
                f"{html_markdown(cut(part.text, MAX_TEXT_CHARS), DIM)}</details>"
            )
        elif isinstance(part, ToolCallPart):
            rows.append(html_call(part))
        elif isinstance(part, FilePart):
            rows.append(html_file(file(part.name, part.media_type, data=part.data, url=part.url, size=part.size)))
        elif isinstance(part, PlanPart):
            rows.append(html_markdown(cut(part.markdown(), MAX_TEXT_CHARS)))
    note = status_note(message)
    if note is not None:
        rows.append(f'<div style="{DIM}"><em>({escaped(note)})</em></div>')
    return f'<div style="margin:.5em 0">{"".join(rows)}</div>'


def newest(messages: Sequence[Message], render: Callable[[Message], str], limit: int) -> tuple[list[str], int]:
    """The newest messages rendered, oldest first, that fit in ``limit`` characters (the last one always), and how
    many earlier ones are left out."""
    shown: list[str] = []
    used = 0
    for message in reversed(messages):
        block = render(message)
        if shown and used + len(block) > limit:
            break
        shown.append(block)
        used += len(block)
    shown.reverse()
    return shown, len(messages) - len(shown)


def context_cut_text(request_cut: ContextCut) -> str:
    """What the marker where the last request stopped sending says (the front end's ``render/contextcut.ts`` words it
    the same way)."""
    window = f"the {request_cut.window:,}-token window"
    if request_cut.left_out_messages:
        plural = "s" if request_cut.left_out_messages != 1 else ""
        text = (
            f"Earlier messages were not sent to the model: {request_cut.left_out_messages:,} message{plural}, "
            f"~{request_cut.left_out_tokens:,} tokens over {window}"
        )
        if request_cut.shortened_results:
            text += f"; {request_cut.shortened_results:,} older tool result{'s' if request_cut.shortened_results != 1 else ''} sent shortened"
        return text + "."
    plural = "s were" if request_cut.shortened_results != 1 else " was"
    return (
        f"{request_cut.shortened_results:,} older tool result{plural} sent to the model shortened, "
        f"~{request_cut.left_out_tokens:,} tokens over {window}."
    )


def cut_at(messages: Sequence[Message], shown: int, request_cut: ContextCut | None) -> int | None:
    """Where among the ``shown`` newest of ``messages`` the marker of ``request_cut`` goes (before the first message the last
    request carried), or ``None`` (no request_cut, or that message is not shown)."""
    if request_cut is None:
        return None
    first = len(messages) - shown
    for index in range(first, len(messages)):
        if messages[index].id == request_cut.first_sent_id:
            return index - first
    return None


def left_out_line(count: int) -> str:
    return f"({count:,} earlier message{'s' if count != 1 else ''} not in this static copy)"


#: How the transcript that follows a live view's output hides the one it is not (JupyterLab and Notebook 7 classes):
#: the view's output while it shows no live view (loading, or its model missing: "model not found"), and itself
#: while it does. Scoped to one transcript by its id; elsewhere (nbconvert, GitHub) it matches nothing.
SWAP = (
    "<style>.jp-OutputArea-child:has(+* [data-aiw-transcript={id}]):not(:has(.aiw)),"
    ".jp-OutputArea-child:has(.aiw)+*:has([data-aiw-transcript={id}]){{display:none}}</style>"
)
TRANSCRIPT_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,99}")  # a CSS identifier as it is: no quotes needed


def transcript_html(
    messages: Sequence[Message],
    *,
    limit: int = MAX_TRANSCRIPT_CHARS,
    transcript_id: str | None = None,
    context_cut: ContextCut | None = None,
) -> str:
    """The messages (the newest that fit in ``limit`` characters) as HTML in which their markdown is rendered through an
    allow-list and every other text escaped: safe in any renderer, trusted or not. With ``transcript_id`` (a letter, then letters, digits, ``-`` and ``_``), it is the output shown
    after a live view's: it carries that id, and the style that shows one of the two. With ``context_cut``, a line
    says where the last request stopped sending (before the first message it carried)."""
    shown, left_out = newest(messages, html_message, limit)
    at = cut_at(messages, len(shown), context_cut)
    if at is not None and context_cut is not None:
        shown.insert(at, f'<div style="{DIM}" role="note"><em>{escape(context_cut_text(context_cut))}</em></div>')
    if left_out:
        shown.insert(0, f'<div style="{DIM}"><em>{left_out_line(left_out)}</em></div>')
    body = "<hr>".join(shown) if shown else f'<div style="{DIM}"><em>(no messages yet)</em></div>'
    if transcript_id is None:
        return f'<div class="aiw-transcript">{body}</div>'
    if not TRANSCRIPT_ID.fullmatch(transcript_id):
        raise ValueError(f"a transcript id is a letter, then letters, digits, '-' and '_', not {transcript_id!r}")
    swap = SWAP.format(id=transcript_id)
    return f'{swap}<div class="aiw-transcript" data-aiw-transcript="{transcript_id}">{body}</div>'


# --- markdown ---------------------------------------------------------------------------------------------------

FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# What could form a link, an image, raw HTML or a code span is escaped (a backslash; ``&`` and ``<`` as entities,
# so no entity of the model's decodes into markup); emphasis, headings, lists and tables stay, none can run anything.
MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]])")


def md_plain(text: str) -> str:
    return MARKDOWN_SPECIAL.sub(r"\\\1", text.replace("&", "&amp;").replace("<", "&lt;"))


def md_line(line: str) -> str:
    """One line of prose: code spans as escaped ``<code>``, everything else neutralised."""
    pieces: list[str] = []
    at = 0
    for match in CODE_SPAN.finditer(line):
        pieces.append(md_plain(line[at : match.start()]))
        pieces.append(f"<code>{escape(match.group(2), quote=False)}</code>")
        at = match.end()
    pieces.append(md_plain(line[at:]))
    return "".join(pieces)


def md_pre(lines: list[str]) -> str:
    # An HTML block of its own (blank line before and after): markdown leaves its escaped content as it is.
    return "\n<pre><code>" + escape("\n".join(lines), quote=False) + "</code></pre>\n"


def md_text(text: str) -> str:
    """A model's markdown made inert: fenced code becomes escaped ``<pre>``, the rest escaped line by line (its
    emphasis and links show as the characters they are written with)."""
    out: list[str] = []
    fence: str | None = None
    code: list[str] = []
    for line in safe_text(text).split("\n"):
        if fence is None:
            opening = FENCE.match(line)
            if opening is not None:
                fence, code = opening.group(1), []
            else:
                out.append(md_line(line))
        elif line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
            out.append(md_pre(code))
            fence = None
        else:
            code.append(line)
    if fence is not None:  # never closed: what came was code all the same
        out.append(md_pre(code))
    return "\n".join(out)


def md_code_block(text: str) -> str:
    return md_pre(text.split("\n"))


def md_file(file: File) -> str:
    if file.image is not None:
        # An image as HTML, whose only attribute values are checked base64 and an escaped name.
        return f'<img src="{file.image}" alt="{escaped(file.name)}" title="{escaped(file.name)}">'
    details = ", ".join(item for item in (file.kind, file.size) if item)
    chip = f"📎 *{md_plain(file.name)}* \\({md_plain(details)}\\)"
    # A plain http(s) URL as text: a renderer that links URLs links it; nothing else can come of it.
    return chip if file.link is None else f"{chip} {md_plain(file.link)}"


def md_block(block: Block) -> str:
    match block:
        case Heading(tool_name=name, state=state):
            return f"🔧 **{md_plain(name)}** — *{md_plain(state)}*"
        case Note(text=text):
            return f"*{md_plain(text)}*"
        case Label(text=text):
            return f"**{md_plain(text)}**"
        case Code(text=text):
            return md_code_block(safe_text(text))
        case Prose(text=text):
            return md_text(text)
        case File():
            return md_file(block)


def md_call(part: ToolCallPart) -> str:
    return "\n\n".join(md_block(block) for block in card_blocks(part))


def md_message(message: Message) -> str:
    blocks = [f"**{who(message)}**"]
    for part in message.parts:
        if isinstance(part, TextPart) and (answer := answer_blocks(part)) is not None:
            blocks.extend(md_block(block) for block in answer)
        elif isinstance(part, TextPart):
            blocks.append(md_text(cut(part.text, MAX_TEXT_CHARS)))
        elif isinstance(part, ReasoningPart):
            blocks.append("*Reasoning:* " + md_plain(clipped(" ".join(safe_text(part.text).split()), 500)))
        elif isinstance(part, ToolCallPart):
            blocks.append(md_call(part))
        elif isinstance(part, FilePart):
            blocks.append(md_file(file(part.name, part.media_type, data=part.data, url=part.url, size=part.size)))
        elif isinstance(part, PlanPart):
            blocks.append(md_text(cut(part.markdown(), MAX_TEXT_CHARS)))
    note = status_note(message)
    if note is not None:
        blocks.append(f"*\\({md_plain(safe_text(note))}\\)*")
    return "\n\n".join(blocks)


def transcript_markdown(
    messages: Sequence[Message], *, limit: int = MAX_TRANSCRIPT_CHARS, context_cut: ContextCut | None = None
) -> str:
    """The messages (the newest that fit in ``limit`` characters) as markdown with no live markup in it: no raw
    HTML, links or images from their texts; with ``context_cut``, the line where the last request stopped sending."""
    blocks, left_out = newest(messages, md_message, limit)
    at = cut_at(messages, len(blocks), context_cut)
    if at is not None and context_cut is not None:
        blocks.insert(at, "*" + md_plain(context_cut_text(context_cut)).replace("~", "\\~") + "*")
    if left_out:
        blocks.insert(0, "*" + md_plain(left_out_line(left_out)).replace("(", "\\(").replace(")", "\\)") + "*")
    return "\n\n---\n\n".join(blocks) if blocks else "*\\(no messages yet\\)*"
