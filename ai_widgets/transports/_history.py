"""The history as the providers need it: empty assistant messages left out, what the model is told about each call's
result (cut to the request's limit), a call's arguments as valid JSON, a part's provider data when it is this
provider's own, a user message's text and files, and the images of tool results a request can carry
(:class:`ModelImage`, :func:`outcome_images`, :class:`RequestImages`)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ai_widgets._media import IMAGE_TYPES, image_pixels, sniff_image, whole_image
from ai_widgets.attachments import AttachmentLimits
from ai_widgets.messages import FilePart, Message, Role, TextPart, ToolCallPart
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS

__all__ = [
    "IMAGE_RESULT_CHARS",
    "ModelImage",
    "RequestImages",
    "arguments_json",
    "file_note",
    "history",
    "outcome_images",
    "outcome_text",
    "own_data",
    "user_images",
    "user_parts",
]


def own_data(part: Any, provider: str) -> dict[str, Any] | None:
    """A part's ``provider_data`` when it is a dict that ``provider`` stored, else ``None`` (another provider's, or
    none at all): a transport sends back only its own provider's data."""
    data = part.provider_data
    return data if part.provider == provider and isinstance(data, dict) else None


def history(messages: Iterable[Message]) -> Iterator[Message]:
    """The messages a provider should see: empty assistant messages (a reply that has not started) left out."""
    for message in messages:
        if message.role is Role.ASSISTANT and not message.parts:
            continue
        yield message


def user_parts(message: Message) -> list[TextPart | FilePart]:
    """A user message's text (empty text left out) and files, in order."""
    return [p for p in message.parts if isinstance(p, FilePart) or (isinstance(p, TextPart) and p.text)]


def user_images(messages: Iterable[Message], limits: AttachmentLimits) -> int:
    """How many images the person's messages put in a request: those the provider takes, each on its own (a
    provider may limit the pixels of each image more strictly in a request of many)."""
    return sum(
        1
        for message in messages
        if message.role is Role.USER
        for part in message.parts
        if isinstance(part, FilePart) and limits.kind_of(part) == "image"
    )


def file_note(part: FilePart, provider: str) -> str:
    """What the model is told in place of a file its provider would refuse (one from a conversation that moved here
    from another provider, or from a history file): that it was there, and what it was."""
    return f"[A file was attached here that {provider} does not take, so it is left out: {part.describe()}]"


#: What one image of a tool result counts against the result's budget of characters: about what a provider charges
#: for an image (1,500 tokens or so, at 4 characters a token), so a result's images and text together stay near it.
IMAGE_RESULT_CHARS = 6_000


