"""What an MCP server offers besides tools: its resources (listed, templates, read) and prompts (listed, rendered),
as typed values, and a resource's contents as parts of a message (``send(..., attach=server_read_result)``).

The methods live on :class:`_Offers`, a base of :class:`~ai_widgets.mcp.MCPServer`: each runs on the server's own
loop (through the connection's ``run``), connects first if needed, reads every page of a listing, and turns every
failure into an :class:`~ai_widgets.mcp.MCPServerError` naming the server (or a ``TypeError`` for arguments that
are wrong before anything is sent).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

from ai_widgets._rich import bounded
from ai_widgets._safe import redact, safe_text
from ai_widgets.attachments import DEFAULT_MAX_CHARS, AttachmentPart, File, attachment_parts, register_converter
from ai_widgets.mcp._apps import AppPage, app_page
from ai_widgets.mcp._base import _MAX_PAGES, MCPServerError
from ai_widgets.mcp._connection import _Connection
from ai_widgets.mcp._link import _Link
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

_R = TypeVar("_R")
#: Characters of a server's own error message shown in ours.
_SHOWN = 300


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
                return attachment_parts(File(data, mime_type))
            case PromptLink(resource=resource):
                said = ", ".join(x for x in (resource.name, resource.mime_type) if x)
                return [TextPart(f"Resource <{resource.uri}> ({said}) from the MCP server `{self.server}`")]
            case ResourceText() | ResourceBlob():
                return _item_parts(content, self.server)


# --- from the SDK's models ----------------------------------------------------------------------------------------


def _text(value: Any, limit: int = 2000) -> str | None:
    return safe_text(value)[:limit] if isinstance(value, str) and value else None


def _resource(spec: Any) -> MCPResource:
    size = getattr(spec, "size", None)
    return MCPResource(
        uri=safe_text(spec.uri),
        name=safe_text(spec.name),
        title=_text(spec.title),
        description=_text(spec.description),
        mime_type=_text(spec.mime_type, 200),
        size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
    )


def _template(spec: Any) -> MCPResourceTemplate:
    return MCPResourceTemplate(
        uri_template=safe_text(spec.uri_template),
        name=safe_text(spec.name),
        title=_text(spec.title),
        description=_text(spec.description),
        mime_type=_text(spec.mime_type, 200),
    )


def _contents(item: Any, server: str) -> ResourceContents:
    uri, mime_type = safe_text(item.uri), _text(item.mime_type, 200)
    blob = getattr(item, "blob", None)
    if isinstance(blob, str):
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise MCPServerError(f"the MCP server {server!r} sent {uri} as a blob that is not base64") from None
        return ResourceBlob(uri=uri, data=data, mime_type=mime_type)
    return ResourceText(uri=uri, text=safe_text(item.text), mime_type=mime_type)


def _prompt(spec: Any) -> MCPPrompt:
    arguments = tuple(
        PromptArgument(
            name=safe_text(argument.name),
            title=_text(argument.title),
            description=_text(argument.description),
            required=argument.required is True,
        )
        for argument in spec.arguments or ()
    )
    return MCPPrompt(
        name=safe_text(spec.name), title=_text(spec.title), description=_text(spec.description), arguments=arguments
    )


def _prompt_content(content: Any, server: str) -> PromptContent:
    match getattr(content, "type", None):
        case "text":
            return PromptText(safe_text(content.text))
        case "image" | "audio":
            try:
                data = base64.b64decode(content.data, validate=True)
            except (binascii.Error, ValueError):
                raise MCPServerError(
                    f"the MCP server {server!r} sent a prompt's {content.type} not as base64"
                ) from None
            return PromptMedia(data=data, mime_type=safe_text(content.mime_type))
        case "resource_link":
            return PromptLink(_resource(content))
        case "resource":
            return _contents(content.resource, server)
        case other:
            raise MCPServerError(f"the MCP server {server!r} sent a prompt message of an unknown kind {other!r}")


# --- the requests -------------------------------------------------------------------------------------------------


class _Offers:
    """The resource and prompt methods of :class:`~ai_widgets.mcp.MCPServer` (its connection, name and timeout)."""

    _connection: _Connection

    async def resources(self) -> list[MCPResource]:
        """The server's resources (every page of ``resources/list``); empty for a server that offers none.

        Raises:
            MCPServerError: The server could not be reached, or its listing failed.
        """
        return await self._request("list its resources", self._resources_here)

    async def resource_templates(self) -> list[MCPResourceTemplate]:
        """The server's resource templates (every page of ``resources/templates/list``): URIs with parameters,
        such as ``notes://{topic}``, to fill in and :meth:`read`; empty for a server that offers none.

        Raises:
            MCPServerError: The server could not be reached, or its listing failed.
        """
        return await self._request("list its resource templates", self._templates_here)

    async def read(self, uri: str) -> ResourceRead:
        """Reads one resource (``resources/read``): a listed resource's URI, or a template's filled in.

        Args:
            uri: The resource's URI.

        Raises:
            TypeError: ``uri`` is not a non-empty string.
            MCPServerError: The server offers no resources, has none at ``uri``, or could not be reached.
        """
        if not isinstance(uri, str) or not uri.strip():
            raise TypeError(f"server.read needs a resource URI (a non-empty string), not {uri!r}")

        async def here(link: _Link) -> ResourceRead:
            if link.client.server_capabilities.resources is None:
                raise MCPServerError(f"the MCP server {self._connection.name!r} offers no resources (so none at {uri})")
            try:
                result = await link.client.read_resource(uri)
            except Exception as exc:
                raise self._refused(exc, f"read {uri}", unknown=f"has no resource {uri}") from None
            contents = tuple(_contents(item, self._connection.name) for item in result.contents)
            if not contents:
                raise MCPServerError(f"the MCP server {self._connection.name!r} gave nothing for {uri}")
            return ResourceRead(uri=uri, server=self._connection.name, contents=contents)

        return await self._request(f"read {uri}", here)

    async def read_app(self, uri: str) -> AppPage:
        """Reads an MCP App's page (the ``ui://`` resource a tool names), for its card: a page that cannot be
        shown (too large, not of the app MIME type, not there) is an :class:`AppPage` whose ``error`` says why.

        Args:
            uri: The app's ``ui://`` URI.

        Raises:
            TypeError: ``uri`` is not a ``ui://`` URI.
        """
        if not isinstance(uri, str) or not uri.startswith("ui://"):
            raise TypeError(f"server.read_app needs a ui:// URI, not {uri!r}")

        async def here(link: _Link) -> AppPage:
            try:
                result = await link.client.read_resource(uri)
            except Exception as exc:
                error = self._refused(exc, f"read {uri}", unknown=f"has no resource {uri}")
                return AppPage(uri, error=f"The app could not be read: {error}.")
            return app_page(uri, result.contents)

        try:
            return await self._request(f"read {uri}", here)
        except MCPServerError as exc:
            return AppPage(uri, error=f"The app could not be read: {exc}.")

    async def prompts(self) -> list[MCPPrompt]:
        """The server's prompts (every page of ``prompts/list``); empty for a server that offers none.

        Raises:
            MCPServerError: The server could not be reached, or its listing failed.
        """
        return await self._request("list its prompts", self._prompts_here)

    async def prompt(self, name: str, /, **arguments: str) -> RenderedPrompt:
        """Renders one prompt (``prompts/get``) with its arguments.

        The prompt is looked up in the server's listing first, so an unknown name, a missing required argument or
        one the prompt does not take is a clear error before anything is asked of the server.

        Args:
            name: The prompt's name (as :meth:`prompts` lists it).
            **arguments: Its arguments, strings (MCP prompt arguments are).

        Raises:
            MCPServerError: The server has no prompt ``name`` (the message lists those it has), or rendering failed.
            TypeError: A required argument is missing, one is not the prompt's, or a value is not a string.
        """
        for key, value in arguments.items():
            if not isinstance(value, str):
                raise TypeError(f"the argument {key!r} of a prompt must be a string, not {type(value).__name__}")

        async def here(link: _Link) -> RenderedPrompt:
            listed = await self._prompts_here(link)
            spec = next((prompt for prompt in listed if prompt.name == name), None)
            if spec is None:
                known = ", ".join(prompt.name for prompt in listed[:30]) or "none"
                raise MCPServerError(
                    f"the MCP server {self._connection.name!r} has no prompt {name!r} (its prompts: {known})"
                )
            check_prompt_arguments(spec, arguments)
            try:
                result = await link.client.get_prompt(name, dict(arguments))
            except Exception as exc:
                raise self._refused(exc, f"render its prompt {name!r}", unknown=f"has no prompt {name!r}") from None
            messages = tuple(
                PromptMessage(
                    role="assistant" if message.role == "assistant" else "user",
                    content=_prompt_content(message.content, self._connection.name),
                )
                for message in result.messages
            )
            return RenderedPrompt(
                name=name, server=self._connection.name, description=_text(result.description), messages=messages
            )

        return await self._request(f"render its prompt {name!r}", here)

    # --- on the server's loop -------------------------------------------------------------------------------------

    async def _request(self, what: str, here: Callable[[_Link], Awaitable[_R]]) -> _R:
        async def run() -> _R:
            import anyio

            link = await self._connection.connect()
            limit = self._connection.timeout
            try:
                with anyio.fail_after(limit):
                    return await here(link)
            except TimeoutError:
                within = f" within {limit:g} s (MCPServer(timeout=...))" if limit is not None else ""
                raise MCPServerError(f"the MCP server {self._connection.name!r} did not {what}{within}") from None

        return await self._connection.run(run())

    async def _pages(self, link: _Link, fetch: Any, attribute: str, what: str) -> list[Any]:
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            try:
                page = await fetch(cursor=cursor)
            except Exception as exc:
                raise self._refused(exc, what) from None
            listed.extend(getattr(page, attribute))
            cursor = page.next_cursor
            if cursor is None:
                break
        return listed

    async def _resources_here(self, link: _Link) -> list[MCPResource]:
        if link.client.server_capabilities.resources is None:
            return []
        listed = await self._pages(link, link.client.list_resources, "resources", "list its resources")
        return [_resource(spec) for spec in listed]

    async def _templates_here(self, link: _Link) -> list[MCPResourceTemplate]:
        if link.client.server_capabilities.resources is None:
            return []
        fetch = link.client.list_resource_templates
        listed = await self._pages(link, fetch, "resource_templates", "list its resource templates")
        return [_template(spec) for spec in listed]

    async def _prompts_here(self, link: _Link) -> list[MCPPrompt]:
        if link.client.server_capabilities.prompts is None:
            return []
        listed = await self._pages(link, link.client.list_prompts, "prompts", "list its prompts")
        return [_prompt(spec) for spec in listed]

    def _refused(self, exc: BaseException, what: str, *, unknown: str | None = None) -> MCPServerError:
        """The error for a request the server refused or could not answer: "has no ..." for an invalid-params
        refusal of a name or URI, else the server's own message."""
        code = getattr(exc, "code", None)
        said = redact(safe_text(str(getattr(exc, "message", None) or exc)))[:_SHOWN]
        if unknown is not None and code == -32602:
            return MCPServerError(f"the MCP server {self._connection.name!r} {unknown} ({said})")
        if isinstance(exc, MCPServerError):
            return exc
        return MCPServerError(
            f"the MCP server {self._connection.name!r} could not {what}: {type(exc).__name__}: {said}"
        )


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


def _resource_parts(read: ResourceRead) -> list[AttachmentPart]:
    parts: list[AttachmentPart] = []
    for item in read.contents:
        parts += _item_parts(item, read.server)
    return parts


def _item_parts(item: ResourceContents, server: str | None = None) -> list[AttachmentPart]:
    kind = f" ({item.mime_type})" if item.mime_type else ""
    origin = f" from the MCP server `{server}`" if server else ""
    match item:
        case ResourceText(uri=uri, text=text):
            body = bounded(text, DEFAULT_MAX_CHARS, "") if text else "(empty)"
            return [TextPart(safe_text(f"Attached resource <{uri}>{kind}{origin}:\n{body}"))]
        case ResourceBlob(uri=uri, data=data, mime_type=mime_type):
            return attachment_parts(File(data, mime_type or "application/octet-stream", name=uri))


register_converter(ResourceRead, _resource_parts)
register_converter(ResourceText, _item_parts)
register_converter(ResourceBlob, _item_parts)
