"""``/`` in the input box: the prompts of the session's MCP servers, listed for the view and rendered into messages.

The servers are the :class:`~ai_widgets.mcp.MCPServer` sources among the session's tools (``tools=[...]``,
``registry.add(server)``), asked when the person types ``/`` (so listing never holds up a cell, and follows the
servers' changes). Each prompt is named like the server's tools: ``prefix_name`` for a server with a ``prefix``, its
own name otherwise, and ``server/name`` where two servers would give one name. A server that cannot list is said in
the answer, and the other servers' prompts are still offered.

Rendering looks the name up in the last listing (listing again once for a name it lacks), checks the arguments
(each problem at its field: a required one left empty, one the prompt does not take), asks the server
(``prompts/get``) and gives the rendering's messages (``RenderedPrompt.to_messages``): the caller sends them with
``session.send_messages``. Every failure is a :class:`PromptError` whose message names the prompt and the server.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from ai_widgets._safe import redact, safe_text
from ai_widgets.mcp import MCPPrompt, MCPServer
from ai_widgets.messages import Message
from ai_widgets.session import ChatSession

__all__ = ["PromptCatalog", "PromptError"]

#: The most prompts one answer lists (all servers together), and the most servers' errors it says.
MAX_LISTED = 500
MAX_ERRORS = 20


class PromptError(ValueError):
    """A prompt that cannot be sent: the message says why; ``fields`` says it at the form's fields (argument name
    to problem)."""

    def __init__(self, message: str, fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields = fields or {}


@dataclass(frozen=True, slots=True)
class Listed:
    server: MCPServer
    prompt: MCPPrompt


@dataclass
class PromptCatalog:
    """The prompts of ``session``'s MCP servers, as the view last listed them."""

    session: ChatSession
    _listed: dict[str, Listed] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def servers(self) -> list[MCPServer]:
        """The MCP servers among the session's tools, in the order they were added."""
        return [source for source in self.session.tools.sources if isinstance(source, MCPServer)]

    async def listing(self) -> dict[str, Any]:
        """Lists every server's prompts (concurrently): ``items`` (what the view shows: the name to send, the
        server, title, description and arguments) and ``errors`` (a server that could not list, and why)."""
        servers = self.servers()
        answers = await asyncio.gather(*(server.prompts() for server in servers), return_exceptions=True)
        listed: dict[str, Listed] = {}
        items: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        for server, answer in zip(servers, answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, Exception):
                    raise answer
                errors.append({"server": server.name, "message": said(answer)})
                continue
            for prompt in answer:
                name = shown_name(server, prompt.name, listed)
                if name is None or len(listed) >= MAX_LISTED:
                    continue
                listed[name] = Listed(server, prompt)
                items.append(item(name, server, prompt))
        with self._lock:
            self._listed = listed
        return {"items": items, "errors": errors[:MAX_ERRORS]}

    async def render(self, name: str, arguments: dict[str, str]) -> list[Message]:
        """The messages of prompt ``name`` (as the listing names it) rendered with ``arguments``.

        Raises:
            PromptError: No such prompt, arguments it cannot take (at their fields), or the server failed.
        """
        with self._lock:
            found = self._listed.get(name)
        if found is None:
            await self.listing()  # listed before the server changed, or never in this kernel (a reopened view)
            with self._lock:
                found = self._listed.get(name)
        if found is None:
            with self._lock:
                known = ", ".join(f"/{key}" for key in list(self._listed)[:20]) or "none"
            raise PromptError(f"There is no prompt /{name} (the servers' prompts: {known}).")
        server, prompt = found.server, found.prompt
        check(name, prompt, arguments)
        sent = {key: value for key, value in arguments.items() if value.strip()}  # a blank optional one: not given
        try:
            rendered = await server.prompt(prompt.name, **sent)
        except Exception as exc:
            raise PromptError(f"The prompt /{name} could not be rendered: {said(exc)}") from None
        try:
            return rendered.to_messages()
        except ValueError as exc:
            raise PromptError(f"The prompt /{name} cannot be sent: {said(exc)}") from None


def said(exc: BaseException) -> str:
    """An error's text as the person sees it: UTF-8-safe, secrets redacted (a server's stderr may hold a token)."""
    return redact(safe_text(str(exc) or type(exc).__name__))


def shown_name(server: MCPServer, name: str, taken: dict[str, Listed]) -> str | None:
    shown = f"{server.prefix}_{name}" if server.prefix else name
    if shown not in taken:
        return shown
    qualified = f"{server.name}/{name}"
    return None if qualified in taken else qualified


def item(name: str, server: MCPServer, prompt: MCPPrompt) -> dict[str, Any]:
    return {
        "name": name,
        "server": server.name,
        "title": prompt.title,
        "description": prompt.description,
        "arguments": [
            {
                "name": argument.name,
                "title": argument.title,
                "description": argument.description,
                "required": argument.required,
            }
            for argument in prompt.arguments
        ],
    }


def check(name: str, prompt: MCPPrompt, arguments: dict[str, str]) -> None:
    known = {argument.name for argument in prompt.arguments}
    extra = sorted(key for key in arguments if key not in known)
    if extra:
        takes = ", ".join(sorted(known)) or "no arguments"
        raise PromptError(f"The prompt /{name} takes {takes}, not {', '.join(extra)}.")
    missing = {
        argument.name: "Required."
        for argument in prompt.arguments
        if argument.required and not arguments.get(argument.name, "").strip()
    }
    if missing:
        raise PromptError(f"The prompt /{name} needs {', '.join(missing)}.", missing)
