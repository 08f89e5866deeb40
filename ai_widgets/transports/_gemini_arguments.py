"""Writing a function call's arguments as JSON text from Vertex AI's streamed partial arguments (each a JSON path and a
value, strings in pieces), in the order they come, so they stream key by key like any provider's arguments."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ai_widgets.transports._errors import ProviderError

__all__ = ["LABEL", "ArgumentsWriter"]

#: The provider's name in messages.
LABEL = "Gemini"

PATH_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


def json_path(path: Any) -> tuple[str | int, ...] | None:
    """The steps of a JSON path such as ``$.a.b[0]`` or ``$['a b']``, or ``None`` when it is not one."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = PATH_STEP.match(path, position)
        if match is None:
            return None
        name, index, single, double = match.groups()
        steps.append(int(index) if index is not None else next(s for s in (name, single, double) if s is not None))
        position = match.end()
    return tuple(steps) or None


class Container:
    __slots__ = ("array", "count", "keys", "path")

    def __init__(self, path: tuple[str | int, ...], array: bool) -> None:
        self.path = path
        self.array = array
        self.count = 0
        self.keys: set[str] = set()


class ArgumentsWriter:
    """Writes a call's arguments as JSON text from Vertex AI's streamed partial arguments (a JSON path and a value
    each, strings in pieces), in the order they come, so they stream key by key like any provider's arguments.

    Paths come in the order the model writes the JSON; one that goes back into a member already written cannot be
    written as JSON text and is a :class:`ProviderError`.
    """

    __slots__ = ("_containers", "_name", "_open_string")

    def __init__(self, name: str) -> None:
        self._name = name
        self._containers: list[Container] = []
        self._open_string: tuple[str | int, ...] | None = None

    def feed(self, argument: Any) -> str:
        path = json_path(getattr(argument, "json_path", None))
        if path is None:
            raise ProviderError(
                f"{LABEL} streamed an argument of {self._name} at a path that is not a JSON path: "
                f"{getattr(argument, 'json_path', None)!r:.100}"
            )
        string = argument.string_value
        more = bool(argument.will_continue)
        out: list[str] = []
        if not self._containers:
            self._containers.append(Container((), array=False))
            out.append("{")
        if self._open_string is not None:
            if path == self._open_string:
                if string:
                    out.append(escape(string))
                if not more:
                    out.append('"')
                    self._open_string = None
                return "".join(out)
            out.append('"')
            self._open_string = None
        parent, leaf = path[:-1], path[-1]
        containers = self._containers
        while len(containers) > 1 and parent[: len(containers[-1].path)] != containers[-1].path:
            out.append("]" if containers.pop().array else "}")
        for depth in range(len(containers[-1].path), len(parent)):
            step = parent[depth]
            following = parent[depth + 1] if depth + 1 < len(parent) else leaf
            out.append(self._member(containers[-1], step, path))
            opened = Container(parent[: depth + 1], array=isinstance(following, int))
            containers.append(opened)
            out.append("[" if opened.array else "{")
        out.append(self._member(containers[-1], leaf, path))
        if string is not None:
            out.append('"' + escape(string))
            if more:
                self._open_string = path
            else:
                out.append('"')
        elif argument.bool_value is not None:
            out.append("true" if argument.bool_value else "false")
        elif argument.number_value is not None:
            out.append(number(argument.number_value))
        else:
            out.append("null")
        return "".join(out)

    def close(self) -> str:
        """The text that completes the arguments (``{}`` when none came)."""
        if not self._containers:
            return "{}"
        out = ['"'] if self._open_string is not None else []
        self._open_string = None
        while self._containers:
            out.append("]" if self._containers.pop().array else "}")
        return "".join(out)

    def _member(self, container: Container, step: str | int, path: tuple[str | int, ...]) -> str:
        if container.array:
            valid = isinstance(step, int) and step == container.count
        else:
            valid = isinstance(step, str) and step not in container.keys
            if valid:
                container.keys.add(str(step))
        if not valid:
            shown = "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path)
            raise ProviderError(
                f"{LABEL} streamed the arguments of {self._name} out of order (at {shown}); they cannot be read"
            )
        # The spacing of json.dumps, as the arguments of a call that came whole are written.
        separator = ", " if container.count else ""
        container.count += 1
        return separator if container.array else f"{separator}{json.dumps(step, ensure_ascii=False)}: "


def escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def number(value: float) -> str:
    if not math.isfinite(value):
        return "null"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return json.dumps(value)
