"""The static transcript a widget's output carries beside its live view: sanitised HTML and markdown of the
messages it shows, for every reader that cannot run the widget (a notebook saved without widget state, GitHub,
nbviewer, ``jupyter nbconvert``).

Nothing here trusts what a model or a tool wrote: every text is escaped (HTML) or neutralised (markdown: no raw
HTML, no links, code as escaped ``<code>``), links are only ever ``http(s)`` and images only inline raster data, so
nothing in a transcript can run script, whichever renderer shows it, trusted or not.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from html import escape

from ai_widgets._html import DIM, clipped, cut, escaped, json_text
from ai_widgets._safe import safe_text
from ai_widgets.messages import Message, MessageStatus, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.outcome import Attachment, ToolOutcome, outcome_summary

__all__ = ["transcript_html", "transcript_markdown"]

#: How much of a call's arguments and of its result the transcript keeps (the live card has the rest).
MAX_CALL_CHARS = 2_000
#: How much of one message's text or reasoning the transcript keeps.
MAX_TEXT_CHARS = 100_000
#: The largest inline image kept (base64 characters); a larger one is named, not embedded.
MAX_IMAGE_CHARS = 2_000_000
#: The most a transcript holds (characters of each format): the newest messages that fit, and a note of how many
#: earlier ones it leaves out. It is sent again each time a turn ends, and every front end renders it again.
MAX_TRANSCRIPT_CHARS = 1_000_000
#: Image types a browser shows from a ``data:`` URL without running anything (never SVG: it can hold script).
RASTER_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URL = re.compile(r"https?://[^\s\x00-\x1f\x7f\"'<>`]+", re.IGNORECASE)
_BORDER = "border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px"


def _who(message: Message) -> str:
    return "You" if message.role is Role.USER else "Assistant"


def _state(part: ToolCallPart) -> str:
    return part.state.value.replace("_", " ")


def _status_note(message: Message) -> str | None:
    if message.status in (MessageStatus.COMPLETED, MessageStatus.IN_PROGRESS):
        return None
    note = message.status.value.replace("_", " ")
    return f"{note}: {message.error}" if message.error else note


def _image_data(attachment: Attachment) -> str | None:
    """The ``data:`` URL of an attachment that is a raster image small enough to embed, else ``None``."""
    data = attachment.data
    mime = attachment.mime_type.strip().lower()
    if data is None or mime not in RASTER_TYPES or len(data) > MAX_IMAGE_CHARS or not _BASE64.fullmatch(data):
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return f"data:{mime};base64,{data}"


def _link(url: str | None) -> str | None:
    """``url`` when it is a plain ``http(s)`` URL (nothing a browser would read as another scheme), else ``None``."""
    return url if url is not None and _URL.fullmatch(url) else None


# --- HTML -------------------------------------------------------------------------------------------------------


def _html_pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap; margin: 0.25em 0">{escaped(text)}</pre>'


def _html_attachments(outcome: ToolOutcome) -> list[str]:
    items: list[str] = []
    for attachment in outcome.attachments:
        name = attachment.name or attachment.mime_type
        source = _image_data(attachment)
        link = _link(attachment.url)
        if source is not None:
            items.append(f'<img src="{escape(source, quote=True)}" alt="{escaped(name)}" style="max-width: 100%">')
        elif link is not None:
            items.append(f'<a href="{escape(link, quote=True)}" rel="noopener noreferrer nofollow">{escaped(name)}</a>')
        else:
            items.append(f'<span style="{DIM}">[{escaped(name)}]</span>')
    return items


def _html_call(part: ToolCallPart) -> str:
    rows = [
        f"<div><strong>🔧 {escaped(part.tool_name)}</strong> "
        f'<span style="{DIM}">— {escaped(_state(part))}</span></div>',
        _html_pre(cut(json_text(part.effective_arguments), MAX_CALL_CHARS)),
    ]
    if part.edited_arguments is not None:
        asked = cut(json_text(part.parsed_arguments), MAX_CALL_CHARS)
        rows.append(f'<div style="{DIM}">Edited by the person before it ran; the model asked for:</div>')
        rows.append(_html_pre(asked))
    if part.outcome is not None:
        label, _line = outcome_summary(part.outcome)
        rows.append(f"<div><strong>{escaped(label)}</strong></div>")
        rows.append(_html_pre(cut(_outcome_text(part.outcome), MAX_CALL_CHARS)))
        rows.extend(_html_attachments(part.outcome))
    return f'<div class="aiw-transcript-call" style="{_BORDER}; padding: 0.25em 0.5em; margin: 0.25em 0">{"".join(rows)}</div>'


def _html_message(message: Message) -> str:
    rows = [f"<b>{_who(message)}</b>"]
    for part in message.parts:
        if isinstance(part, TextPart):
            rows.append(f'<div style="white-space:pre-wrap">{escaped(cut(part.text, MAX_TEXT_CHARS))}</div>')
        elif isinstance(part, ReasoningPart):
            rows.append(
                f'<details><summary style="{DIM}">Reasoning</summary>'
                f'<div style="white-space: pre-wrap; {DIM}">{escaped(cut(part.text, MAX_TEXT_CHARS))}</div></details>'
            )
        elif isinstance(part, ToolCallPart):
            rows.append(_html_call(part))
    note = _status_note(message)
    if note is not None:
        rows.append(f'<div style="{DIM}"><em>({escaped(note)})</em></div>')
    return f'<div style="margin:.5em 0">{"".join(rows)}</div>'


def _newest(messages: Sequence[Message], render: Callable[[Message], str], limit: int) -> tuple[list[str], int]:
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


def _left_out(count: int) -> str:
    return f"({count:,} earlier message{'s' if count != 1 else ''} not in this static copy)"


def transcript_html(messages: Sequence[Message], *, limit: int = MAX_TRANSCRIPT_CHARS) -> str:
    """The messages (the newest that fit in ``limit`` characters) as HTML in which every text is escaped: safe in
    any renderer, trusted or not."""
    shown, left_out = _newest(messages, _html_message, limit)
    if left_out:
        shown.insert(0, f'<div style="{DIM}"><em>{_left_out(left_out)}</em></div>')
    body = "<hr>".join(shown) if shown else f'<div style="{DIM}"><em>(no messages yet)</em></div>'
    return f'<div class="aiw-transcript">{body}</div>'


# --- markdown ---------------------------------------------------------------------------------------------------

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# What could form a link, an image, raw HTML or a code span is escaped (a backslash; ``&`` and ``<`` as entities,
# so no entity of the model's decodes into markup); emphasis, headings, lists and tables stay, none can run anything.
_MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]])")


def _md_plain(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text.replace("&", "&amp;").replace("<", "&lt;"))


def _md_line(line: str) -> str:
    """One line of prose: code spans as escaped ``<code>``, everything else neutralised."""
    pieces: list[str] = []
    at = 0
    for match in _CODE_SPAN.finditer(line):
        pieces.append(_md_plain(line[at : match.start()]))
        pieces.append(f"<code>{escape(match.group(2), quote=False)}</code>")
        at = match.end()
    pieces.append(_md_plain(line[at:]))
    return "".join(pieces)


def _md_pre(lines: list[str]) -> str:
    # An HTML block of its own (blank line before and after): markdown leaves its escaped content as it is.
    return "\n<pre><code>" + escape("\n".join(lines), quote=False) + "</code></pre>\n"


def _md_text(text: str) -> str:
    """A model's markdown made inert: fenced code becomes escaped ``<pre>``, the rest escaped line by line (its
    emphasis and links show as the characters they are written with)."""
    out: list[str] = []
    fence: str | None = None
    code: list[str] = []
    for line in safe_text(text).split("\n"):
        if fence is None:
            opening = _FENCE.match(line)
            if opening is not None:
                fence, code = opening.group(1), []
            else:
                out.append(_md_line(line))
        elif line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
            out.append(_md_pre(code))
            fence = None
        else:
            code.append(line)
    if fence is not None:  # never closed: what came was code all the same
        out.append(_md_pre(code))
    return "\n".join(out)


def _md_code_block(text: str) -> str:
    return _md_pre(text.split("\n"))


def _md_call(part: ToolCallPart) -> str:
    lines = [f"🔧 **{_md_plain(part.tool_name)}** — *{_md_plain(_state(part))}*"]
    lines.append(_md_code_block(cut(safe_text(json_text(part.effective_arguments)), MAX_CALL_CHARS)))
    if part.edited_arguments is not None:
        lines.append("*Edited by the person before it ran; the model asked for:*")
        lines.append(_md_code_block(cut(safe_text(json_text(part.parsed_arguments)), MAX_CALL_CHARS)))
    if part.outcome is not None:
        label, _line = outcome_summary(part.outcome)
        lines.append(f"**{label}**")
        lines.append(_md_code_block(cut(safe_text(_outcome_text(part.outcome)), MAX_CALL_CHARS)))
        for attachment in part.outcome.attachments:
            name = clipped(safe_text(attachment.name or attachment.mime_type), 200)
            source = _image_data(attachment)
            # An image as HTML, whose only attribute values are checked base64 and an escaped name.
            shown = f'<img src="{source}" alt="{escaped(name)}">' if source is not None else f"\\[{_md_plain(name)}\\]"
            lines.append(shown)
    return "\n\n".join(lines)


def _md_message(message: Message) -> str:
    blocks = [f"**{_who(message)}**"]
    for part in message.parts:
        if isinstance(part, TextPart):
            blocks.append(_md_text(cut(part.text, MAX_TEXT_CHARS)))
        elif isinstance(part, ReasoningPart):
            blocks.append("*Reasoning:* " + _md_plain(clipped(" ".join(safe_text(part.text).split()), 500)))
        elif isinstance(part, ToolCallPart):
            blocks.append(_md_call(part))
    note = _status_note(message)
    if note is not None:
        blocks.append(f"*\\({_md_plain(safe_text(note))}\\)*")
    return "\n\n".join(blocks)


def transcript_markdown(messages: Sequence[Message], *, limit: int = MAX_TRANSCRIPT_CHARS) -> str:
    """The messages (the newest that fit in ``limit`` characters) as markdown with no live markup in it: no raw
    HTML, links or images from their texts."""
    blocks, left_out = _newest(messages, _md_message, limit)
    if left_out:
        blocks.insert(0, "*" + _md_plain(_left_out(left_out)).replace("(", "\\(").replace(")", "\\)") + "*")
    return "\n\n---\n\n".join(blocks) if blocks else "*\\(no messages yet\\)*"


def _outcome_text(outcome: ToolOutcome) -> str:
    """All of an outcome's text a person would read: the failure, else the value or the display text."""
    if outcome.status == "failure":
        error = outcome.error
        return f"{error.type}: {error.message}" if error is not None else (outcome.message or "failed")
    if outcome.value is not None:
        return outcome.value if isinstance(outcome.value, str) else json_text(outcome.value)
    return outcome.text or ""
