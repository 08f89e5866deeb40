"""Incremental, lenient parsing of tool-call arguments as they stream from a model.

A model streams a tool call's arguments as JSON object text, a few characters at a time. `StreamingArguments`
consumes each piece once and keeps a best-effort view of the object (`value`, always a ``dict``) plus the list of
changes the last piece made (`last_patches`), so a tool card can fill in key by key while the call is streaming.

The cost of `StreamingArguments.feed` is proportional to the piece it is given, never to the text received so
far: nothing is re-scanned, runs of plain string characters are skipped with one regular-expression match, and
decoded string text is kept as a list of pieces that is joined only when `StreamingArguments.value` is read (the
materialised view is cached until the next change). The only input ever held back unconsumed is an incomplete
escape sequence, at most 11 characters (``\\ud83d\\ude0``).

What the view shows, for a prefix of the text:

- strings as far as they have arrived, the one still open included, whitespace kept;
- a string, object or array appears as soon as it opens (``""``, ``{}``, ``[]``); members fill in as they arrive;
- a number, ``true``, ``false`` or ``null`` appears only once it is terminated (by ``,`` ``}`` ``]`` or
  whitespace), because ``12`` may still become ``123``;
- a key appears only once its value has started;
- an incomplete escape (``\\``, ``\\u00``) or half a surrogate pair (``\\ud83d`` without its low half) is held back
  until it is complete, so no value ever contains half an escape or a lone surrogate.

Once the whole object has arrived the view equals ``json.loads(text)`` (ints stay ``int``, big ints exact, floats
``float``) for every text this parser accepts. It accepts less than ``json.loads``, on purpose: the view is what a
person approves and what the tool runs with, so nothing may be read two ways.

- **Duplicate keys are an error.** ``json.loads`` keeps the last value silently, so a card could show one value and
  a tool run with another.
- **NaN, Infinity and -Infinity are errors**, as the JSON standard says (``json.loads`` accepts them).
- **Nesting deeper than** `MAX_DEPTH` **levels is an error**: every encoder and validator the arguments meet later
  recurses, and none of them is safe that deep.
- **Lone surrogates become U+FFFD.** ``json.loads('{"a": "\\ud800"}')`` returns a ``str`` holding a lone
  surrogate, which cannot be encoded as UTF-8 and makes the kernel's JSON packer fail. Here a lone surrogate,
  whether written as an escape or present as a raw code point in the text, is replaced by U+FFFD
  (REPLACEMENT CHARACTER), in values and keys alike, and it is not an error.

Compared with ``pydantic_core.from_json(prefix, allow_partial="trailing-strings")`` at every prefix (the property
tests check this), the documented differences are:

- unterminated numbers and literals are withheld here (``{"n": 12`` gives ``{}``; pydantic_core gives
  ``{"n": 12}``, and ``{"b": true`` gives ``{"b": True}``);
- an empty or whitespace-only prefix gives ``{}`` here; pydantic_core raises;
- a top-level value that is not an object (``[1]``, ``"x"``, ``3``) is an error here, because tool arguments must
  be an object; pydantic_core returns the value;
- lone surrogates become U+FFFD here; pydantic_core raises;
- a duplicate key is an error here; pydantic_core keeps the last value.

Invalid input never raises out of `StreamingArguments.feed`: the first error is recorded in
`StreamingArguments.error` (with the offset and what was expected), the view keeps what was good before it, and
later pieces are ignored. Like ``json.loads``, raw control characters (U+0000 to U+001F) inside strings, trailing
commas and text after the closing brace are errors; integers with more digits than Python's ``int`` conversion
limit (4,300 by default) are an error too, as ``json.loads`` raises for them. Unlike ``json.loads``, ``NaN``,
``Infinity``, duplicate keys and nesting deeper than `MAX_DEPTH` are errors (see above).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from ai_widgets._safe import MAX_DEPTH

__all__ = ["MAX_DEPTH", "ArgumentPatch", "StreamingArguments", "apply_patches"]


@dataclass(frozen=True, slots=True)
class ArgumentPatch:
    """One change to the arguments view, made by one `StreamingArguments.feed`.

    Attributes:
        op: ``"set"`` puts `value` at `path` (replacing what was there, or appending when the path's last element
            is the length of the list it points into). ``"append"`` appends the ``str`` `value` to the string
            already at `path`.
        path: Keys and list indices from the top-level object to the changed value, never empty: ``("city",)``
            is a top-level key, ``("items", 0, "name")`` a nested one.
        value: For ``"set"``, the JSON value: a number, ``bool``, ``None``, a string (as far as it has arrived),
            or ``{}`` / ``[]`` for a container that has just opened, whose members arrive as further patches.
            For ``"append"``, the text to append.
    """

    op: Literal["set", "append"]
    path: tuple[str | int, ...]
    value: Any


def apply_patches(target: dict[str, Any], patches: Iterable[ArgumentPatch]) -> None:
    """Apply patches, in order, to a mirror of the arguments view.

    Applying the `StreamingArguments.last_patches` of every feed, in order, to an empty ``dict`` reproduces
    `StreamingArguments.value` after each feed. The front end mirrors this function.

    Args:
        target: The mirror to update in place (start with ``{}``).
        patches: The patches to apply, in the order they were produced.

    Raises:
        KeyError: A patch's path does not exist in `target` (the patches do not belong to it).
        IndexError: Likewise, for a list index.
    """
    for patch in patches:
        path = patch.path
        node: Any = target
        for step in path[:-1]:
            node = node[step]
        last = path[-1]
        if patch.op == "append":
            node[last] += patch.value
            continue
        value = patch.value
        if isinstance(value, (dict, list)):
            value = copy.deepcopy(value)  # a fresh container: never share one between mirrors
        if isinstance(node, list) and last == len(node):
            node.append(value)
        else:
            node[last] = value


# Parser states.
_START: Final = 0  # before the opening "{"
_OBJ_FIRST: Final = 1  # after "{": a key or "}"
_OBJ_KEY: Final = 2  # after "," in an object: a key
_KEY: Final = 3  # inside a key string
_COLON: Final = 4  # after a key: ":"
_VALUE: Final = 5  # a value (after ":" or after "," in an array)
_ARR_FIRST: Final = 6  # after "[": a value or "]"
_STR: Final = 7  # inside a string value
_NUM: Final = 8  # inside a number
_LIT: Final = 9  # inside true / false / null
_AFTER: Final = 10  # after a value: "," or the closing bracket
_END: Final = 11  # after the closing "}": only whitespace
_ERROR: Final = 12  # invalid input seen; everything after it is ignored

# Results of scanning string content.
_CLOSED: Final = 0  # the closing quote was consumed
_MORE: Final = 1  # all input consumed, the string is still open
_HOLD: Final = 2  # an incomplete escape starts at the returned index: keep it for the next piece
_BAD: Final = 3  # invalid string content at the returned index

_WS: Final = frozenset(" \t\n\r")
_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# A character that does not stand for itself inside a JSON string.
_SPECIAL: Final = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')
_HEX4: Final = re.compile("[0-9a-fA-F]{4}")
_LOW_ESCAPE: Final = re.compile("\\\\u[dD][c-fC-F][0-9a-fA-F]{2}")
# A proper prefix of a low-surrogate escape (the empty string included).
_LOW_ESCAPE_PREFIX: Final = re.compile("(?:\\\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]?)?)?)?)?")
_REPLACEMENT: Final = "\ufffd"
_JOIN_NOW: Final = 8  # a closed string with more parts than this is joined lazily

# Number grammar as a small automaton: state -> {character: next state}. A character with no transition ends
# the number if the state is accepting, and is an error otherwise.
_DIGITS: Final = "0123456789"
_N_START, _N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_EXP, _N_EXP_SIGN, _N_EXP_DIGITS = range(9)
_NUM_NEXT: Final[tuple[dict[str, int], ...]] = (
    {"-": _N_MINUS, "0": _N_ZERO, **dict.fromkeys("123456789", _N_INT)},
    {"0": _N_ZERO, **dict.fromkeys("123456789", _N_INT)},
    {".": _N_DOT, "e": _N_EXP, "E": _N_EXP},
    {**dict.fromkeys(_DIGITS, _N_INT), ".": _N_DOT, "e": _N_EXP, "E": _N_EXP},
    dict.fromkeys(_DIGITS, _N_FRAC),
    {**dict.fromkeys(_DIGITS, _N_FRAC), "e": _N_EXP, "E": _N_EXP},
    {**dict.fromkeys(_DIGITS, _N_EXP_DIGITS), "+": _N_EXP_SIGN, "-": _N_EXP_SIGN},
    dict.fromkeys(_DIGITS, _N_EXP_DIGITS),
    dict.fromkeys(_DIGITS, _N_EXP_DIGITS),
)
_NUM_ACCEPTING: Final = frozenset({_N_ZERO, _N_INT, _N_FRAC, _N_EXP_DIGITS})
_NUM_EXPECTED: Final = {
    _N_MINUS: "a digit after '-'",
    _N_DOT: "a digit after '.'",
    _N_EXP: "a digit or a sign in the exponent",
    _N_EXP_SIGN: "a digit in the exponent",
}
_LITERALS: Final[dict[str, tuple[str, object]]] = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

_MISSING: Final = object()
#: What an ended parser's empty working lists become (:meth:`StreamingArguments._settle`): nothing appends to them
#: then, and a tuple would say so loudly if anything did.
_SETTLED: Final[Any] = ()

_RawPatch = tuple[Literal["set", "append"], tuple[str | int, ...], Any]


def _scan_string(s: str, i: int, out: list[str]) -> tuple[int, int]:
    """Decode JSON string content from ``s[i:]``, appending the decoded text to `out`.

    Returns:
        ``(j, status)``: for `_CLOSED`, `j` is just past the closing quote; for `_MORE`, ``len(s)``; for `_HOLD`,
        the start of an incomplete escape to keep for the next piece; for `_BAD`, the offending character.
    """
    n = len(s)
    special = _SPECIAL.search
    while True:
        m = special(s, i)
        j = n if m is None else m.start()
        if j > i:
            out.append(s[i:j])
        if j == n:
            return n, _MORE
        c = s[j]
        if c == '"':
            return j + 1, _CLOSED
        if c != "\\":
            if "\ud800" <= c <= "\udfff":  # a raw lone surrogate: never let one out
                out.append(_REPLACEMENT)
                i = j + 1
                continue
            return j, _BAD  # a raw control character
        if j + 1 == n:
            return j, _HOLD
        e = s[j + 1]
        if e != "u":
            decoded = _ESCAPES.get(e)
            if decoded is None:
                return j, _BAD
            out.append(decoded)
            i = j + 2
            continue
        if n - j < 6:
            return j, _HOLD
        if _HEX4.fullmatch(s, j + 2, j + 6) is None:
            return j, _BAD
        cp = int(s[j + 2 : j + 6], 16)
        i = j + 6
        if cp < 0xD800 or cp > 0xDFFF:
            out.append(chr(cp))
        elif cp >= 0xDC00:  # a low surrogate with no high half before it
            out.append(_REPLACEMENT)
        elif _LOW_ESCAPE.match(s, i) is not None:
            low = int(s[i + 2 : i + 6], 16)
            out.append(chr(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)))
            i += 6
        elif n - i < 6 and _LOW_ESCAPE_PREFIX.fullmatch(s, i) is not None:
            return j, _HOLD  # the low half may still be on its way
        else:  # a high surrogate with no low half after it
            out.append(_REPLACEMENT)


def _string_error(s: str, j: int) -> str:
    """Describe the invalid string content found by `_scan_string` at ``s[j]``."""
    c = s[j]
    if c != "\\":
        return f"control character U+{ord(c):04X} in a string (it must be escaped)"
    if s[j + 1] == "u":
        return f"invalid \\u escape {s[j : j + 6]!r} (expected 4 hex digits)"
    return f"invalid escape {s[j : j + 2]!r}"


def _put(container: Any, key: str | int, value: Any) -> None:
    """Set `key` of a dict, or the list element at `key` (appending when `key` is the list's length)."""
    if type(container) is list and key == len(container):
        container.append(value)
    else:
        container[key] = value


class StreamingArguments:
    """An incremental, lenient parser for one tool call's arguments (a JSON object) as they stream.

    Feed each piece of text as it arrives with `feed`; read the best-effort view with `value`, the changes the
    last piece made with `last_patches`, and whether the text is invalid with `error`. See the module docstring
    for what the view shows at each point and how it differs from ``json.loads`` and pydantic_core.

    Example:
        >>> args = StreamingArguments()
        >>> args.feed('{"city": "Edin')
        ('city',)
        >>> args.value
        {'city': 'Edin'}
        >>> args.feed('burgh", "days": 3}')
        ('city', 'days')
        >>> args.value, args.complete
        ({'city': 'Edinburgh', 'days': 3}, True)
    """

    __slots__ = (
        "_error",
        "_key",
        "_key_parts",
        "_lit",
        "_lit_pos",
        "_lit_value",
        "_num_parts",
        "_num_state",
        "_patch_cache",
        "_pending",
        "_raw",
        "_root",
        "_scalar",
        "_stack",
        "_state",
        "_str_keys",
        "_str_new",
        "_str_open",
        "_str_parts",
        "_str_path",
        "_text_parts",
        "_unjoined",
        "_value_cache",
    )

    def __init__(self) -> None:
        """Start with no text: `value` is ``{}``."""
        self._state = _START
        self._error: str | None = None
        self._pending = ""  # an incomplete escape held back from the previous piece (at most 11 characters)
        self._text_parts: list[str] = []
        # Containers still open, outermost first: (container, path). Completed values live in them.
        self._stack: list[tuple[Any, tuple[str | int, ...]]] = []
        self._root: dict[str, Any] | None = None
        self._key = ""  # the key of the member being parsed, in the innermost open object
        self._key_parts: list[str] = []
        # The open string value: its decoded pieces (joined lazily) and path.
        self._str_open = False
        self._str_new = False  # it opened during the current feed (its first patch is a "set")
        self._str_parts: list[str] = []
        self._str_path: tuple[str | int, ...] = ()
        self._str_keys: tuple[str, ...] = ()  # (the top-level key it belongs to,)
        # Closed strings whose parts are not joined yet: (container, key, parts).
        self._unjoined: list[tuple[Any, str | int, list[str]]] = []
        self._num_state = _N_START
        self._num_parts: list[str] = []
        self._lit = ""
        self._lit_pos = 0
        self._lit_value: object = None
        # A number or literal that is complete but not yet terminated: shown once a terminator arrives.
        self._scalar: object = _MISSING
        self._raw: list[_RawPatch] = []
        self._patch_cache: tuple[ArgumentPatch, ...] | None = ()
        self._value_cache: dict[str, Any] | None = None

    @classmethod
    def parse(cls, text: str) -> StreamingArguments:
        """Parse a whole text at once.

        Args:
            text: The arguments' JSON text (complete or not).

        Returns:
            A parser that has been fed `text`.
        """
        parser = cls()
        parser.feed(text)
        return parser

    # ------------------------------------------------------------------ views

    @property
    def text(self) -> str:
        """The raw text received so far (every piece, including any ignored after an error)."""
        parts = self._text_parts
        if len(parts) > 1:
            self._text_parts = parts = ["".join(parts)]
        return parts[0] if parts else ""

    @property
    def error(self) -> str | None:
        """Why the text is not valid JSON arguments (with the offset and what was expected), or ``None``."""
        return self._error

    @property
    def complete(self) -> bool:
        """Whether the top-level object has closed, followed by nothing but whitespace so far."""
        return self._state == _END

    @property
    def last_patches(self) -> tuple[ArgumentPatch, ...]:
        """The changes the most recent `feed` made to the view, in order (see `apply_patches`)."""
        patches = self._patch_cache
        if patches is None:
            patches = tuple(ArgumentPatch(op, path, value) for op, path, value in self._raw)
            self._patch_cache = patches
        return patches

    @property
    def value(self) -> dict[str, Any]:
        """The best-effort arguments so far: always a ``dict``, ``{}`` before any member has arrived.

        The dict is built when first read after a change and cached until the next change; treat it as
        read-only (values that are complete are shared between successive views).
        """
        cached = self._value_cache
        if cached is not None:
            return cached
        if self._unjoined:
            for container, key_, parts_ in self._unjoined:
                if container[key_] is parts_:  # not replaced since (by a duplicate key)
                    container[key_] = "".join(parts_)
            self._unjoined = []
        child: Any = _MISSING
        key: str | int = ""
        if self._str_open:
            parts = self._str_parts
            if len(parts) > 1:
                self._str_parts = parts = ["".join(parts)]
            child = parts[0] if parts else ""
            key = self._str_path[-1]
        if self._stack:
            for container, path in reversed(self._stack):
                view = container.copy()
                if child is not _MISSING:
                    _put(view, key, child)
                child = view
                if path:
                    key = path[-1]
            result = cast("dict[str, Any]", child)
        elif self._root is not None:
            result = self._root.copy()
        else:
            result = {}
        self._value_cache = result
        return result

    # ------------------------------------------------------------------ feeding

    def feed(self, delta: str) -> tuple[str, ...]:
        """Consume the next piece of the arguments text.

        Never raises on invalid input: the first error is recorded in `error` and later pieces are ignored.

        Args:
            delta: The next piece of text (any length, split anywhere, even inside an escape).

        Returns:
            The top-level keys whose view changed, in order, without duplicates.
        """
        if not delta:
            if self._raw:
                self._raw = []
                self._patch_cache = ()
            return ()
        self._text_parts.append(delta)
        state = self._state
        pending = self._pending
        if pending:
            s = pending + delta
            self._pending = ""
        else:
            s = delta
        if state == _STR:
            # The common case, kept short: more text for the open string.
            piece: str | None = s
            if _SPECIAL.search(s) is not None:
                out: list[str] = []
                i, status = _scan_string(s, 0, out)
                if status in (_MORE, _HOLD):
                    piece = "".join(out)
                    if status == _HOLD:
                        self._pending = s[i:]
                        if not piece:
                            if self._raw:
                                self._raw = []
                                self._patch_cache = ()
                            return ()
                else:
                    piece = None  # the string closes or is invalid: take the general path
            if piece is not None:
                self._str_parts.append(piece)
                self._raw = [("append", self._str_path, piece)]
                self._patch_cache = None
                self._value_cache = None
                return self._str_keys
        elif state == _ERROR:
            if self._raw:
                self._raw = []
                self._patch_cache = ()
            return ()
        self._raw = []
        self._run(s)
        if self._state >= _END:
            self._settle()
        raw = self._raw
        if not raw:
            self._patch_cache = ()
            return ()
        self._patch_cache = None
        self._value_cache = None
        if len(raw) == 1:
            return (cast(str, raw[0][1][0]),)
        return tuple(dict.fromkeys(cast(str, path[0]) for _, path, _ in raw))

    def _settle(self) -> None:
        """The text has ended (closed, or invalid): the working lists that are empty are let go for one shared empty
        tuple, as nothing adds to them any more (a chat keeps every call's parser: fewer objects for the collector
        to walk). One that holds what the view still reads is kept."""
        if not self._stack:
            self._stack = _SETTLED
        if not self._key_parts:
            self._key_parts = _SETTLED
        if not self._str_parts:
            self._str_parts = _SETTLED
        if not self._num_parts:
            self._num_parts = _SETTLED
        if not self._unjoined:
            self._unjoined = _SETTLED

    def _fail(self, s: str, i: int, message: str) -> None:
        """Record an error at ``s[i]`` and stop parsing."""
        offset = len(self.text) - (len(s) - i)
        self._error = f"invalid JSON at offset {offset}: {message}"
        self._state = _ERROR

    def _value_path(self) -> tuple[str | int, ...]:
        """The path of the value starting in the innermost open container."""
        container, path = self._stack[-1]
        if type(container) is dict:
            return (*path, self._key)
        return (*path, len(container))

    def _commit(self, value: object) -> None:
        """Store a complete number or literal in the innermost open container."""
        container, path = self._stack[-1]
        if type(container) is dict:
            key: str | int = self._key
            container[key] = value
        else:
            key = len(container)
            container.append(value)
        self._raw.append(("set", (*path, key), value))

    def _open_container(self, container: dict[str, Any] | list[Any]) -> bool:
        """Attach a container that has just opened to its parent and make it the innermost one; ``False`` (and
        nothing attached) when that would nest deeper than `MAX_DEPTH`."""
        if len(self._stack) >= MAX_DEPTH:
            return False
        path = self._value_path()
        _put(self._stack[-1][0], path[-1], container)
        self._raw.append(("set", path, {} if type(container) is dict else []))
        self._stack.append((container, path))
        return True

    def _close_container(self) -> int:
        """Close the innermost container; return the state that follows."""
        self._stack.pop()
        return _AFTER if self._stack else _END

    def _string_piece(self, out: list[str]) -> None:
        """Add decoded text to the open string value and record the patch for it."""
        piece = out[0] if len(out) == 1 else "".join(out)
        if self._str_new:
            self._str_new = False
            self._raw.append(("set", self._str_path, piece))
        elif piece:
            self._raw.append(("append", self._str_path, piece))
        else:
            return
        self._str_parts.append(piece)

    def _run(self, s: str) -> None:
        """Process ``s`` (the held-back escape, if any, followed by the new piece)."""
        n = len(s)
        i = 0
        st = self._state
        ws = _WS
        while i < n:
            if st == _STR:
                out: list[str] = []
                i, status = _scan_string(s, i, out)
                self._string_piece(out)
                if status == _CLOSED:
                    container, _ = self._stack[-1]
                    parts = self._str_parts
                    key = self._str_path[-1]
                    if len(parts) <= _JOIN_NOW:
                        _put(container, key, "".join(parts))
                    else:
                        # Joining a long string is O(its length): leave it to the next read of `value`.
                        # The list of parts stands in for the string until then.
                        _put(container, key, parts)
                        self._unjoined.append((container, key, parts))
                    self._str_open = False
                    self._str_parts = []
                    st = _AFTER
                    continue
                if status == _HOLD:
                    self._pending = s[i:]
                elif status == _BAD:
                    self._fail(s, i, _string_error(s, i))
                    return
                break
            if st == _KEY:
                out = []
                i, status = _scan_string(s, i, out)
                self._key_parts.extend(out)
                if status == _CLOSED:
                    self._key = key = "".join(self._key_parts)
                    self._key_parts = []
                    if key in self._stack[-1][0]:
                        self._fail(s, i - 1, f"duplicate key {key!r}: a key may appear only once in an object")
                        return
                    st = _COLON
                    continue
                if status == _HOLD:
                    self._pending = s[i:]
                elif status == _BAD:
                    self._fail(s, i, _string_error(s, i))
                    return
                break
            c = s[i]
            if st == _AFTER:
                if self._scalar is not _MISSING and (c in ws or c == "," or c == "}" or c == "]"):
                    self._commit(self._scalar)
                    self._scalar = _MISSING
                if c in ws:
                    i += 1
                    continue
                is_dict = type(self._stack[-1][0]) is dict
                if c == ",":
                    st = _OBJ_KEY if is_dict else _VALUE
                elif c == ("}" if is_dict else "]"):
                    st = self._close_container()
                else:
                    closer = "'}'" if is_dict else "']'"
                    self._fail(s, i, f"expected ',' or {closer} after a value, got {c!r}")
                    return
                i += 1
            elif st == _NUM:
                state = self._num_state
                j = i
                while j < n:
                    following = _NUM_NEXT[state].get(s[j])
                    if following is None:
                        break
                    state = following
                    j += 1
                self._num_parts.append(s[i:j])
                self._num_state = state
                i = j
                if j == n:
                    break
                if state not in _NUM_ACCEPTING:
                    self._fail(s, j, f"expected {_NUM_EXPECTED[state]}, got {s[j]!r}")
                    return
                number = "".join(self._num_parts)
                self._num_parts = []
                try:
                    self._scalar = int(number) if state in (_N_ZERO, _N_INT) else float(number)
                except ValueError as exc:  # more digits than Python's int conversion limit
                    self._fail(s, j, f"cannot convert the number: {exc}")
                    return
                st = _AFTER
            elif st == _LIT:
                lit = self._lit
                k = self._lit_pos
                while i < n and k < len(lit):
                    if s[i] != lit[k]:
                        self._fail(s, i, f"expected {lit!r}, got {s[i]!r}")
                        return
                    i += 1
                    k += 1
                self._lit_pos = k
                if k == len(lit):
                    self._scalar = self._lit_value
                    st = _AFTER
            elif c in ws:
                i += 1
            elif st in (_VALUE, _ARR_FIRST):
                if c == '"':
                    self._str_path = path = self._value_path()
                    self._str_keys = (cast(str, path[0]),)
                    self._str_open = True
                    self._str_new = True
                    self._str_parts = []
                    st = _STR
                    i += 1
                elif c == "-" or "0" <= c <= "9":
                    self._num_state = _N_START
                    st = _NUM
                elif c == "{" or c == "[":
                    if not self._open_container({} if c == "{" else []):
                        self._fail(s, i, f"the arguments nest deeper than {MAX_DEPTH} levels")
                        return
                    st = _OBJ_FIRST if c == "{" else _ARR_FIRST
                    i += 1
                elif c in _LITERALS:
                    self._lit, self._lit_value = _LITERALS[c]
                    self._lit_pos = 0
                    st = _LIT
                elif c == "]" and st == _ARR_FIRST:
                    st = self._close_container()
                    i += 1
                else:
                    self._fail(s, i, f"expected a value, got {c!r}")
                    return
            elif st in (_OBJ_FIRST, _OBJ_KEY):
                if c == '"':
                    st = _KEY
                elif c == "}" and st == _OBJ_FIRST:
                    st = self._close_container()
                else:
                    wanted = "'\"' to start a key or '}'" if st == _OBJ_FIRST else "'\"' to start a key"
                    self._fail(s, i, f"expected {wanted}, got {c!r}")
                    return
                i += 1
            elif st == _COLON:
                if c != ":":
                    self._fail(s, i, f"expected ':' after a key, got {c!r}")
                    return
                st = _VALUE
                i += 1
            elif st == _START:
                if c == "{":
                    self._root = {}
                    self._stack.append((self._root, ()))
                    st = _OBJ_FIRST
                    i += 1
                elif c in '["-0123456789tfn':
                    self._fail(s, i, f"tool arguments must be a JSON object, got {c!r}")
                    return
                else:
                    self._fail(s, i, f"expected '{{' to start the arguments object, got {c!r}")
                    return
            else:  # _END
                self._fail(s, i, f"unexpected {c!r} after the end of the arguments object")
                return
        if self._str_new:  # the piece ended right after a string's opening quote
            self._string_piece([""])
        self._state = st