def outcome_text(part: ToolCallPart, limit: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS, *, images: int = 0) -> str:
    """What the model is told about a call's result (every call in a request has an outcome), including that the
    person edited its arguments, when they did; cut in the middle, with a note, when longer than ``limit``
    characters (``RequestOptions.max_tool_result_chars``; the cut is ``ToolCallPart.result_for_model``'s, which the
    session's estimate of a request applies too). Each of the ``images`` the result sends with its text counts
    :data:`IMAGE_RESULT_CHARS` against ``limit``; the text keeps at least half of it."""
    if limit is not None and images:
        limit = max(limit - images * IMAGE_RESULT_CHARS, limit // 2, 1)
    return part.result_for_model(limit)


def arguments_json(part: ToolCallPart) -> str:
    """A call's arguments as valid JSON text for the provider (``{}`` when what the model sent was not JSON)."""
    text = part.arguments.strip()
    if not text:
        return "{}"
    try:
        json.loads(text)
    except ValueError:
        return json.dumps(part.parsed_arguments)
    return text


# --- tool results' images ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelImage:
    """An image of a tool's result as a model can take it: base64 ``data`` of a ``media_type`` the providers accept
    (PNG, JPEG, GIF, WebP), or an http(s) ``url``; ``pixels``: its width and height, when its header says."""

    media_type: str
    data: str | None = None
    url: str | None = None
    pixels: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def data_url(self) -> str:
        """The image as OpenAI's image inputs take it: its URL, or a ``data:`` URL."""
        return self.url if self.url is not None else f"data:{self.media_type};base64,{self.data}"


def outcome_images(part: ToolCallPart, *, max_chars: int) -> list[ModelImage]:
    """The images a call's result gives the model: the image attachments of a successful outcome, in order, then the
    image its display shows (:meth:`ai_widgets.outcome.DisplayBundle.image`: a figure's PNG).

    An attachment goes only when the provider surely takes it, as one that fails would fail every later request of
    the conversation: inline data must be valid base64 of a whole PNG, JPEG, GIF or WebP (its type read from the data,
    so a JPEG labelled ``image/png`` still goes, as JPEG; cut short, empty or only a header, it does not: the
    providers refuse an image they cannot decode) of at most ``max_chars`` base64 characters; a URL must be http(s),
    with a host and no spaces, with one of those types, or a ``data:`` URL. Other attachments (other files, other
    image formats, and those marked ``card_only``) stay on the card only. A call that ran code as a cell gives the
    first images its outputs showed (:meth:`ai_widgets.outcome.CellRun.images`), whether or not the code raised.

    Args:
        part: The call.
        max_chars: The provider's limit on one image, in base64 characters.
    """
    outcome = part.outcome
    if outcome is None:
        return []
    images: list[ModelImage] = []
    if outcome.cell is not None:
        for _, data in outcome.cell.images():
            image = inline_image(data, max_chars)
            if image is not None:
                images.append(image)
    if not outcome.ok:
        return images
    for attachment in outcome.attachments:
        if attachment.card_only or not attachment.mime_type.lower().startswith("image/"):
            continue
        if attachment.data is not None:
            image = inline_image(attachment.data, max_chars)
        else:
            image = linked_image(attachment.url or "", attachment.mime_type, max_chars)
        if image is not None:
            images.append(image)
    shown = outcome.display.image() if outcome.display is not None else None
    if shown is not None:
        image = inline_image(shown[1], max_chars)
        if image is not None:
            images.append(image)
    return images


class RequestImages:
    """The images of tool results that one request carries: the newest first, as long as they fit the provider's
    limits on a whole request (its size, its number of images). Each image that fits on its own
    (:func:`outcome_images`) is not enough: a conversation that gathers images (a screenshot each step) would grow past
    the request's limit, and the provider would then refuse that request and every later one. Older images beyond
    the limits stay on their cards only; the model still has their calls' text. The files people attached to their
    messages count against the same limits first.

    A provider may limit an image's pixels too, and more strictly in a request of many images: an image is carried
    only while every image of the request, the person's included, keeps within the limit for the request's number
    of images. An image whose size cannot be read is not left out for its pixels.

    Args:
        messages: The history the request carries.
        max_chars: The provider's limit on one image, in base64 characters.
        max_total_chars: The most base64 characters of inline images in one request (URLs count nothing here).
        max_count: The most images in one request.
        accept: Which images the provider takes at all (say, not GIF); all by default.
        limits: The provider's limits on files, for their limits on pixels (``max_side``) and which of the person's
            images it takes; ``None`` for a provider that scales any image down.
    """

    __slots__ = ("_chosen",)

    def __init__(
        self,
        messages: Iterable[Message],
        *,
        max_chars: int,
        max_total_chars: int,
        max_count: int,
        accept: Callable[[ModelImage], bool] | None = None,
        limits: AttachmentLimits | None = None,
    ) -> None:
        found: list[tuple[ToolCallPart, list[ModelImage]]] = []
        total = count = largest = 0  # largest: the longest side of an image the request carries, in pixels
        for message in messages:
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    images = [i for i in outcome_images(part, max_chars=max_chars) if accept is None or accept(i)]
                    if images:
                        found.append((part, images))
                elif isinstance(part, FilePart):
                    # A person's attachments always go (they were checked against the provider's limits when
                    # sent): they take their room in the request first.
                    count += 1 if part.media_type.startswith("image/") else 0
                    total += len(part.data or "")
                    if limits is not None and limits.kind_of(part) == "image":  # one it refuses goes as a note
                        largest = max(largest, *(part.pixels() or (0,)))
        self._chosen: dict[int, list[ModelImage]] = {}
        for part, images in reversed(found):  # the newest first
            kept: list[ModelImage] = []
            for image in reversed(images):
                size = len(image.data or "")
                side = max(largest, *(image.pixels or (0,)))
                limit = limits.max_side(count + 1) if limits is not None else None
                if count < max_count and total + size <= max_total_chars and (limit is None or side <= limit):
                    kept.append(image)
                    count += 1
                    total += size
                    largest = side
            self._chosen[id(part)] = kept[::-1]

    def of(self, part: ToolCallPart) -> list[ModelImage]:
        """The images of this call's result that the request carries, in order."""
        return self._chosen.get(id(part), [])


def inline_image(data: str, max_chars: int) -> ModelImage | None:
    if data.startswith("data:"):
        head, comma, data = data.partition(",")
        if not comma or not head.endswith(";base64"):
            return None
    raw = base64_bytes(data, max_chars)
    if raw is None:
        data = "".join(data.split())  # base64 in MIME-style lines (base64.encodebytes)
        raw = base64_bytes(data, max_chars)
        if raw is None:
            return None
    media_type = sniff_image(raw[:16])
    if media_type is None or not whole_image(media_type, raw):
        return None
    return ModelImage(media_type, data=data, pixels=image_pixels(raw))


def base64_bytes(data: str, max_chars: int) -> bytes | None:
    """The bytes of ``data`` when it is valid base64 of at most ``max_chars`` characters, else ``None``."""
    if len(data) > max_chars:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:  # not base64 (binascii.Error), or not ASCII
        return None


def linked_image(url: str, mime_type: str, max_chars: int) -> ModelImage | None:
    if url.startswith("data:"):
        return inline_image(url, max_chars)
    media_type = mime_type.split(";")[0].strip().lower()
    if not url.startswith(("https://", "http://")) or media_type not in IMAGE_TYPES:
        return None
    if any(c.isspace() or ord(c) < 0x20 for c in url):
        return None  # not a URL a provider can fetch (and refuses: "invalid image URL")
    try:
        host = urlsplit(url).hostname
    except ValueError:  # a malformed port or IPv6 address
        return None
    return ModelImage(media_type, url=url) if host else None
