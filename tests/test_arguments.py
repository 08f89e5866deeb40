"""Tests for ai_widgets.arguments: the incremental, lenient parser of streamed tool-call arguments.

Differences from ``pydantic_core.from_json(prefix, allow_partial="trailing-strings")`` that the property tests
normalise away (each is documented in the module docstring of ``ai_widgets.arguments``):

- a number or literal at the very end of a prefix (not yet terminated) is withheld by us and shown by
  pydantic_core: the reference parses the prefix with that trailing token cut off;
- an empty or whitespace-only prefix gives ``{}`` here; pydantic_core raises;
- lone surrogates become U+FFFD here (pydantic_core raises; json.loads keeps them): the strategies for the
  pydantic_core comparison generate no surrogates, and a separate property test checks the U+FFFD rule against
  ``json.loads`` plus the replacement;
- duplicate keys: the strategies generate none (the dict strategies have unique keys); a unit test covers them.
"""

from __future__ import annotations

import codecs
import json
import random
import re
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_widgets.arguments import ArgumentPatch, StreamingArguments, apply_patches

FIXTURES = Path(__file__).parent / "fixtures" / "providers"
MAX_HELD_BACK = 11  # the longest incomplete escape: \ud83d\ude0


# ----------------------------------------------------------------------------- helpers


def nested_lists(depth: int) -> list[Any]:
    """``[[...]]``, ``depth`` lists deep."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def strict_loads(text: str) -> Any:
    """``json.loads`` refusing what the parser refuses on purpose: NaN, Infinity and duplicate keys."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def feed_all(deltas: list[str]) -> tuple[StreamingArguments, list[dict[str, Any]]]:
    """Feed the deltas one by one, checking the patch mirror and invariants at each step."""
    parser = StreamingArguments()
    mirror: dict[str, Any] = {}
    views = []
    for delta in deltas:
        changed = parser.feed(delta)
        apply_patches(mirror, parser.last_patches)
        view = parser.value
        assert type(view) is dict
        assert mirror == view
        assert changed == tuple(dict.fromkeys(p.path[0] for p in parser.last_patches))
        assert len(parser._pending) <= MAX_HELD_BACK
        assert_no_lone_surrogates(view)
        for patch in parser.last_patches:
            assert_no_lone_surrogates(patch.value)
        views.append(view)
    return parser, views


def assert_no_lone_surrogates(value: Any) -> None:
    """Every string in `value` can be encoded as UTF-8 (so the kernel's JSON packer accepts it)."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for key, item in value.items():
            key.encode("utf-8")
            assert_no_lone_surrogates(item)
    elif isinstance(value, list):
        for item in value:
            assert_no_lone_surrogates(item)


def random_slices(text: str, rng: random.Random, lo: int = 1, hi: int = 8) -> list[str]:
    out, i = [], 0
    while i < len(text):
        k = rng.randint(lo, hi)
        out.append(text[i : i + k])
        i += k
    return out


_TRAILING_SCALAR = re.compile(r"(?:[-+.0-9eE]+|[a-z]+)\Z")


class StringTracker:
    """Independently tracks whether a growing JSON text ends inside a string (for the reference normaliser)."""

    def __init__(self) -> None:
        self.in_string = False
        self.escaped = False

    def update(self, delta: str) -> None:
        for ch in delta:
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True


def reference_view(prefix: str, in_string: bool) -> Any:
    """pydantic_core's partial parse of `prefix`, normalised for the documented differences."""
    if not prefix.strip():
        return {}  # pydantic_core raises on an empty prefix; we give {}
    if not in_string:
        # A number or literal not yet terminated is withheld by us: give pydantic_core the prefix without it.
        prefix = _TRAILING_SCALAR.sub("", prefix)
    return pydantic_core.from_json(prefix, allow_partial="trailing-strings")


