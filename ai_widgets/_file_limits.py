"""What a provider takes of the files in a request (:class:`AttachmentLimits`, which each transport declares), and
the error for an object that cannot be attached (:class:`AttachmentError`); :mod:`ai_widgets.attachments` exports
both."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ai_widgets._file_part import human_size
from ai_widgets._media import IMAGE_TYPES, PDF_TYPE
from ai_widgets.messages import FilePart, Message, TextPart

__all__ = ["AttachmentError", "AttachmentLimits"]


class AttachmentError(ValueError):
    """An object cannot be attached: no converter takes it, or the provider would refuse the file (the message
    names the limit). Raised before anything is sent and before the message enters the history."""


@dataclass(frozen=True, slots=True)
class AttachmentLimits:
    """What a provider takes of the files in a request; each transport declares its own (``attachment_limits``).

    Attributes:
        provider: The provider's name, for the messages.
        image_types: The image types it takes.
        max_image_bytes: The largest image.
        max_images: The most images in one request (the whole conversation's).
        document_types: The document types it takes (PDF).
        max_document_bytes: The largest document.
        max_total_bytes: The most bytes of inline files in one request (the whole conversation's).
        url_kinds: What may be sent by URL: ``"image"``, ``"document"``.
        max_image_side: The most pixels an image may have on either side, or ``None`` for a provider that scales
            any image down. Read from the image's header; an image whose size cannot be read is not refused for it.
        many_images: In a request that carries more images than this...
        max_image_side_when_many: ...each may have at most this many pixels on either side (``None``: no such rule).
    """

    provider: str
    max_image_bytes: int
    max_images: int
    max_document_bytes: int
    max_total_bytes: int
    image_types: frozenset[str] = IMAGE_TYPES
    document_types: frozenset[str] = frozenset({PDF_TYPE})
    url_kinds: frozenset[str] = frozenset({"image", "document"})
    max_image_side: int | None = None
    many_images: int | None = None
    max_image_side_when_many: int | None = None

    def max_side(self, images: int) -> int | None:
        """The most pixels an image may have on either side in a request that carries ``images`` images
        (``None``: any)."""
        side = self.max_image_side
        if self.many_images is not None and self.max_image_side_when_many is not None and images > self.many_images:
            side = self.max_image_side_when_many if side is None else min(side, self.max_image_side_when_many)
        return side

    def check(self, parts: Iterable[FilePart | TextPart], earlier: Iterable[Message] = ()) -> None:
        """Refuses files the provider would refuse, before anything is sent.

        Args:
            parts: The new message's parts.
            earlier: The conversation so far (its files count against the per-request limits too).

        Raises:
            AttachmentError: A file of a type, size or number the provider refuses; the message names the limit.
        """
        files = [p for p in parts if isinstance(p, FilePart)]
        older = [p for m in earlier for p in m.parts if isinstance(p, FilePart)]
        for part in files:
            self._check_one(part)
        images = [p for p in (*older, *files) if p.media_type in self.image_types]
        if len(images) > self.max_images:
            raise AttachmentError(
                f"{self.provider} takes at most {self.max_images:,} images in one request, and this message would "
                f"make the conversation carry {len(images):,}"
            )
        side = self.max_side(len(images))
        if side is not None and side != self.max_image_side:  # a stricter limit for a request of many images
            for part in images:
                pixels = part.pixels()
                if pixels is not None and max(pixels) > side:
                    raise AttachmentError(
                        f"{self.provider} takes images of at most {side:,} px a side when a request carries more "
                        f"than {self.many_images:,} images, and this message would make the conversation carry "
                        f"{len(images):,}: {part.name or part.media_type} is {_pixels(pixels)}"
                    )
        total = sum(p.size or 0 for p in (*older, *files))
        if total > self.max_total_bytes:
            raise AttachmentError(
                f"{self.provider} takes at most {human_size(self.max_total_bytes)} of files in one request, and this "
                f"message would make the conversation carry {human_size(total)}"
            )

    def kind_of(self, part: FilePart, *, images: int = 0) -> str | None:
        """How the provider takes this file: ``"image"``, ``"document"``, or ``None`` when it would refuse it (its
        type, its size, its pixels in a request of ``images`` images, a URL it cannot fetch). A transport sends a
        refused file as a note saying what it was: a file from a conversation that moved from another provider, or
        from a history file, must not make every later request fail."""
        if self._problem(part):
            return None
        kind = self._kind(part)
        side = self.max_side(images)
        if kind == "image" and side is not None and side != self.max_image_side:
            pixels = part.pixels()
            if pixels is not None and max(pixels) > side:
                return None
        return kind

    def _kind(self, part: FilePart) -> str | None:
        if part.media_type in self.image_types:
            return "image"
        return "document" if part.media_type in self.document_types else None

    def _check_one(self, part: FilePart) -> None:
        problem = self._problem(part)
        if problem is not None:
            raise AttachmentError(problem)

    def _problem(self, part: FilePart) -> str | None:
        label = part.name or part.media_type
        kind = self._kind(part)
        if kind is None:
            taken = ", ".join(sorted(self.image_types | self.document_types))
            return f"{self.provider} does not take {part.media_type} files ({label}); it takes {taken}"
        limit = self.max_image_bytes if kind == "image" else self.max_document_bytes
        if part.url is not None and kind not in self.url_kinds:
            return f"{self.provider} does not take a {kind} by URL ({label}): attach its bytes"
        size = part.size
        if size is not None and size > limit:
            return f"{self.provider} takes {kind}s of at most {human_size(limit)}, and {label} is {human_size(size)}"
        if size == 0:
            return f"{label} is empty: {self.provider} refuses an empty {kind}"
        if kind == "image" and self.max_image_side is not None:
            pixels = part.pixels()
            if pixels is not None and max(pixels) > self.max_image_side:
                return (
                    f"{self.provider} takes images of at most {self.max_image_side:,} px a side, and {label} is "
                    f"{_pixels(pixels)}"
                )
        return None


def _pixels(size: tuple[int, int]) -> str:
    return f"{size[0]:,} x {size[1]:,} px"
