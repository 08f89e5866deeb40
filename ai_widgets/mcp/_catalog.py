"""Asking an MCP server for what it offers besides tools: :class:`Catalog` lists and reads its resources, lists and
renders its prompts, on the server's own loop (through the connection's ``run``), connecting first if needed and
reading every page of a listing, and reads the SDK's answers into the typed values of :mod:`ai_widgets.mcp._offers`.
Every failure becomes an :class:`~ai_widgets.mcp.MCPServerError` naming the server (or a ``TypeError`` for arguments
that are wrong before anything is sent).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ai_widgets._safe import redact, safe_text
from ai_widgets.mcp._apps import AppPage, app_page
from ai_widgets.mcp._base import MAX_PAGES, MCPServerError
from ai_widgets.mcp._connection import Connection
from ai_widgets.mcp._link import Link
from ai_widgets.mcp._offers import (
    MCPPrompt,
    MCPResource,
    MCPResourceTemplate,
    PromptArgument,
    PromptContent,
    PromptLink,
    PromptMedia,
    PromptMessage,
    PromptText,
    RenderedPrompt,
    ResourceBlob,
    ResourceContents,
    ResourceRead,
    ResourceText,
    check_prompt_arguments,
)

__all__ = ["Catalog"]

R = TypeVar("R")
#: Characters of a server's own error message shown in ours.
SHOWN_CHARS = 300


class Catalog:
    """Asks one server for its resources and prompts, on its connection (its name, its timeout, its loop).

    :class:`~ai_widgets.mcp.MCPServer` holds one and hands its :meth:`resources`, :meth:`resource_templates`,
    :meth:`read`, :meth:`read_app`, :meth:`prompts` and :meth:`prompt` to it (their documentation is there).

    Args:
        connection: The server's connection (opened on first use, reused, reopened after a close).
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def resources(self) -> list[MCPResource]:
        """Every page of ``resources/list``, as typed values (:meth:`~ai_widgets.mcp.MCPServer.resources`)."""
        return await self._request("list its resources", self._resources_here)

    async def resource_templates(self) -> list[MCPResourceTemplate]:
        """Every page of ``resources/templates/list``, as typed values
        (:meth:`~ai_widgets.mcp.MCPServer.resource_templates`)."""
        return await self._request("list its resource templates", self._templates_here)

    async def read(self, uri: str) -> ResourceRead:
        """One resource's contents (``resources/read``), as typed values (:meth:`~ai_widgets.mcp.MCPServer.read`)."""
        if not isinstance(uri, str) or not uri.strip():
            raise TypeError(f"server.read needs a resource URI (a non-empty string), not {uri!r}")

        async def here(link: Link) -> ResourceRead:
            if link.client.server_capabilities.resources is None:
                raise MCPServerError(f"the MCP server {self._connection.name!r} offers no resources (so none at {uri})")
            try:
                result = await link.client.read_resource(uri)
            except Exception as exc:
                raise self._refused(exc, f"read {uri}", unknown=f"has no resource {uri}") from None
            contents = tuple(contents_from(item, self._connection.name) for item in result.contents)
            if not contents:
                raise MCPServerError(f"the MCP server {self._connection.name!r} gave nothing for {uri}")
            return ResourceRead(uri=uri, server=self._connection.name, contents=contents)

        return await self._request(f"read {uri}", here)

    async def read_app(self, uri: str) -> AppPage:
        """An MCP App's page, or why it cannot be shown (:meth:`~ai_widgets.mcp.MCPServer.read_app`)."""
        if not isinstance(uri, str) or not uri.startswith("ui://"):
            raise TypeError(f"server.read_app needs a ui:// URI, not {uri!r}")

        async def here(link: Link) -> AppPage:
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
        """Every page of ``prompts/list``, as typed values (:meth:`~ai_widgets.mcp.MCPServer.prompts`)."""
        return await self._request("list its prompts", self._prompts_here)

    async def prompt(self, name: str, /, **arguments: str) -> RenderedPrompt:
        """One prompt rendered (``prompts/get``), its arguments checked against its listing first
        (:meth:`~ai_widgets.mcp.MCPServer.prompt`)."""
        for key, value in arguments.items():
            if not isinstance(value, str):
                raise TypeError(f"the argument {key!r} of a prompt must be a string, not {type(value).__name__}")

        async def here(link: Link) -> RenderedPrompt:
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
                    content=prompt_content_from(message.content, self._connection.name),
                )
                for message in result.messages
            )
            return RenderedPrompt(
                name=name, server=self._connection.name, description=short_text(result.description), messages=messages
            )

        return await self._request(f"render its prompt {name!r}", here)

    # --- on the server's loop -------------------------------------------------------------------------------------

    async def _request(self, what: str, here: Callable[[Link], Awaitable[R]]) -> R:
        async def run() -> R:
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

    async def _pages(self, link: Link, fetch: Any, attribute: str, what: str) -> list[Any]:
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                page = await fetch(cursor=cursor)
            except Exception as exc:
                raise self._refused(exc, what) from None
            listed.extend(getattr(page, attribute))
            cursor = page.next_cursor
            if cursor is None:
                break
        return listed

    async def _resources_here(self, link: Link) -> list[MCPResource]:
        if link.client.server_capabilities.resources is None:
            return []
        listed = await self._pages(link, link.client.list_resources, "resources", "list its resources")
        return [resource_from(spec) for spec in listed]

    async def _templates_here(self, link: Link) -> list[MCPResourceTemplate]:
        if link.client.server_capabilities.resources is None:
            return []
        fetch = link.client.list_resource_templates
        listed = await self._pages(link, fetch, "resource_templates", "list its resource templates")
        return [template_from(spec) for spec in listed]

    async def _prompts_here(self, link: Link) -> list[MCPPrompt]:
        if link.client.server_capabilities.prompts is None:
            return []
        listed = await self._pages(link, link.client.list_prompts, "prompts", "list its prompts")
        return [prompt_from(spec) for spec in listed]

    def _refused(self, exc: BaseException, what: str, *, unknown: str | None = None) -> MCPServerError:
        """The error for a request the server refused or could not answer: "has no ..." for an invalid-params
        refusal of a name or URI, else the server's own message."""
        code = getattr(exc, "code", None)
        said = redact(safe_text(str(getattr(exc, "message", None) or exc)))[:SHOWN_CHARS]
        if unknown is not None and code == -32602:
            return MCPServerError(f"the MCP server {self._connection.name!r} {unknown} ({said})")
        if isinstance(exc, MCPServerError):
            return exc
        return MCPServerError(
            f"the MCP server {self._connection.name!r} could not {what}: {type(exc).__name__}: {said}"
        )