def replace_lone_surrogates(value: Any) -> Any:
    """json.loads's result with lone surrogates replaced by U+FFFD (the one documented difference)."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_lone_surrogates(v) for v in value]
    return value


# ----------------------------------------------------------------------------- unit tests: the view


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # perf.md §1 correctness table
        ("", {}),
        ("   \n\t ", {}),
        ('{"pa', {}),
        ('{"n": 12', {}),
        ('{"n": 1.', {}),
        ('{"n": 1e', {}),
        ('{"n": -', {}),
        ('{"b": tr', {}),
        ('{"b": nul', {}),
        ('{"s": "ab\\', {"s": "ab"}),
        ('{"s": "ab\\u00', {"s": "ab"}),
        ('{"s": "ab\\ud83d', {"s": "ab"}),
        ('{"s": "ab\\ud83d\\ude', {"s": "ab"}),
        ('{"s": "ab\\ud83d\\ude00', {"s": "ab😀"}),
        ('{"s": "x = 1  ', {"s": "x = 1  "}),
        ('{"a": [1, 2', {"a": [1]}),
        ('{"a": {"b": "c', {"a": {"b": "c"}}),
        # keys, values that have not started, terminators
        ("{", {}),
        ('{"a"', {}),
        ('{"a":', {}),
        ('{"a": ', {}),
        ('{"a": "', {"a": ""}),
        ('{"n": 12 ', {"n": 12}),
        ('{"n": 12,', {"n": 12}),
        ('{"n": 12}', {"n": 12}),
        ('{"b": true', {}),
        ('{"b": true ', {"b": True}),
        ('{"b": false,', {"b": False}),
        ('{"b": null}', {"b": None}),
        ('{"a": [', {"a": []}),
        ('{"a": [1,', {"a": [1]}),
        ('{"a": [1 ', {"a": [1]}),
        ('{"a": [1]', {"a": [1]}),
        ('{"a": ["x', {"a": ["x"]}),
        ('{"a": {', {"a": {}}),
        ('{"a": {"b', {"a": {}}),
        ('{"a": {"b":', {"a": {}}),
        ('{"a": [{"b": "', {"a": [{"b": ""}]}),
        ('{"a": [[], {}, [{"c": [true, "d', {"a": [[], {}, [{"c": [True, "d"]}]]}),
        ('{"\\u00e9": "\\u00e9\\n\\"\\\\\\/\\b\\f\\r\\t', {"é": 'é\n"\\/\b\f\r\t'}),
        ('{"k\\', {}),
        ('{"a": "x", "b', {"a": "x"}),
        # numbers
        ('{"i": -0, "f": -0.5e-3, "e": 1E+2, "z": 0.0}', {"i": 0, "f": -0.0005, "e": 100.0, "z": 0.0}),
        ('{"big": 123456789012345678901234567890}', {"big": 123456789012345678901234567890}),
    ],
)
def test_view_of_prefix(text: str, expected: dict[str, Any]) -> None:
    parser = StreamingArguments.parse(text)
    assert parser.value == expected
    assert parser.error is None
    # the same text fed one character at a time gives the same view
    one_by_one, _ = feed_all(list(text))
    assert one_by_one.value == expected


def test_types_are_kept() -> None:
    value = StreamingArguments.parse('{"i": 3, "f": 3.0, "e": 1e2, "big": 12345678901234567890123}').value
    assert type(value["i"]) is int
    assert type(value["f"]) is float
    assert type(value["e"]) is float
    assert value["big"] == 12345678901234567890123


def test_value_before_anything_and_caching() -> None:
    parser = StreamingArguments()
    assert parser.value == {}
    assert parser.text == ""
    assert parser.last_patches == ()
    assert not parser.complete
    parser.feed('{"a": "x')
    first = parser.value
    assert first is parser.value  # cached until the next change
    assert parser.feed("") == ()
    assert parser.value is first
    parser.feed("y")
    second = parser.value
    assert second is not first
    assert first == {"a": "x"}
    assert second == {"a": "xy"}
    parser.feed("  ")  # whitespace inside the string is kept
    assert parser.value == {"a": "xy  "}


def test_text_is_the_raw_text() -> None:
    parser = StreamingArguments()
    for piece in ['{"a', '": 1', "}", " x", " more"]:
        parser.feed(piece)
    assert parser.text == '{"a": 1} x more'


def test_complete() -> None:
    parser = StreamingArguments()
    parser.feed('{"a": [1, {"b": 2}]')
    assert not parser.complete
    parser.feed("}")
    assert parser.complete
    parser.feed(" \n\t")
    assert parser.complete
    assert parser.error is None
    assert StreamingArguments.parse("{}").complete
    assert StreamingArguments.parse(" {} ").value == {}


def test_feed_returns_changed_top_level_keys() -> None:
    parser = StreamingArguments()
    assert parser.feed('{"a": 1, "b": "x", "c": {"d": [') == ("a", "b", "c")
    assert parser.feed("3, 4") == ("c",)  # 3 is terminated, 4 is not
    assert parser.feed("   ") == ("c",)
    assert parser.feed("   ") == ()
    assert parser.last_patches == ()
    assert parser.feed(']}, "e": tru') == ()
    assert parser.feed("e}") == ("e",)
    assert parser.value == {"a": 1, "b": "x", "c": {"d": [3, 4]}, "e": True}


def test_patches() -> None:
    parser = StreamingArguments()
    parser.feed('{"s": "ab\\ncd\\')
    # the string opened in this feed: one "set" with its text so far (chunks merged, half escape held back)
    assert parser.last_patches == (ArgumentPatch("set", ("s",), "ab\ncd"),)
    parser.feed('t\\"x\\" \\u00e9')
    assert parser.last_patches == (ArgumentPatch("append", ("s",), '\t"x" é'),)
    parser.feed('", "l": [{"k": "v"}, 1')
    assert parser.last_patches == (
        ArgumentPatch("set", ("l",), []),
        ArgumentPatch("set", ("l", 0), {}),
        ArgumentPatch("set", ("l", 0, "k"), "v"),
    )
    parser.feed(", null]}")
    assert parser.last_patches == (ArgumentPatch("set", ("l", 1), 1), ArgumentPatch("set", ("l", 2), None))
    assert parser.complete
    mirror: dict[str, Any] = {}
    apply_patches(mirror, [ArgumentPatch("set", ("s",), "a"), ArgumentPatch("append", ("s",), "b")])
    assert mirror == {"s": "ab"}


def test_apply_patches_never_shares_containers() -> None:
    patch = ArgumentPatch("set", ("l",), [])
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    apply_patches(first, [patch])
    apply_patches(second, [patch])
    first["l"].append(1)
    assert second == {"l": []}
    assert patch.value == []


def test_half_escapes_are_never_shown() -> None:
    text = json.dumps({"s": 'é → 😀 \\ " \n \u0000 \u2028'}, ensure_ascii=True)
    expected = json.loads(text)["s"]
    parser, views = feed_all(list(text))
    for view in views:
        shown = view.get("s", "")
        assert expected.startswith(shown)  # never half an escape, never a lone surrogate
    assert parser.value == json.loads(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"s": "\\ud800"}', "\ufffd"),
        ('{"s": "\\udc00"}', "\ufffd"),
        ('{"s": "\\ud800x"}', "\ufffdx"),
        ('{"s": "\\ud800\\u0041"}', "\ufffdA"),
        ('{"s": "\\ud800\\ud83d\\ude00"}', "\ufffd😀"),
        ('{"s": "\\ude00\\ud83d"}', "\ufffd\ufffd"),
        ('{"s": "a\ud800b"}', "a\ufffdb"),  # a raw lone surrogate in the text
    ],
)
def test_lone_surrogates_become_replacement_characters(text: str, expected: str) -> None:
    parser, _ = feed_all(list(text))
    assert parser.value == {"s": expected}
    assert parser.complete
    assert parser.error is None
    assert StreamingArguments.parse(text).value == {"s": expected}


def test_lone_surrogate_in_a_key() -> None:
    assert StreamingArguments.parse('{"k\\udc00": 1}').value == {"k\ufffd": 1}


# ----------------------------------------------------------------------------- unit tests: errors


@pytest.mark.parametrize(
    ("text", "error", "value"),
    [
        ("[1]", "invalid JSON at offset 0: tool arguments must be a JSON object, got '['", {}),
        ('"x"', "invalid JSON at offset 0: tool arguments must be a JSON object", {}),
        ("3", "invalid JSON at offset 0: tool arguments must be a JSON object", {}),
        ("  null", "invalid JSON at offset 2: tool arguments must be a JSON object", {}),
        ("x", "invalid JSON at offset 0: expected '{' to start the arguments object, got 'x'", {}),
        ('{"a": 1, "b": 2x}', "invalid JSON at offset 15: expected ',' or '}' after a value, got 'x'", {"a": 1}),
        ('{"a": [1 2]}', "invalid JSON at offset 9: expected ',' or ']' after a value, got '2'", {"a": [1]}),
        ('{"a": 1} x', "invalid JSON at offset 9: unexpected 'x' after the end of the arguments object", {"a": 1}),
        ('{"a": 1}{}', "invalid JSON at offset 8", {"a": 1}),
        ('{"a": NaN}', "invalid JSON at offset 6: expected a value, got 'N'", {}),
        ('{"a": Infinity}', "invalid JSON at offset 6: expected a value, got 'I'", {}),
        ('{"a": -Infinity}', "invalid JSON at offset 7: expected a digit after '-', got 'I'", {}),
        ('{"a": 1,}', "invalid JSON at offset 8: expected '\"' to start a key, got '}'", {"a": 1}),
        ('{"a": [1,]}', "invalid JSON at offset 9: expected a value, got ']'", {"a": [1]}),
        ("{a: 1}", "invalid JSON at offset 1: expected '\"' to start a key or '}', got 'a'", {}),
        ('{"a" 1}', "invalid JSON at offset 5: expected ':' after a key, got '1'", {}),
        ('{"a": tx}', "invalid JSON at offset 7: expected 'true', got 'x'", {}),
        ('{"a": truex}', "invalid JSON at offset 10: expected ',' or '}' after a value, got 'x'", {}),
        ('{"a": 1.}', "invalid JSON at offset 8: expected a digit after '.', got '}'", {}),
        ('{"a": 1e}', "invalid JSON at offset 8: expected a digit or a sign in the exponent, got '}'", {}),
        ('{"a": 01}', "invalid JSON at offset 7: expected ',' or '}' after a value, got '1'", {}),
        ('{"a": .5}', "invalid JSON at offset 6: expected a value, got '.'", {}),
        ('{"a": "x\ny"}', "invalid JSON at offset 8: control character U+000A in a string", {"a": "x"}),
        ('{"a": "x\\qy"}', "invalid JSON at offset 8: invalid escape '\\\\q'", {"a": "x"}),
        ('{"a": "x\\u12G4"}', "invalid JSON at offset 8: invalid \\u escape", {"a": "x"}),
        ("{\"a\": 'x'}", 'invalid JSON at offset 6: expected a value, got "\'"', {}),
        ('{"a": 1' + "0" * 5000 + "}", "invalid JSON at offset 5007: cannot convert the number", {}),
        ('{"a": 1, "a": 2}', "invalid JSON at offset 11: duplicate key 'a'", {"a": 1}),
        ('{"p": "x", "_": 1, "p": "/home"}', "invalid JSON at offset 21: duplicate key 'p'", {"p": "x", "_": 1}),
        ('{"a": [{"k": 1, "k": 2}]}', "invalid JSON at offset 18: duplicate key 'k'", {"a": [{"k": 1}]}),
        (
            '{"a": ' + "[" * 201,
            "invalid JSON at offset 205: the arguments nest deeper than 200 levels",
            {"a": nested_lists(199)},
        ),
    ],
)
def test_errors(text: str, error: str, value: dict[str, Any]) -> None:
    for parser in (StreamingArguments.parse(text), feed_all(list(text))[0]):
        assert parser.error is not None
        assert parser.error.startswith(error), parser.error
        assert parser.value == value
        assert not parser.complete


def test_nothing_after_an_error() -> None:
    parser = StreamingArguments()
    parser.feed('{"a": "x", "b": ')
    assert parser.feed("?") == ()
    message = parser.error
    assert message == "invalid JSON at offset 16: expected a value, got '?'"
    view = parser.value
    assert parser.feed('"more"}') == ()
    assert parser.last_patches == ()
    assert parser.error == message
    assert parser.value == view == {"a": "x"}
    assert parser.text == '{"a": "x", "b": ?"more"}'


def test_feed_never_raises_on_garbage() -> None:
    rng = random.Random(7)
    alphabet = '{}[]:,"\\ \n\tabcdefnrtu0123456789.-+eE\ud800é😀\x00'
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        if rng.random() < 0.5:
            text = "{" + text
        parser, _ = feed_all(random_slices(text, rng, 1, 4))
        try:
            expected = strict_loads(text)
        except ValueError:
            expected = None
        if parser.complete:
            assert parser.value == replace_lone_surrogates(expected)
        elif isinstance(expected, dict) and not re.search(r"\d{4300}", text):
            pytest.fail(f"valid object {text!r} not complete: {parser.error}")


# ----------------------------------------------------------------------------- property tests

_interesting_chars = st.sampled_from('"\\/\n\r\t\b\f\x00\x1f\x7f é→😀\u2028\ufeff{}[]:,')
_text = st.text(st.one_of(st.characters(codec="utf-8"), _interesting_chars), max_size=30)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_json_values = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(_text, children, max_size=5)),
    max_leaves=25,
)
_objects = st.dictionaries(_text, _json_values, max_size=6)


@st.composite
def _serialised(draw: st.DrawFn, objects: st.SearchStrategy[dict[str, Any]] = _objects) -> tuple[Any, str]:
    obj = draw(objects)
    text = json.dumps(
        obj,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.one_of(st.none(), st.integers(0, 4), st.just("\t"))),
        separators=draw(st.sampled_from([None, (",", ":"), (", ", ": "), (" ,\n", " : ")])),
    )
    if draw(st.booleans()):
        text = " \n" + text + "\n  "
    return obj, text


def _slices(draw: st.DrawFn, text: str) -> list[str]:
    sizes = draw(st.lists(st.integers(1, 12), min_size=1, max_size=20))
    out, i, k = [], 0, 0
    while i < len(text):
        size = sizes[k % len(sizes)]
        out.append(text[i : i + size])
        i += size
        k += 1
    return out


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), serialised=_serialised())
def test_every_prefix_agrees_with_pydantic_core(data: st.DataObject, serialised: tuple[Any, str]) -> None:
    obj, text = serialised
    deltas = _slices(data.draw, text)
    parser = StreamingArguments()
    mirror: dict[str, Any] = {}
    tracker = StringTracker()
    prefix = ""
    for delta in deltas:
        parser.feed(delta)
        prefix += delta
        tracker.update(delta)
        apply_patches(mirror, parser.last_patches)
        view = parser.value
        assert type(view) is dict
        assert parser.error is None
        assert view == reference_view(prefix, tracker.in_string), prefix
        assert mirror == view
        assert len(parser._pending) <= MAX_HELD_BACK
    assert parser.complete
    assert parser.text == text
    assert parser.value == json.loads(text) == obj


_surrogate_text = st.text(st.one_of(st.characters(categories=["Cs"]), st.sampled_from('a😀\\"\n')), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    obj=st.dictionaries(_surrogate_text, st.one_of(_surrogate_text, st.lists(_surrogate_text, max_size=3))),
    ensure_ascii=st.booleans(),
)
def test_lone_surrogates_property(data: st.DataObject, obj: dict[str, Any], ensure_ascii: bool) -> None:
    text = json.dumps(obj, ensure_ascii=ensure_ascii)
    parser, _ = feed_all(_slices(data.draw, text))
    keys = [replace_lone_surrogates(key) for key, _ in json.loads(text, object_pairs_hook=lambda pairs: pairs)]
    if len(set(keys)) < len(keys):
        # Two keys that differ only in their lone surrogates are the same key once replaced: refused, not merged.
        assert parser.error is not None
        assert "duplicate key" in parser.error
        return
    assert parser.complete
    assert parser.value == replace_lone_surrogates(json.loads(text))


# ----------------------------------------------------------------------------- recorded provider streams


def sse_events(path: Path) -> list[tuple[str | None, Any]]:
    """(event name, JSON data) for each SSE event in a recorded stream (CRLF or LF, last event unterminated)."""
    events: list[tuple[str | None, Any]] = []
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        name = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data and data != ["[DONE]"]:
            events.append((name, json.loads("\n".join(data))))
    return events


def openai_chat_calls(path: Path) -> dict[int, list[str]]:
    calls: dict[int, list[str]] = {}
    for _, chunk in sse_events(path):
        for choice in chunk.get("choices") or []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                pieces = calls.setdefault(call["index"], [])
                arguments = (call.get("function") or {}).get("arguments")
                if arguments:
                    pieces.append(arguments)
    return calls


def anthropic_calls(path: Path) -> dict[int, list[str]]:
    calls: dict[int, list[str]] = {}
    for _, event in sse_events(path):
        if event.get("type") == "content_block_start" and event["content_block"]["type"] in (
            "tool_use",
            "server_tool_use",
        ):
            calls[event["index"]] = []
        elif event.get("type") == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            calls[event["index"]].append(event["delta"]["partial_json"])
    return calls


def responses_calls(path: Path) -> dict[str, list[str]]:
    calls: dict[str, list[str]] = {}
    for _, event in sse_events(path):
        if event.get("type") == "response.function_call_arguments.delta":
            calls.setdefault(event["item_id"], []).append(event["delta"])
    return calls


def expected(name: str) -> Any:
    return json.loads((FIXTURES / "expected" / f"{name}.expected.json").read_text(encoding="utf-8"))


def streamed_calls(name: str) -> list[tuple[list[str], dict[str, Any]]]:
    """(argument deltas, expected final arguments) for each streamed tool call in a recorded stream."""
    path = FIXTURES / "data" / f"{name}.sse"
    exp = expected(name)
    if name.startswith("anthropic_"):
        got_a = anthropic_calls(path)
        blocks = [b for b in exp["content"] if b["type"] in ("tool_use", "server_tool_use")]
        assert sorted(got_a) == [b["index"] for b in blocks]
        return [(got_a[b["index"]], b["input"]) for b in blocks]
    if name.startswith("openai_responses_"):
        got_r = responses_calls(path)
        assert sorted(got_r) == sorted(c["item_id"] for c in exp["function_calls"])
        return [(got_r[c["item_id"]], c["parsed_arguments"]) for c in exp["function_calls"]]
    got_c = openai_chat_calls(path)  # OpenAI Chat Completions and compatible (Groq, Qwen)
    assert sorted(got_c) == [c["index"] for c in exp["tool_calls"]]
    return [(got_c[c["index"]], c["parsed_arguments"]) for c in exp["tool_calls"]]


# Fixtures with streamed argument text. The others have no streamed-argument form:
# - gemini_function_call_empty_args_thought_signature: Gemini sends `functionCall.args` as a whole JSON object;
# - vertex_gemini_partial_args_multi_call: Vertex streams `partialArgs` as (jsonPath, stringValue) records, a
#   structured form a transport applies directly, not JSON text;
# - ollama_cloud_tool_call_nonstream: not streamed, and `arguments` is a JSON object;
# - groq_chat_reasoning_then_error_event, openai_chat_refusal, openai_responses_error_insufficient_quota:
#   no tool call at all (they are still run below, to check that no call is extracted).
STREAMED = [
    "anthropic_server_tools_escape_split",
    "anthropic_text_then_tool_use",
    "anthropic_thinking_tool_use",
    "anthropic_tool_use_no_args",
    "openai_chat_parallel_mixed_empty_args",
    "openai_chat_parallel_tools_usage",
    "openai_responses_reasoning_text_function_call",
    "qwen_chat_tool_call_empty_id_deltas",
]
NO_CALLS = ["groq_chat_reasoning_then_error_event", "openai_chat_refusal", "openai_responses_error_insufficient_quota"]


def test_every_fixture_is_classified() -> None:
    names = {p.name.split(".")[0] for p in (FIXTURES / "data").iterdir()}
    others = {
        "gemini_function_call_empty_args_thought_signature",
        "vertex_gemini_partial_args_multi_call",
        "ollama_cloud_tool_call_nonstream",
    }
    assert names == set(STREAMED) | set(NO_CALLS) | others


@pytest.mark.parametrize("name", STREAMED)
def test_recorded_streams(name: str) -> None:
    calls = streamed_calls(name)
    assert calls
    for deltas, final in calls:
        parser, _ = feed_all(deltas)
        assert parser.error is None
        assert parser.value == final
        assert parser.complete == bool("".join(deltas).strip())  # Anthropic's no-args call sends only ""


@pytest.mark.parametrize("name", NO_CALLS)
def test_recorded_streams_without_calls(name: str) -> None:
    assert streamed_calls(name) == []


def test_recorded_escape_split_is_split_mid_escape() -> None:
    # The point of this fixture: some deltas end inside an escape; the view must never show half of one.
    deltas, final = streamed_calls("anthropic_server_tools_escape_split")[0]
    assert any(d.endswith("\\") for d in deltas)
    _, views = feed_all(deltas)
    for view in views:
        for key, shown in view.items():
            assert final[key].startswith(shown)


def _byte_pieces(deltas: list[str]) -> list[str]:
    """The deltas' UTF-8 bytes, one byte at a time, through an incremental decoder."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    data = "".join(deltas).encode("utf-8")
    pieces = [decoder.decode(data[i : i + 1]) for i in range(len(data))]
    pieces.append(decoder.decode(b"", final=True))
    return pieces


