"""What an MCP server offers besides tools, as typed values: its resources (listed, templates, contents read) and
prompts (listed, rendered), and a resource's contents as parts of a message (``send(..., attach=server_read_result)``).

:class:`~ai_widgets.mcp._catalog.Catalog` asks a server for them; these are what it gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from ai_widgets._rich import bounded
from ai_widgets._safe import safe_text
from ai_widgets.attachments import DEFAULT_MAX_CHARS, AttachmentPart, File, object_parts, register_converter
from ai_widgets.messages import Message, Role, TextPart

__all__ = [
    "MCPPrompt",
    "MCPResource",
    "MCPResourceTemplate",
    "PromptArgument",
    "PromptContent",
    "PromptLink",
    "PromptMedia",
    "PromptMessage",
    "PromptText",
    "RenderedPrompt",
    "ResourceBlob",
    "ResourceContents",
    "ResourceRead",
    "ResourceText",
]


# --- the types ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MCPResource:
    """A resource a server lists (``resources/list``); read it with ``await server.read(resource.uri)``.

    Attributes:
        uri: Where it is (``file:///notes.md``, ``docs://guide``).
        name: Its programmatic name.
        title: Its name for people, if the server gave one.
        description: What it is, if the server said.
        mime_type: Its MIME type, if known.
        size: Its size in bytes, if known.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class MCPResourceTemplate:
    """A family of resources a server lists (``resources/templates/list``): fill in its RFC 6570 ``uri_template``
    (``notes://{topic}`` -> ``notes://cats``) and read the URI.

    Attributes:
        uri_template: The URI template.
        name: Its programmatic name.
        title: Its name for people, if the server gave one.
        description: What it gives, if the server said.
        mime_type: The MIME type of every resource it gives, if they share one.
    """

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceText:
    """Text contents of a resource.

    Attributes:
        uri: The resource's URI.
        text: Its text.
        mime_type: Its MIME type, if the server said.
    """

    kind: ClassVar[Literal["text"]] = "text"

    uri: str
    text: str
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceBlob:
    """Binary contents of a resource (an image, a PDF, ...), decoded from the server's base64.

    Attributes:
        uri: The resource's URI.
        data: Its bytes.
        mime_type: Its MIME type, if the server said.
    """

    kind: ClassVar[Literal["blob"]] = "blob"

    uri: str
    data: bytes = field(repr=False)
    mime_type: str | None = None


ResourceContents: TypeAlias = ResourceText | ResourceBlob


@dataclass(frozen=True, slots=True)
class ResourceRead:
    """What ``await server.read(uri)`` gives: the contents of one URI (one or more items: a directory's files, a
    text and its rendering). ``send(..., attach=read)`` attaches it: text as a bounded text part naming the URI, an
    image or a PDF as a file.

    Attributes:
        uri: The URI that was read.
        server: The server's name.
        contents: What it holds, in the server's order.
    """

    uri: str
    server: str
    contents: tuple[ResourceContents, ...]

    @property
    def text(self) -> str:
        """The text items joined (a blob is left out)."""
        return "\n".join(item.text for item in self.contents if isinstance(item, ResourceText))


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """An argument of a prompt (MCP prompt arguments are strings).

    Attributes:
        name: Its name (the keyword of ``server.prompt(name, **arguments)``).
        title: Its name for people, if given.
        description: What it is, if the server said.
        required: Whether the prompt needs it.
    """

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class MCPPrompt:
    """A prompt a server lists (``prompts/list``); render it with ``await server.prompt(name, **arguments)``.

    Attributes:
        name: Its name.
        title: Its name for people, if given.
        description: What it does, if the server said.
        arguments: What it takes.
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class PromptText:
    """Text in a rendered prompt's message."""

    kind: ClassVar[Literal["text"]] = "text"
    text: str


@dataclass(frozen=True, slots=True)
class PromptMedia:
    """An image or audio clip in a rendered prompt's message.

    Attributes:
        data: Its bytes.
        mime_type: Its MIME type (``image/png``, ``audio/wav``).
    """

    kind: ClassVar[Literal["media"]] = "media"
    data: bytes = field(repr=False)
    mime_type: str


@dataclass(frozen=True, slots=True)
class PromptLink:
    """A link to a resource in a rendered prompt's message (read it with ``server.read(link.resource.uri)``)."""

    kind: ClassVar[Literal["link"]] = "link"
    resource: MCPResource


PromptContent: TypeAlias = PromptText | PromptMedia | PromptLink | ResourceText | ResourceBlob


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a rendered prompt.

    Attributes:
        role: ``"user"`` or ``"assistant"``.
        content: What it holds (text, media, a resource link or an embedded resource).
    """

    role: Literal["user", "assistant"]
    content: PromptContent


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """What ``await server.prompt(name, **arguments)`` gives.

    Attributes:
        name: The prompt's name.
        server: The server's name.
        description: The server's description of this rendering, if any.
        messages: The messages, in order.
    """

    name: str
    server: str
    description: str | None
    messages: tuple[PromptMessage, ...]

    @property
    def text(self) -> str:
        """The text of its messages, blank-line separated (what the input box sends): text as it is, an embedded
        text resource's text, a link or a blob as its URI."""
        pieces: list[str] = []
        for message in self.messages:
            match message.content:
                case PromptText(text=text) | ResourceText(text=text):
                    pieces.append(text)
                case ResourceBlob(uri=uri) | PromptLink(resource=MCPResource(uri=uri)):
                    pieces.append(f"<{uri}>")
                case PromptMedia(mime_type=mime_type):
                    pieces.append(f"({mime_type})")
        return "\n\n".join(piece for piece in pieces if piece)

    def to_messages(self) -> list[Message]:
        """The rendering as messages of a conversation, for ``session.send_messages(...)`` (what ``/`` in the input
        box sends): consecutive messages of one role become one message; a user message keeps text as text, an
        image or audio clip as a file, an embedded resource as an attachment naming its URI (a blob as a file) and a
        resource link as a line naming it; an assistant message keeps its text (anything else as in :attr:`text`).
        The last message is the person's: the model answers it, and the ones before it are earlier turns.

        Raises:
            ValueError: The prompt rendered no messages, or it ends with the assistant's (nothing to answer).
        """
        runs: list[tuple[Literal["user", "assistant"], list[PromptContent]]] = []
        for message in self.messages:
            if runs and runs[-1][0] == message.role:
                runs[-1][1].append(message.content)
            else:
                runs.append((message.role, [message.content]))
        if not runs:
            raise ValueError(f"the prompt {self.name!r} of the MCP server {self.server!r} rendered no messages")
        if runs[-1][0] == "assistant":
            raise ValueError(
                f"the prompt {self.name!r} of the MCP server {self.server!r} ends with the assistant's message, "
                "so there is nothing for the model to answer"
            )
        messages: list[Message] = []
        for role, contents in runs:
            if role == "user":
                parts: list[AttachmentPart] = []
                after_text = False  # the last part is the person's text: more text joins it (one text, no chips)
                for content in contents:
                    if isinstance(content, PromptText) and after_text and isinstance(parts[-1], TextPart):
                        parts[-1] = TextPart(f"{parts[-1].text}\n\n{content.text}")
                        continue
                    parts += self._user_parts(content)
                    after_text = isinstance(content, PromptText)
                messages.append(Message(Role.USER, parts))
            else:
                text = RenderedPrompt(
                    self.name, self.server, None, tuple(PromptMessage(role, c) for c in contents)
                ).text
                messages.append(Message(Role.ASSISTANT, [TextPart(text or "(nothing)")]))
        return messages

    def _user_parts(self, content: PromptContent) -> list[AttachmentPart]:
        match content:
            case PromptText(text=text):
                return [TextPart(text)]
            case PromptMedia(data=data, mime_type=mime_type):
                return object_parts(File(data, mime_type))
            case PromptLink(resource=resource):
                said = ", ".join(x for x in (resource.name, resource.mime_type) if x)
                return [TextPart(f"Resource <{resource.uri}> ({said}) from the MCP server `{self.server}`")]
            case ResourceText() | ResourceBlob():
                return item_parts(content, self.server)


def check_prompt_arguments(prompt: MCPPrompt, arguments: dict[str, Any]) -> None:
    """Refuses arguments the prompt cannot take: one missing that it requires, or one it does not have.

    Raises:
        TypeError: Saying which.
    """
    names = {argument.name for argument in prompt.arguments}
    extra = sorted(key for key in arguments if key not in names)
    if extra:
        takes = ", ".join(sorted(names)) or "no arguments"
        raise TypeError(f"the prompt {prompt.name!r} takes {takes}; not {', '.join(extra)}")
    missing = [argument.name for argument in prompt.arguments if argument.required and argument.name not in arguments]
    if missing:
        raise TypeError(f"the prompt {prompt.name!r} needs the argument(s) {', '.join(missing)}")


# --- a resource in a message --------------------------------------------------------------------------------------


def resource_parts(read: ResourceRead) -> list[AttachmentPart]:
    parts: list[AttachmentPart] = []
    for item in read.contents:
        parts += item_parts(item, read.server)
    return parts


def item_parts(item: ResourceContents, server: str | None = None) -> list[AttachmentPart]:
    kind = f" ({item.mime_type})" if item.mime_type else ""
    origin = f" from the MCP server `{server}`" if server else ""
    match item:
        case ResourceText(uri=uri, text=text):
            body = bounded(text, DEFAULT_MAX_CHARS, "") if text else "(empty)"
            return [TextPart(safe_text(f"Attached resource <{uri}>{kind}{origin}:\n{body}"))]
        case ResourceBlob(uri=uri, data=data, mime_type=mime_type):
            return object_parts(File(data, mime_type or "application/octet-stream", name=uri))


register_converter(ResourceRead, resource_parts)
register_converter(ResourceText, item_parts)
register_converter(ResourceBlob, item_parts)
