"""The tools a session offers: registered tools, and sources of tools (MCP servers) listed before each request."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, overload, runtime_checkable

from ai_widgets.tools._definition import ToolDefinition
from ai_widgets.tools._display import registry_html
from ai_widgets.tools._live import announce, track
from ai_widgets.tools._tool import Tool

__all__ = ["ToolRegistry", "ToolSource"]

RegistryListener = Callable[["ToolRegistry"], None]

logger = logging.getLogger("ai_widgets")


@runtime_checkable
class ToolSource(Protocol):
    """A source of tools that may change, such as an MCP server (:class:`ai_widgets.mcp.MCPServer`).

    Added to a registry with :meth:`ToolRegistry.add` (or in ``tools=[...]``), it is asked for its tools before
    every request (:meth:`ToolRegistry.refresh`); it keeps its own cache, so asking is cheap when nothing changed.
    """

    async def list_tools(self) -> Sequence[Tool]:
        """The source's tools as they are now.

        Raises:
            Exception: They cannot be listed (say which source, and why: the turn shows it as its error).
        """
        ...


class ToolRegistry:
    """The tools a session can call: a case-insensitive map from name to tool.

    It may change while a session runs (re-running the cell that defines a tool replaces it); the session reads
    it on every request. Sources of tools (:class:`ToolSource`, such as an MCP server) are asked for their tools
    before every request (:meth:`refresh`); between two refreshes the registry holds what they last listed.

    Args:
        tools: The tools, functions and sources of tools to start with (or another registry's).
        warn_when_kept: Whether a tool of a name held here, defined again in another place (and so not taken here:
            see :class:`ToolReplacementWarning`), is reported in that warning. ``run_tool``'s registries, which
            hold the one tool a person runs by hand, say nothing: the warning is about the tools a chat uses.
    """

    def __init__(
        self,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any] | ToolSource] | None = None,
        *,
        warn_when_kept: bool = True,
    ) -> None:
        self.warn_when_kept = warn_when_kept
        self._tools: dict[str, Tool] = {}
        self._listeners: list[RegistryListener] = []
        self._sources: list[ToolSource] = []
        # The sources' tools as the last refresh listed them: name (casefolded) -> (tool, its source).
        self._listed: dict[str, tuple[Tool, ToolSource]] = {}
        # Names a source lists that a registered tool has (the registered one wins), as last said: said once each.
        self._shadowed: set[tuple[int, str]] = set()
        track(self)  # weakly: re-running the cell that defines a tool replaces it here (ai_widgets.tools._live)
        if isinstance(tools, ToolRegistry):
            tools = [*tools._tools.values(), *tools._sources]
        for item in tools or ():
            self.add(item)

    def add(self, item: Tool | Callable[..., Any] | ToolSource, /) -> Tool | ToolSource:
        """Adds a tool, a function (made a tool with default options) or a source of tools (an MCP server).

        A source's tools are listed before every request (:meth:`refresh`), so they follow the source's changes.

        Returns:
            The registered tool, or the source.
        """
        if isinstance(item, ToolSource) and not isinstance(item, Tool):
            if not any(source is item for source in self._sources):
                self._sources.append(item)
                self._changed()
            return item
        return self.register(item)

    def remove(self, source: ToolSource, /) -> None:
        """Removes a source of tools (its tools go with it).

        Raises:
            KeyError: The source was not added.
        """
        if not any(s is source for s in self._sources):
            raise KeyError(f"{source!r} is not a source of this registry")
        self._sources = [s for s in self._sources if s is not source]
        self._listed = {key: entry for key, entry in self._listed.items() if entry[1] is not source}
        self._changed()

    @property
    def sources(self) -> list[ToolSource]:
        """The sources of tools added (MCP servers), in order."""
        return list(self._sources)

    async def refresh(self) -> None:
        """Asks every source for its tools again; the session calls it before each request.

        A source caches its listing, so this is cheap when nothing changed. Listeners are told when the tools
        changed.

        Raises:
            Exception: A source could not list its tools (its error says which and why).
            ValueError: Two sources would offer tools of one name (give one of them a prefix).

        A source's tool named like a registered tool is not offered: the registered tool (this kernel's own code)
        wins, and a warning names both, once.
        """
        sources = list(self._sources)
        if not sources and not self._listed:
            return
        listings = await asyncio.gather(*(source.list_tools() for source in sources), return_exceptions=True)
        for listing in listings:
            if isinstance(listing, BaseException):
                raise listing
        listed: dict[str, tuple[Tool, ToolSource]] = {}
        shadowed: set[tuple[int, str]] = set()
        for source, tools in zip(sources, listings, strict=True):
            assert not isinstance(tools, BaseException)
            for item in tools:
                key = item.name.casefold()
                if key in self._tools:
                    shadowed.add((id(source), key))
                    if (id(source), key) not in self._shadowed:
                        logger.warning(
                            "ai_widgets: the tool %r of %r is not offered: the registered tool %r has its name and "
                            "wins (give the source a prefix, or rename the registered tool, to offer both)",
                            item.name,
                            source,
                            self._tools[key].name,
                        )
                    continue
                if key in listed:
                    raise ValueError(
                        f"the tool name {item.name!r} is offered by both {listed[key][1]!r} and {source!r}: "
                        "give one of them a prefix"
                    )
                listed[key] = (item, source)
        before = [entry[0].definition for entry in self._listed.values()]
        self._listed = listed
        self._shadowed = shadowed
        if [entry[0].definition for entry in listed.values()] != before:
            self._changed()

    def register(self, item: Tool | Callable[..., Any], /) -> Tool:
        """Adds a tool (or a function, made a tool with default options), replacing one of the same name.

        Returns:
            The registered tool.
        """
        registered = item if isinstance(item, Tool) else Tool.from_function(item)
        self._tools[registered.name.casefold()] = registered
        self._changed()
        return registered

    @overload
    def tool(self, fn: Callable[..., Any], /) -> Tool: ...

    @overload
    def tool(self, fn: None = None, /, **options: Any) -> Callable[[Callable[..., Any]], Tool]: ...

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Tool | Callable[..., Tool]:
        """Like :func:`tool`, and registers the tool here as it is defined (replacing one of its name here, wherever
        that one was defined; other registries get it as ``@tool`` would give it to them)."""

        def decorate(function: Callable[..., Any]) -> Tool:
            made = self.register(Tool.from_function(function, **options))
            announce(made, skip=self)
            return made

        return decorate(fn) if fn is not None else decorate

    def unregister(self, name: str, /) -> Tool:
        """Removes a tool by name (any case).

        Raises:
            KeyError: No tool has that name.
        """
        try:
            removed = self._tools.pop(name.casefold())
        except KeyError:
            raise KeyError(
                f"no tool named {name!r} is registered (have: {', '.join(self.names()) or 'none'})"
            ) from None
        self._changed()
        return removed

    def get(self, name: str, /) -> Tool | None:
        """The tool with this name in any case, or ``None``."""
        key = name.casefold()
        found = self._tools.get(key)
        if found is None and key in self._listed:
            return self._listed[key][0]
        return found

    def __getitem__(self, name: str) -> Tool:
        found = self.get(name)
        if found is None:
            raise KeyError(f"no tool named {name!r} is registered (have: {', '.join(self.names()) or 'none'})")
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name.casefold() in self._tools or name.casefold() in self._listed)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def _all(self) -> list[Tool]:
        """The registered tools in registration order, then the sources' tools as last listed."""
        # A tool registered since the last refresh takes its name from a source's tool at once.
        listed = (entry[0] for key, entry in self._listed.items() if key not in self._tools)
        return [*self._tools.values(), *listed]

    def names(self) -> list[str]:
        """The tools' names, as registered (the sources' tools as last listed come after)."""
        return [t.name for t in self._all()]

    def definitions(self) -> list[ToolDefinition]:
        """The definitions of every tool, in registration order (the sources' tools as last listed come after)."""
        return [t.definition for t in self._all()]

    def subscribe(self, listener: RegistryListener) -> Callable[[], None]:
        """Calls ``listener(registry)`` after every change (an exception it raises is logged, not raised); returns a
        function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _replace_live(self, new: Tool) -> None:
        """Puts a tool defined again in the place of the one of its name (:func:`ai_widgets.tools._live.announce`)."""
        self._tools[new.name.casefold()] = new
        self._changed()

    def _changed(self) -> None:
        # Every listener is told, whatever another one does: a listener that raises (a closed widget's, a bug) is
        # logged, as a session's observers are, and never undoes the change or stops a cell that defines a tool.
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:
                logger.exception("an ai_widgets tool registry listener failed")

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"

    def _repr_html_(self) -> str:
        """The tools as a notebook shows a registry: icon, name, title, risk, whether a call asks for approval,
        description, the parameters as a tree, and each tool's warnings (:func:`ai_widgets.tools._display.registry_html`)."""
        return registry_html(list(self))