@pytest.mark.parametrize(
    "name", ["openai_responses_reasoning_text_function_call", "anthropic_server_tools_escape_split"]
)
def test_byte_split_input(name: str) -> None:
    for deltas, final in streamed_calls(name):
        parser, _ = feed_all(_byte_pieces(deltas))
        assert parser.value == final
        assert parser.complete
    # The recorded arguments are ASCII (the non-ASCII text of these streams, curly quotes and an em dash, is in
    # their text parts), so also stream that text as an argument, byte by byte.
    exp = expected(name)
    texts = [m["text"] for m in exp.get("messages", [])] + [
        b["text"] for b in exp.get("content", []) if b["type"] == "text"
    ]
    text = next(t for t in texts if any(ord(ch) > 127 for ch in t))
    arguments = {"text": text + " 😀", "note": "é→"}
    raw = json.dumps(arguments, ensure_ascii=False)
    parser, views = feed_all(_byte_pieces([raw]))
    assert parser.value == arguments
    for view in views:
        assert arguments["text"].startswith(view.get("text", ""))


def test_whole_argument_objects_of_other_providers() -> None:
    # Gemini and Ollama send arguments as objects; a transport that serialises them gets them back unchanged.
    gemini = expected("gemini_function_call_empty_args_thought_signature")["function_calls"]
    vertex = expected("vertex_gemini_partial_args_multi_call")["function_calls"]
    ollama = expected("ollama_cloud_tool_call_nonstream")["tool_calls"]
    for args in [c["args"] for c in gemini + vertex] + [c["arguments"] for c in ollama]:
        parser = StreamingArguments.parse(json.dumps(args))
        assert parser.complete
        assert parser.value == args