# --- from the SDK's models ----------------------------------------------------------------------------------------


def short_text(value: Any, limit: int = 2000) -> str | None:
    return safe_text(value)[:limit] if isinstance(value, str) and value else None


def resource_from(spec: Any) -> MCPResource:
    size = getattr(spec, "size", None)
    return MCPResource(
        uri=safe_text(spec.uri),
        name=safe_text(spec.name),
        title=short_text(spec.title),
        description=short_text(spec.description),
        mime_type=short_text(spec.mime_type, 200),
        size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
    )


def template_from(spec: Any) -> MCPResourceTemplate:
    return MCPResourceTemplate(
        uri_template=safe_text(spec.uri_template),
        name=safe_text(spec.name),
        title=short_text(spec.title),
        description=short_text(spec.description),
        mime_type=short_text(spec.mime_type, 200),
    )


def contents_from(item: Any, server: str) -> ResourceContents:
    uri, mime_type = safe_text(item.uri), short_text(item.mime_type, 200)
    blob = getattr(item, "blob", None)
    if isinstance(blob, str):
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise MCPServerError(f"the MCP server {server!r} sent {uri} as a blob that is not base64") from None
        return ResourceBlob(uri=uri, data=data, mime_type=mime_type)
    return ResourceText(uri=uri, text=safe_text(item.text), mime_type=mime_type)


def prompt_from(spec: Any) -> MCPPrompt:
    arguments = tuple(
        PromptArgument(
            name=safe_text(argument.name),
            title=short_text(argument.title),
            description=short_text(argument.description),
            required=argument.required is True,
        )
        for argument in spec.arguments or ()
    )
    return MCPPrompt(
        name=safe_text(spec.name),
        title=short_text(spec.title),
        description=short_text(spec.description),
        arguments=arguments,
    )


def prompt_content_from(content: Any, server: str) -> PromptContent:
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
            return PromptLink(resource_from(content))
        case "resource":
            return contents_from(content.resource, server)
        case other:
            raise MCPServerError(f"the MCP server {server!r} sent a prompt message of an unknown kind {other!r}")
