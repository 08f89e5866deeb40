"""What a request carries when the conversation is longer than the model's context window: the history shortened for
that one request (the oldest tool results cut first, then the oldest turns left out, never the current turn, the
model told what was left out), by a conservative estimate of tokens. Pure: the history itself is never changed.

No tokenizer is at hand (the providers' are not all public, and none may be downloaded here), so tokens are
estimated from the text, on the high side: a run of letters counts one token per six letters or part of it (English
words are one or two tokens), every digit, punctuation mark and symbol one (number-heavy data and JSON are dense;
Gemini's tokenizer gives each digit a token), every non-ASCII character one (a CJK character is about one), a run of
two or more whitespace characters one, and a run of 40 or more characters without a space at least one per two
characters (base64, hashes, minified data tokenize badly); all of it times 1.15, with 8 tokens per message and 4 per
part for the provider's framing. An image counts :data:`IMAGE_TOKENS` (about what Anthropic and OpenAI charge for a
large one), another file :data:`FILE_TOKENS` (a few PDF pages), a text file its text. A tool result counts what the
transports send of it: at most ``RequestOptions.max_tool_result_chars`` of its text, cut by the same rule
(``ToolCallPart.result_for_model``), and its images besides (the transports count each image against the text's
limit; the estimate does not, which keeps it on the high side).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ai_widgets.changes import ContextCut
from ai_widgets.messages import FilePart, Message, MessageStatus, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.outcome import ToolOutcome
from ai_widgets.tools import ToolDefinition
from ai_widgets.transports._base import ChatRequest, ContextTooLongError, TransportProfile

__all__ = [
    "DEFAULT_OUTPUT_RESERVE",
    "FILE_TOKENS",
    "IMAGE_TOKENS",
    "NOTE_TOKENS",
    "SHORT_RESULT_CHARS",
    "Fitted",
    "HistoryTokens",
    "current_turn_start",
    "estimate_tokens",
    "fit_messages",
    "fit_request",
    "message_tokens",
    "refit_request",
    "request_overhead",
    "request_tokens",
    "retry_window",
    "too_long_error",
    "window_of",
]

#: What one image counts (Anthropic's figure for an image of about 1.15 megapixels, its largest unscaled; OpenAI's
#: high-detail image of 2048 x 768 is 1,105; Gemini's is 258 a tile).
IMAGE_TOKENS = 1_600
#: What a file that is neither an image nor text counts (a PDF costs Anthropic 1,500 to 3,000 tokens a page).
FILE_TOKENS = 6_000
#: The output a request leaves room for when neither ``RequestOptions.max_tokens`` nor the transport says (at most a
#: quarter of the window).
DEFAULT_OUTPUT_RESERVE = 4_096
#: How many characters of an older tool result are kept when it is shortened (its beginning and end).
SHORT_RESULT_CHARS = 600
#: What the note telling the model what was left out may take.
NOTE_TOKENS = 160
#: Framing per message and per part (roles, separators, a call's id).
MESSAGE_TOKENS = 8
PART_TOKENS = 4
SAFETY = 1.15

PIECES = re.compile(r"[A-Za-z]{1,6}|[^\sA-Za-z]|\s{2,}")
DENSE = re.compile(r"\S{40,}")


#: Estimates already made, by the text's hash and length (not the text: a cache must not keep every result alive),
#: emptied when full: the texts of messages estimated again (the reply in progress, a history without kept estimates,
#: the shortened copies of a cut) are mostly texts already seen.
ESTIMATES: dict[tuple[int, int], int] = {}
ESTIMATES_KEPT = 65_536


def estimate_tokens(text: str) -> int:
    """A conservative estimate of the tokens ``text`` takes (see the module docstring for the rule)."""
    if not text:
        return 0
    key = (hash(text), len(text))
    found = ESTIMATES.get(key)
    if found is None:
        found = estimate(text)
        if len(ESTIMATES) >= ESTIMATES_KEPT:
            ESTIMATES.clear()
        ESTIMATES[key] = found
    return found


def estimate(text: str) -> int:
    count = len(PIECES.findall(text))
    for run in DENSE.finditer(text):
        pieces = len(PIECES.findall(run.group()))
        count += max(0, math.ceil(len(run.group()) / 2) - pieces)
    return math.ceil(count * SAFETY)


def json_tokens(value: Any) -> int:
    if value is None:
        return 0
    try:
        return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    except (TypeError, ValueError):
        return estimate_tokens(str(value))


def result_images(part: ToolCallPart) -> int:
    """How many images a call's result may send (its image attachments, the image its display shows, and the images
    of the cell it ran)."""
    outcome = part.outcome
    if outcome is None:
        return 0
    cell = 0 if outcome.cell is None else len(outcome.cell.images())
    if not outcome.ok:
        return cell
    count = sum(
        1
        for attachment in outcome.attachments
        if attachment.mime_type.lower().startswith("image/") and not attachment.card_only
    )
    return cell + count + (1 if outcome.display is not None and outcome.display.image() is not None else 0)


def file_tokens(part: FilePart) -> int:
    media_type = part.media_type.lower()
    if media_type.startswith("image/"):
        return IMAGE_TOKENS
    if (media_type.startswith("text/") or media_type.endswith(("json", "xml", "csv"))) and part.data is not None:
        return estimate_tokens(part.raw().decode("utf-8", "replace"))
    return FILE_TOKENS


def part_tokens(part: object, limit: int | None) -> int:
    match part:
        case TextPart() | ReasoningPart():
            return PART_TOKENS + estimate_tokens(part.text) + json_tokens(part.provider_data)
        case ToolCallPart():
            told = part.result_for_model(limit) if part.outcome is not None else ""
            return (
                2 * PART_TOKENS
                + estimate_tokens(part.tool_name)
                + estimate_tokens(part.arguments)
                + estimate_tokens(told)
                + IMAGE_TOKENS * result_images(part)
                + json_tokens(part.provider_data)
            )
        case FilePart():
            return PART_TOKENS + file_tokens(part)
    return PART_TOKENS


def message_tokens(message: Message, *, max_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS) -> int:
    """A conservative estimate of the tokens a message takes in a request whose tool results are sent cut to
    ``max_result_chars`` characters (``RequestOptions.max_tool_result_chars``; ``None``: whole)."""
    return MESSAGE_TOKENS + sum(part_tokens(part, max_result_chars) for part in message.parts)


def request_overhead(
    tools: Sequence[ToolDefinition], *, system_prompt: str | None, output_schema: dict[str, Any] | None, output: int
) -> int:
    """The tokens a request takes besides its messages: the tools' definitions, the system prompt, the output
    schema, and ``output`` tokens of room for the reply."""
    definitions = sum(
        PART_TOKENS + estimate_tokens(d.name) + estimate_tokens(d.description) + json_tokens(d.parameters)
        for d in tools
    )
    return definitions + estimate_tokens(system_prompt or "") + json_tokens(output_schema) + output + MESSAGE_TOKENS


class HistoryTokens:
    """The estimated tokens of one conversation's messages (:func:`message_tokens`), kept between its requests, so a
    request's estimate does not take longer as the conversation grows.

    A finished message (not in progress, every call ended: a call's record never changes after its turn) is estimated
    once, while it stays in the history's unbroken run of finished messages from its start; a message in progress,
    and every message after it, is estimated again for every request. The run is checked against the history by
    identity, message by message, each time: an edit, a regenerate or a switch of branch puts other messages in the
    history, which are estimated as they come (the kept estimates of the messages still there are reused). The
    messages of the run are kept (to be told apart by identity) until a request's history no longer holds them.
    """

    __slots__ = ("_costs", "_limit", "_settled", "_total")

    def __init__(self) -> None:
        self._limit: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
        self._settled: list[Message] = []  # the run of finished messages the history began with, last time
        self._costs: list[int] = []  # their estimates
        self._total = 0  # and their sum

    def total(self, messages: list[Message], max_result_chars: int | None) -> int:
        """The estimated tokens of ``messages`` (see :func:`message_tokens` for ``max_result_chars``)."""
        count = self._update(messages, max_result_chars)
        return self._total + sum(message_tokens(m, max_result_chars=max_result_chars) for m in messages[count:])

    def costs(self, messages: list[Message], max_result_chars: int | None) -> list[int]:
        """Each message's estimated tokens (a new list)."""
        count = self._update(messages, max_result_chars)
        return self._costs + [message_tokens(m, max_result_chars=max_result_chars) for m in messages[count:]]

    def _update(self, messages: list[Message], limit: int | None) -> int:
        """Brings the kept run up to date with ``messages``; how many of them it holds."""
        settled = self._settled
        known: dict[int, tuple[Message, int]] = {}  # after a change under the run: what it held, by identity
        if limit != self._limit or messages[: len(settled)] != settled:  # compared by identity (Message has no ==)
            if limit == self._limit:
                known = {id(m): (m, cost) for m, cost in zip(settled, self._costs, strict=True)}
            self._limit, self._settled, self._costs, self._total = limit, [], [], 0
            settled = self._settled
        for message in messages[len(settled) :]:
            if not finished(message):
                break
            kept = known.get(id(message))
            cost = (
                kept[1] if kept is not None and kept[0] is message else message_tokens(message, max_result_chars=limit)
            )
            settled.append(message)
            self._costs.append(cost)
            self._total += cost
        return len(settled)


def finished(message: Message) -> bool:
    """Whether ``message`` can no longer change what it takes: not in progress, and every call of it ended."""
    if message.status is MessageStatus.IN_PROGRESS:
        return False
    return all(part.state.terminal for part in message.parts if isinstance(part, ToolCallPart))


def current_turn_start(messages: Sequence[Message], reply: Message | None) -> int:
    """Where the current turn begins: the last user message before ``reply`` (the turn's reply), or the reply itself
    when no user message comes before it; ``len(messages)`` without a reply.

    Looked for from the end, where the turn is: a request's cost must not grow with the history before it."""
    end = len(messages)
    if reply is not None:
        end = next((i for i in range(len(messages) - 1, -1, -1) if messages[i] is reply), end)
    for index in range(min(end, len(messages) - 1), -1, -1):
        if messages[index].role is Role.USER:
            return index
    return end


# --- fitting ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fitted:
    """The messages one request carries, and how they were shortened.

    Attributes:
        messages: What is sent: the history, or a shortened copy (the note to the model in its first message).
        tokens: Their estimated tokens.
        left_out: How many of the oldest messages were left out.
        left_out_turns: How many turns those were.
        shortened: How many older tool results it carries shortened.
        left_out_tokens: The estimated tokens not sent.
        fits: Whether they fit the budget (not when the current turn alone does not).
    """

    messages: list[Message]
    tokens: int
    left_out: int = 0
    left_out_turns: int = 0
    shortened: int = 0
    left_out_tokens: int = 0
    fits: bool = True

    @property
    def cut(self) -> bool:
        """Whether anything was left out or shortened."""
        return bool(self.left_out or self.shortened)


def fit_messages(
    messages: Sequence[Message],
    *,
    current_start: int,
    budget: int,
    max_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS,
    estimates: HistoryTokens | None = None,
) -> Fitted:
    """The history as a request of at most ``budget`` estimated tokens carries it, its tool results sent cut to
    ``max_result_chars`` characters (``RequestOptions.max_tool_result_chars``; see :func:`message_tokens`).

    First the tool results of the turns before the current one are shortened, oldest first (to their first and last
    :data:`SHORT_RESULT_CHARS` characters, images dropped, with a note in the result); then the oldest turns are left
    out whole, so every call goes with its result and the first message sent is a user message. The current turn
    (from ``current_start`` on) is always sent whole, even when it alone is larger than the budget (``fits`` is then
    false). When anything was cut, the first user message sent begins with a note to the model saying what.

    ``estimates``: the conversation's estimates kept from its earlier requests (see :class:`HistoryTokens`), so
    only what changed since is estimated; ``None``: every message is estimated.
    """
    messages = list(messages)
    current_start = max(0, min(current_start, len(messages)))
    estimates = HistoryTokens() if estimates is None else estimates
    whole = total = estimates.total(messages, max_result_chars)
    if total <= budget:
        return Fitted(messages, total)
    costs = estimates.costs(messages, max_result_chars)
    target = budget - NOTE_TOKENS
    shortened = [0] * len(messages)  # results shortened, by message
    for index in range(current_start):
        if total <= target:
            break
        message = messages[index]
        if message.role is not Role.ASSISTANT or not message.tool_calls:
            continue
        parts = list(message.parts)
        for position, part in enumerate(parts):
            if total > target and isinstance(part, ToolCallPart) and (short := shortened_call(part)) is not None:
                saved = part_tokens(part, max_result_chars) - part_tokens(short, max_result_chars)
                if saved > 0:
                    parts[position] = short
                    total -= saved
                    costs[index] -= saved
                    shortened[index] += 1
        if parts != message.parts:
            messages[index] = with_parts(message, parts)
    dropped = 0
    for start in [i for i in range(1, current_start) if messages[i].role is Role.USER] + [current_start]:
        if total <= target:
            break
        total -= sum(costs[dropped:start])
        dropped = start
    kept, left = messages[dropped:], messages[:dropped]
    turns = sum(1 for m in left if m.role is Role.USER) or (1 if left else 0)
    sent_shortened = sum(shortened[dropped:])  # those of the turns left out are not sent at all
    note = left_out_note(left, turns, sent_shortened)
    told = next((i for i, m in enumerate(kept) if m.role is Role.USER), None)  # a user message, never the model's
    if told is not None:
        kept[told] = with_parts(kept[told], [TextPart(note), *kept[told].parts])
        total += PART_TOKENS + estimate_tokens(note)
    return Fitted(
        kept,
        total,
        left_out=dropped,
        left_out_turns=turns,
        shortened=sent_shortened,
        left_out_tokens=max(0, whole - total),
        fits=total <= budget,
    )


def shortened_call(part: ToolCallPart) -> ToolCallPart | None:
    """A copy of a call whose result the model is told shortened (its images dropped), or ``None`` when there is
    nothing to shorten (a call the provider ran, whose result is the provider's own data; a short result)."""
    outcome = part.outcome
    if outcome is None or part.provider_executed:
        return None
    text = part.result_for_model()
    if len(text) <= 2 * SHORT_RESULT_CHARS and not result_images(part):
        return None
    if len(text) > 2 * SHORT_RESULT_CHARS:
        note = (
            f"[… {len(text) - 2 * SHORT_RESULT_CHARS:,} of this result's {len(text):,} characters were left out of "
            "this request to fit the model's context window …]"
        )
        text = f"{text[:SHORT_RESULT_CHARS]}\n\n{note}\n\n{text[-SHORT_RESULT_CHARS:]}"
    if result_images(part):
        text += "\n\n[Its images were left out of this request to fit the model's context window.]"
    short = ToolCallPart(
        part.tool_call_id,
        part.tool_name,
        part.arguments,
        state=part.state,
        provider_executed=part.provider_executed,
        provider=part.provider,
        provider_data=part.provider_data,
    )
    short.outcome = ToolOutcome.success(text=text) if outcome.ok else ToolOutcome.failure(text, retryable=False)
    return short


def with_parts(message: Message, parts: list[Any]) -> Message:
    """A copy of ``message`` (same id, role, status) with other parts, for one request."""
    return Message(
        message.role,
        parts,
        id=message.id,
        status=message.status,
        finish_reason=message.finish_reason,
        usage=message.usage,
        error=message.error,
        created_at=message.created_at,
    )


def left_out_note(left: Sequence[Message], turns: int, shortened: int) -> str:
    """What the model is told about what this request leaves out."""
    said = []
    if left:
        first, last = (when(m.created_at) for m in (left[0], left[-1]))
        span = f"from {first} to {last}" if first != last else f"from {first}"
        turned = f"{turns:,} turn{'s' if turns != 1 else ''}"
        said.append(f"leaves out its {len(left):,} oldest messages ({turned}, {span})")
    if shortened:
        said.append(f"shortens {shortened:,} older tool result{'s' if shortened != 1 else ''} (each says where)")
    return (
        "[Note from the chat application, not the person: this conversation is longer than the model's context "
        f"window, so this request {' and '.join(said)}. The person still sees all of it; if something from that part "
        "matters, ask them for it.]"
    )


def when(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, tz=datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# --- a request ----------------------------------------------------------------------------------------------------


def window_of(request: ChatRequest, profile: TransportProfile) -> int | None:
    """The context window a request is fitted to: ``RequestOptions.context_window``, else the one the transport's
    profile declares (the model's known limit), else ``None`` (not known: nothing is shortened)."""
    if request.options.context_window is not None:
        return request.options.context_window
    return profile.context_window


def output_reserve(request: ChatRequest, profile: TransportProfile, window: int) -> int:
    """The output a request leaves room for: ``max_tokens`` (the request's, else the transport's declared output
    limit), else :data:`DEFAULT_OUTPUT_RESERVE` (at most a quarter of the window)."""
    asked = request.options.max_tokens or profile.max_output_tokens
    if asked is not None:
        return asked
    return min(DEFAULT_OUTPUT_RESERVE, window // 4)


def overhead_tokens(request: ChatRequest, profile: TransportProfile, window: int) -> int:
    """What ``request`` takes besides its messages (see :func:`request_overhead`), with room for the output."""
    return request_overhead(
        request.tools,
        system_prompt=request.options.system_prompt,
        output_schema=request.output_schema,
        output=output_reserve(request, profile, window),
    )


def fitted_request(
    request: ChatRequest,
    *,
    budget: int,
    overhead: int,
    window: int,
    current_start: int,
    estimates: HistoryTokens | None,
) -> tuple[ChatRequest, ContextCut | None, Fitted]:
    """``request`` with its messages fitted to ``budget`` tokens, how it was cut (reported against ``window``), and
    the fit itself."""
    fitted = fit_messages(
        request.messages,
        current_start=current_start,
        budget=budget,
        max_result_chars=request.options.max_tool_result_chars,
        estimates=estimates,
    )
    if not fitted.cut:
        return request, None, fitted
    cut = ContextCut(
        first_sent_id=fitted.messages[0].id if fitted.messages else None,
        left_out_messages=fitted.left_out,
        left_out_turns=fitted.left_out_turns,
        shortened_results=fitted.shortened,
        left_out_tokens=fitted.left_out_tokens,
        sent_tokens=fitted.tokens + overhead,
        window=window,
    )
    return dataclasses.replace(request, messages=fitted.messages), cut, fitted


def fit_request(
    request: ChatRequest,
    *,
    window: int,
    profile: TransportProfile,
    current_start: int,
    estimates: HistoryTokens | None = None,
) -> tuple[ChatRequest, ContextCut | None]:
    """``request`` fitted to ``window`` tokens (its messages shortened, see :func:`fit_messages`; ``estimates``: the
    conversation's, kept from its earlier requests), and how it was cut (``None``: it carries the whole history); the
    room for the output as the transport's ``profile`` declares it."""
    overhead = overhead_tokens(request, profile, window)
    fitted, cut, _ = fitted_request(
        request,
        budget=window - overhead,
        overhead=overhead,
        window=window,
        current_start=current_start,
        estimates=estimates,
    )
    return fitted, cut


def request_tokens(request: ChatRequest, profile: TransportProfile, window: int) -> int:
    """A request's estimated tokens (its messages, tools, system prompt and room for the output)."""
    return overhead_tokens(request, profile, window) + messages_tokens(request)


def messages_tokens(request: ChatRequest) -> int:
    """The estimated tokens of a request's messages, its tool results as the transports send them."""
    limit = request.options.max_tool_result_chars
    return sum(message_tokens(m, max_result_chars=limit) for m in request.messages)


def retry_window(error: ContextTooLongError, sent: int) -> int:
    """What (by this module's estimate) a request is fitted to again after the provider refused one of about
    ``sent`` estimated tokens as too long: scaled by what the provider counted against its limit (with a tenth to
    spare), or half of ``sent`` when it did not say."""
    if error.tokens and error.limit and error.tokens > error.limit:
        return max(1, int(sent * error.limit / error.tokens * 0.9))
    return max(1, sent // 2)


def refit_request(
    request: ChatRequest,
    refused: ChatRequest,
    error: ContextTooLongError,
    *,
    window: int | None,
    profile: TransportProfile,
    current_start: int,
    estimates: HistoryTokens | None = None,
) -> tuple[ChatRequest, ContextCut | None] | None:
    """What to send after the provider refused ``refused`` (``request`` as it was fitted, or whole) as too long:
    ``request`` fitted again, and how it was cut; ``None`` when sending again is no use.

    The refused request's size is scaled by what the provider counted (:func:`retry_window`), and all of the cut
    comes out of the messages: the tools, the system prompt and the room for the output stay as they were sent
    (the output's room is not sized again for a smaller window, which would give the messages back room). Sending
    again is no use when it would carry no less than the refused request, or when the provider said its sizes and
    the current turn, which is always sent whole, is past them by itself.

    Args:
        request: The request before it was fitted (the whole history).
        refused: What was sent and refused.
        error: The provider's refusal (its sizes, when it said).
        window: The context window the request was fitted to (``None``: not known).
        profile: What the transport declares (its output limit sizes the room for the output).
        current_start: Where the current turn begins in ``request.messages``.
        estimates: The conversation's estimates, kept from its earlier requests (:class:`HistoryTokens`).
    """
    overhead = overhead_tokens(request, profile, window or 0)
    refused_messages = messages_tokens(refused)
    scaled = retry_window(error, overhead + refused_messages)
    again, cut, fitted = fitted_request(
        request,
        budget=scaled - overhead,
        overhead=overhead,
        window=scaled,
        current_start=current_start,
        estimates=estimates,
    )
    sized = bool(error.tokens and error.limit and error.tokens > error.limit)
    if fitted.tokens >= refused_messages or (sized and not fitted.fits):
        return None
    return again, cut


def too_long_error(
    error: ContextTooLongError, *, sent: int, window: int | None, shortened: bool, alone: bool = False
) -> str:
    """The reply's error when the provider refused a request as too long: again, after it was ``shortened``; or
    when sending it again was no use because the current turn is too long by itself (``alone``, see
    :func:`refit_request`)."""
    counted = ""
    if error.tokens is not None and error.limit is not None:
        counted = f" (the provider counted {error.tokens:,} tokens, its limit is {error.limit:,})"
    against = f" against a context window of {window:,} tokens" if window is not None else ""
    again = "even shortened, " if shortened else ""
    if alone:
        what = (
            "and it is too long by itself: leaving out earlier messages would not make it fit. Send less in one "
            "turn (a smaller attachment; a tool that returns less, or a smaller "
            "RequestOptions(max_tool_result_chars=...))"
        )
    else:
        what = "Start a new conversation, or set a smaller RequestOptions(context_window=...)"
    return (
        f"The conversation is too long for the model's context window: {again}the request was about {sent:,} tokens "
        f"by the session's estimate{counted}{against}, and the current turn is always sent whole"
        f"{', ' if alone else '. '}{what}. The provider said: {error}"
    )