# ----------------------------------------------------------------------------- O(delta), structurally


def _code_like(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines = [
        'def f(x):\n    return "caf\u00e9 \u2192 \U0001f600"\n',
        "path = 'C:\\\\temp\\\\out.txt'\t# tab\n",
        'msg = f"{x!r} \\"quoted\\" \\n"\n',
        "    for i in range(10): print(i, end=', ')\n",
    ]
    out: list[str] = []
    size = 0
    while size < n:
        line = rng.choice(lines)
        out.append(line)
        size += len(line)
    return "".join(out)[:n]


def test_per_delta_work_is_bounded_on_a_1mb_stream() -> None:
    """No re-scan, no re-join: each feed holds back at most one escape and adds at most one piece of text.

    Timing belongs to the benchmark; this checks the structure that makes a feed O(delta): the unconsumed input
    never exceeds an incomplete escape, and the open string grows by one piece no longer than the delta (plus
    the escape held back from the previous one), so nothing proportional to the text so far is rebuilt.
    """
    content = _code_like(1_000_000)
    for ensure_ascii in (False, True):
        text = json.dumps({"path": "src/app/handler.py", "content": content}, ensure_ascii=ensure_ascii)
        rng = random.Random(1)
        parser = StreamingArguments()
        held = 0
        pieces = 0
        for delta in random_slices(text, rng, 4, 8):
            parser.feed(delta)
            assert len(parser._pending) <= MAX_HELD_BACK
            if parser._str_open:
                grown = len(parser._str_parts) - pieces
                assert grown <= 1
                if grown:
                    assert len(parser._str_parts[-1]) <= len(delta) + held
                pieces = len(parser._str_parts)
            else:
                pieces = 0
            assert sum(len(p.value) for p in parser.last_patches if p.op == "append") <= len(delta) + held
            held = len(parser._pending)
        assert parser.complete
        assert parser.value == {"path": "src/app/handler.py", "content": content}


def test_once_the_object_closes_only_whitespace_may_follow_and_the_view_stays() -> None:
    parser = StreamingArguments()
    parser.feed('{"a": "')
    for char in "y" * 50:  # a string in many pieces: joined when the view is read
        parser.feed(char)
    parser.feed('", "b": [1, {"c": 2}]}')
    assert parser.complete
    view = parser.value
    assert view == {"a": "y" * 50, "b": [1, {"c": 2}]}
    assert parser.feed(" \n") == ()
    assert parser.last_patches == ()
    assert parser.complete
    assert parser.value == view
    assert parser.feed("x") == ()
    assert parser.error == "invalid JSON at offset 81: unexpected 'x' after the end of the arguments object"
    assert not parser.complete
    assert parser.value == view
    assert parser.text == '{"a": "' + "y" * 50 + '", "b": [1, {"c": 2}]} \nx'
