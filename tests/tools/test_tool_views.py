"""What the model sees of a tool: each provider's JSON (the transports' own mapping), its size, ``Tool.check()``'s
warnings, and the HTML and markdown a notebook shows."""

from __future__ import annotations

import asyncio
import json
import math
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

import ai_widgets
from ai_widgets import (
    DefaultApprovalPolicy,
    Message,
    Tool,
    ToolDefinition,
    ToolInvocation,
    ToolRegistry,
    ToolRisk,
    ToolWarning,
    tool,
)
from ai_widgets.approval import default_approval_reason
from ai_widgets.demo import demo_tools, get_weather
from ai_widgets.tools import _checks
from ai_widgets.tools import _formats as formats
from ai_widgets.tools._checks import openai_strict_problems
from ai_widgets.tools._display import registry_html, tool_html, tool_markdown
from ai_widgets.tools._views import estimate_tokens, provider_definitions, provider_views
from ai_widgets.transports import ChatRequest
from tests.helpers import raw_tool

RECORDED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "tool_requests" / "recorded_tools.json").read_text("utf-8")
)
PROVIDERS = ["openai_chat", "openai_responses", "anthropic", "gemini"]


def handler(invocation: ToolInvocation) -> None:
    return None


def definition_tool(**fields: Any) -> Tool:
    return Tool(ToolDefinition(**fields), handler)


def codes(item: Tool) -> list[tuple[str | None, str]]:
    return [(w.provider, w.code) for w in item.check()]


# --- each provider's JSON is what its transport sends ---------------------------------------------------------------


def transport(provider: str) -> Any:
    sdk = {"openai_chat": "openai", "openai_responses": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
    pytest.importorskip(sdk[provider])
    from ai_widgets.transports import (
        AnthropicTransport,
        GeminiTransport,
        OpenAIChatTransport,
        OpenAIResponsesTransport,
    )

    classes = {
        "openai_chat": OpenAIChatTransport,
        "openai_responses": OpenAIResponsesTransport,
        "anthropic": AnthropicTransport,
        "gemini": GeminiTransport,
    }
    return classes[provider](api_key="test-key")


def sent_tools(provider: str, definitions: list[ToolDefinition]) -> list[dict[str, Any]]:
    """The tool entries of the request body the provider's transport builds."""
    body = transport(provider).request_body(ChatRequest(messages=[Message.user("hi")], tools=definitions))
    if provider == "gemini":
        (entry,) = body["tools"]
        return list(entry["functionDeclarations"])
    return list(body["tools"])


class Address(BaseModel):
    street: str = Field(description="Street and number.")
    postcode: str | None = None


@tool
def send_parcel(to: Annotated[Address, Field(description="Where to")], weight_kg: float = 1.0) -> str:
    """Sends a parcel. ``<fragile>`` — handle with care.

    Args:
        weight_kg: Its weight in kilograms.
    """
    return "sent"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_view_is_what_the_transport_puts_in_its_request(provider: str) -> None:
    tools = [*demo_tools(), send_parcel]
    sent = sent_tools(provider, [t.definition for t in tools])
    assert sent == [provider_definitions(t)[provider] for t in tools]
    views = {view.provider: view for view in provider_views(get_weather)}
    assert list(views) == PROVIDERS
    assert views[provider].definition == sent[0]


def test_the_quickstart_weather_tool_as_each_provider_receives_it() -> None:
    schema = {
        "properties": {
            "city": {"description": 'The city, e.g. "Lisbon".', "type": "string"},
            "unit": {"default": "celsius", "description": '"celsius" or "fahrenheit".', "type": "string"},
        },
        "required": ["city"],
        "type": "object",
    }
    description = "Gets the current weather for a city."
    assert provider_definitions(get_weather) == {
        "openai_chat": {
            "type": "function",
            "function": {"name": "get_weather", "description": description, "parameters": schema},
        },
        "openai_responses": {
            "type": "function",
            "name": "get_weather",
            "description": description,
            "parameters": schema,
            "strict": False,
        },
        "anthropic": {"name": "get_weather", "description": description, "input_schema": schema},
        "gemini": {"name": "get_weather", "description": description, "parametersJsonSchema": schema},
    }


def test_gemini_leaves_an_empty_description_out() -> None:
    bare = definition_tool(name="ping")
    assert provider_definitions(bare)["gemini"] == {
        "name": "ping",
        "parametersJsonSchema": {"type": "object", "properties": {}},
    }
    assert provider_definitions(bare)["anthropic"]["description"] == ""


# --- against requests really sent to each provider --------------------------------------------------------------------


def recorded_definition(name: str, description: str | None, parameters: dict[str, Any]) -> ToolDefinition:
    return ToolDefinition(name=name, description=description or "", parameters=parameters)


def test_chat_mapping_reproduces_a_recorded_chat_request() -> None:
    """21 tools of a request pydantic-ai sent to api.openai.com: the ones it sent without strict mode are exactly what
    this mapping sends; the others differ only by ``strict``, which these transports never ask for."""
    recorded = RECORDED["openai_chat"]["tools"]
    definitions = [
        recorded_definition(f["name"], f["description"], f["parameters"]) for f in (e["function"] for e in recorded)
    ]
    ours = sent_tools("openai_chat", definitions)
    exact = 0
    for mine, theirs in zip(ours, recorded, strict=True):
        if "strict" in theirs["function"]:
            assert theirs["function"]["strict"] is True
            theirs = {**theirs, "function": {k: v for k, v in theirs["function"].items() if k != "strict"}}
        else:
            exact += 1
        assert mine == theirs
    assert exact >= 10  # get_country, get_error (a default), get_product_name...
    assert ours == [provider_definitions(Tool(d, handler))["openai_chat"] for d in definitions]


def test_responses_mapping_against_a_recorded_responses_request() -> None:
    (theirs,) = RECORDED["openai_responses"]["tools"]
    definition = recorded_definition(theirs["name"], theirs["description"], theirs["parameters"])
    (mine,) = sent_tools("openai_responses", [definition])
    assert set(mine) == set(theirs)
    # pydantic-ai sent no description as null and asked for strict mode; this library sends its empty description
    # and strict false (OPENAI_STRICT). Everything that comes from the definition is the same.
    assert {k: v for k, v in mine.items() if k not in ("description", "strict")} == {
        k: v for k, v in theirs.items() if k not in ("description", "strict")
    }
    assert (theirs["description"], theirs["strict"]) == (None, True)
    assert (mine["description"], mine["strict"]) == ("", False)


def test_anthropic_mapping_reproduces_a_recorded_anthropic_request_exactly() -> None:
    recorded = RECORDED["anthropic"]["tools"]
    definitions = [recorded_definition(t["name"], t["description"], t["input_schema"]) for t in recorded]
    assert sent_tools("anthropic", definitions) == recorded


def test_gemini_mapping_against_a_recorded_gemini_request() -> None:
    (entry,) = RECORDED["gemini"]["tools"]
    (theirs,) = entry["functionDeclarations"]
    definition = recorded_definition(theirs["name"], theirs["description"], theirs["parameters_json_schema"])
    (mine,) = sent_tools("gemini", [definition])
    # The same declaration, with the JSON name of the field (Gemini takes either) and no empty description.
    camel = {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): v for k, v in theirs.items()}
    assert theirs["description"] == ""
    assert mine == {k: v for k, v in camel.items() if k != "description"}


# --- size and tokens ------------------------------------------------------------------------------------------------


def test_sizes_are_bytes_of_compact_utf8_json_and_tokens_an_estimate() -> None:
    @tool(name="cafe")
    def café(naïve: Annotated[str, Field(description="Ünïcödé 🌍 text")]) -> str:
        """Fait un café ☕."""
        return naïve

    for view in provider_views(café):
        sent = json.dumps(view.definition, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        assert view.size == len(sent)
        assert view.size > len(sent.decode("utf-8"))  # bytes, not characters
        assert view.tokens == math.ceil(view.size / 4) == estimate_tokens(view.size)
    sizes = {view.provider: view.size for view in provider_views(café)}
    assert sizes["openai_chat"] != sizes["anthropic"]  # each measured on its own JSON


def test_views_say_whether_openai_strict_mode_is_used() -> None:
    views = {view.provider: view for view in provider_views(get_weather)}
    assert views["openai_chat"].strict is False
    assert "strict" not in views["openai_chat"].definition["function"]
    assert views["openai_responses"].strict is False
    assert views["anthropic"].strict is None
    assert views["gemini"].strict is None


# --- Tool.check() ---------------------------------------------------------------------------------------------------


def test_clean_tools_have_no_warnings() -> None:
    for item in demo_tools():
        assert item.check() == [], item.name
    assert send_parcel.check() == []


def test_tool_warning_is_public_small_and_frozen() -> None:
    assert "ToolWarning" in ai_widgets.__all__
    assert "ToolWarning" in ai_widgets.tools.__all__
    warning = ToolWarning("gemini", "some-code", "Say what.", "$.properties.x")
    with pytest.raises(AttributeError):
        warning.code = "other"  # type: ignore[misc]
    assert str(warning) == "[gemini] some-code: Say what. (at $.properties.x)"
    assert str(ToolWarning(None, "c", "M.")) == "[all providers] c: M."


def test_missing_descriptions() -> None:
    @tool
    def undocumented(x: int) -> int:
        return x

    assert codes(undocumented) == [(None, "missing-description"), (None, "missing-parameter-description")]
    assert undocumented.check()[1].path == "$.properties.x"

    @tool
    def documented(x: int) -> int:
        """Doubles a number.

        Args:
            x: The number.
        """
        return x

    assert documented.check() == []


def test_a_value_json_cannot_carry() -> None:
    @tool
    def scale(factor: float = math.nan) -> float:
        """Scales.

        Args:
            factor: The factor.
        """
        return factor

    (warning,) = scale.check()
    assert (warning.provider, warning.code, warning.path) == (None, "not-json", "$.properties.factor.default")

    @tool
    def scale_ok(factor: float = 1.5) -> float:
        """Scales.

        Args:
            factor: The factor.
        """
        return factor

    assert scale_ok.check() == []


def test_a_reference_that_points_nowhere() -> None:
    broken = definition_tool(
        name="find",
        description="Finds.",
        parameters={
            "type": "object",
            "properties": {"q": {"$ref": "#/definitions/Query", "description": "The query."}},
            "$defs": {"Query": {"type": "string"}},
        },
    )
    assert (None, "unresolved-ref") in codes(broken)
    fixed = definition_tool(
        name="find",
        description="Finds.",
        parameters={
            "type": "object",
            "properties": {"q": {"$ref": "#/$defs/Query", "description": "The query."}},
            "$defs": {"Query": {"type": "string"}},
        },
    )
    assert fixed.check() == []


def test_a_parameter_the_model_can_never_fill() -> None:
    @tool
    def make(
        kind: Annotated[type[int], Field(description="A class.")], extra: Annotated[Any, Field(description="Anything.")]
    ) -> str:
        """Makes one."""
        return str(kind)

    warnings = make.check()
    assert [(w.code, w.path) for w in warnings] == [("unfillable-parameter", "$.properties.kind")]
    # ``Any`` has the same empty schema, but the model can fill it: no warning for it.

    impossible = definition_tool(
        name="never",
        description="Never.",
        parameters={"type": "object", "properties": {"x": {"not": {}, "description": "Nothing fits."}}},
    )
    assert codes(impossible) == [(None, "unfillable-parameter"), ("gemini", "gemini-unsupported-keyword")]
    assert impossible.check()[0].path == "$.properties.x"


def test_names_each_provider_refuses() -> None:
    digit_first = definition_tool(name="2fa_code", description="Reads a code.")
    assert codes(digit_first) == [("gemini", "invalid-name")]
    assert "2fa_code" in digit_first.check()[0].message
    assert definition_tool(name="read_file-2", description="Reads.").check() == []
    # ToolDefinition refuses what OpenAI refuses, so the other rules only show on the rule itself (they stay, in case
    # a provider's rule and the definition's ever part).
    assert [(w.provider, w.code) for w in _checks.names("fs.read")] == [
        ("openai", "invalid-name"),
        ("anthropic", "invalid-name"),
    ]
    assert [w.provider for w in _checks.names("a" * 65)] == ["openai", "gemini"]
    assert [w.provider for w in _checks.names("a" * 129)] == ["openai", "anthropic", "gemini"]
    assert _checks.names("a" * 64) == []


def test_an_array_without_items_for_openai() -> None:
    @tool
    def locate(point: Annotated[tuple[float, float], Field(description="Latitude and longitude.")]) -> str:
        """Locates a point."""
        return "here"

    (warning,) = locate.check()
    assert (warning.provider, warning.code, warning.path) == ("openai", "openai-array-items", "$.properties.point")

    @tool
    def locate_list(point: Annotated[list[float], Field(description="Latitude and longitude.")]) -> str:
        """Locates a point."""
        return "here"

    assert locate_list.check() == []


def test_openai_strict_mode_rules_apply_only_where_strict_mode_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    strict_ready = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": ["string", "null"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    }
    assert openai_strict_problems(strict_ready) == []
    loose = get_weather.definition.parameters  # "unit" is optional, no additionalProperties: false
    problems = openai_strict_problems(loose)
    assert {p.code for p in problems} == {"openai-strict-optional", "openai-strict-additional-properties"}
    assert "'unit'" in next(p.message for p in problems if p.code == "openai-strict-optional")
    assert [p.code for p in openai_strict_problems({**strict_ready, "allOf": [{}]})] == ["openai-strict-keyword"]
    assert openai_strict_problems({"anyOf": [strict_ready]})[0].code == "openai-strict-root"
    # The transports do not use strict mode, so the clean quickstart tool has no warning about it...
    assert get_weather.check() == []
    # ...and were they to, check() would say what strict mode refuses (it reads the mapping the transports use).
    monkeypatch.setattr(formats, "OPENAI_STRICT", True)
    assert provider_definitions(get_weather)["openai_responses"]["strict"] is True
    assert provider_definitions(get_weather)["openai_chat"]["function"]["strict"] is True
    assert {w.code for w in get_weather.check()} == {"openai-strict-optional", "openai-strict-additional-properties"}


def test_a_schema_anthropic_refuses() -> None:
    typo = definition_tool(
        name="count",
        description="Counts.",
        parameters={"type": "object", "properties": {"n": {"type": "integr", "description": "How many."}}},
    )
    (warning,) = [w for w in typo.check() if w.provider == "anthropic"]
    assert warning.code == "anthropic-invalid-schema"
    assert warning.path == "$.properties.n.type"
    fixed = definition_tool(
        name="count",
        description="Counts.",
        parameters={"type": "object", "properties": {"n": {"type": "integer", "description": "How many."}}},
    )
    assert fixed.check() == []


def test_keywords_beside_a_ref_for_gemini() -> None:
    def with_ref(**beside: Any) -> Tool:
        return definition_tool(
            name="tree",
            description="A tree.",
            parameters={
                "type": "object",
                "properties": {"root": {"$ref": "#/$defs/Node", **beside}},
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                    }
                },
            },
        )

    assert codes(with_ref(title="Root", description="The root.")) == [("gemini", "gemini-ref-siblings")]
    assert with_ref(title="Root", description="The root.").check()[0].path == "$.properties.root"
    assert with_ref(description="The root.", default=None).check() == []


class Chain(BaseModel):
    value: int
    next: Chain


class Branch(BaseModel):
    value: int
    next: Branch | None = None


class Node(BaseModel):
    name: str
    children: list[Node]


class Crowd(BaseModel):
    name: str
    members: Annotated[list[Crowd], Field(min_length=1)]


def test_recursion_gemini_cannot_end() -> None:
    @tool
    def chain(first: Annotated[Chain, Field(description="The first link.")]) -> str:
        """Follows a chain."""
        return "ok"

    (warning,) = chain.check()
    assert (warning.provider, warning.code) == ("gemini", "gemini-required-ref-loop")
    assert warning.path == "$.properties.first.properties.next"

    @tool
    def crowd(first: Annotated[Crowd, Field(description="The first.")]) -> str:
        """A crowd that always has members."""
        return "ok"

    assert codes(crowd) == [("gemini", "gemini-required-ref-loop")]

    @tool
    def branch(
        first: Annotated[Branch, Field(description="The first link.")],
        tree: Annotated[Node, Field(description="A tree.")],
    ) -> str:
        """Optional and possibly empty recursion: Gemini unrolls it."""
        return "ok"

    assert branch.check() == []


def test_keywords_outside_geminis_schema() -> None:
    @tool
    def pick(
        mode: Annotated[Literal["fast"], Field(description="The only mode.")],
        tags: Annotated[set[str], Field(description="Tags.")],
        pair: Annotated[set[str], Field(description="Two more.")],
    ) -> str:
        """Picks."""
        return "ok"

    warnings = [w for w in pick.check() if w.provider == "gemini"]
    assert [(w.code, w.path) for w in warnings] == [
        ("gemini-unsupported-keyword", "$.properties.mode.const"),
        ("gemini-unsupported-keyword", "$.properties.tags.uniqueItems"),
    ]
    assert "'uniqueItems'" in warnings[1].message
    assert "2 times" in warnings[1].message

    @tool
    def pick_ok(mode: Annotated[Literal["fast", "slow"], Field(description="The mode.")]) -> str:
        """Picks."""
        return "ok"

    assert pick_ok.check() == []


def test_checks_are_listed_with_their_sources() -> None:
    # Every rule that names a provider cites where the rule comes from, next to it in the module.
    source = Path(_checks.__file__).read_text("utf-8")
    for citation in (
        "function_definition.py",
        "claude-code#63673",
        "llxprt-code#482",
        "google/genai/types.py",
        "juspay/juspay-mcp#132",
        "opencode#12295",
        "array schema missing items",
        "structured-outputs",
    ):
        assert citation in source, citation


# --- the approval line ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("risk", "requires", "reason"),
    [
        (ToolRisk.READ_ONLY, False, None),
        (ToolRisk.NORMAL, False, None),
        (ToolRisk.DESTRUCTIVE, False, "its risk is destructive"),
        (ToolRisk.NORMAL, True, "it is marked requires_approval"),
        (ToolRisk.DESTRUCTIVE, True, "its risk is destructive and it is marked requires_approval"),
    ],
)
def test_the_shown_approval_behaviour_is_the_default_policys(
    risk: ToolRisk, requires: bool, reason: str | None
) -> None:
    definition = ToolDefinition(name="t", description="T.", risk=risk, requires_approval=requires)
    assert default_approval_reason(definition) == reason
    asks = asyncio.run(DefaultApprovalPolicy().requires_approval(definition, ToolInvocation("c", "t")))
    assert asks is (reason is not None)
    html = Tool(definition, handler)._repr_html_()
    if reason is None:
        assert "runs calls without asking" in html
    else:
        assert f"asks a person before every call, because {reason}" in html


# --- HTML and markdown ----------------------------------------------------------------------------------------------


class _Tags(HTMLParser):
    VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.balanced = True
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.balanced = False


def parse(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    assert parser.balanced, html
    assert not parser.stack, html
    return parser


HOSTILE = "<script>alert(1)</script>"


@tool(title="Send <b>now</b>", icon="📦", risk=ToolRisk.DESTRUCTIVE)
def hostile(
    body: Annotated[str, Field(description=f"The body. {HOSTILE}")],
    when: Annotated[tuple[int, int], Field(description="Hour and minute.")],
) -> str:
    """Sends it. <script>alert(1)</script> & more ```json fences```"""
    return body


def test_html_shows_the_definition_per_provider_with_sizes() -> None:
    html = get_weather._repr_html_()
    tags = parse(html)
    assert tags.tags.count("details") == 4
    for view in provider_views(get_weather):
        assert escape(view.label) in html
        assert escape(json.dumps(view.definition, indent=2, ensure_ascii=False)) in html
        assert f"{view.size:,} bytes, about {view.tokens:,} tokens" in html
    assert "🌦" in html
    assert "<strong>Weather</strong>" in html
    assert "<code>get_weather</code>" in html
    assert "Gets the current weather for a city." in html
    assert "read-only" in html
    assert "runs calls without asking" in html
    assert "No warnings" in html
    assert "<code>city</code>" in html  # the parameters as a tree
    assert "Strict mode: off" in html
    assert "This schema would not qualify for it" in html  # "unit" is optional
    assert "This schema would qualify" in strict_ready_tool()._repr_html_()


def strict_ready_tool() -> Tool:
    return definition_tool(
        name="strict_ready",
        description="Qualifies for strict mode.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
            "additionalProperties": False,
        },
    )


def test_html_escapes_everything_a_tool_author_wrote() -> None:
    html = hostile._repr_html_()
    parse(html)
    assert "<script>" not in html
    assert "<b>now" not in html
    assert escape(HOSTILE) in html
    assert "Send &lt;b&gt;now&lt;/b&gt;" in html
    # The JSON blocks are escaped too (the description is in each one).
    assert html.count(escape(json.dumps(HOSTILE)[1:-1])) >= 4
    # Its warnings are shown, escaped.
    assert "openai-array-items" in html
    assert "1 warning" in html
    assert "because its risk is destructive" in html


def test_html_css_is_scoped_and_themed() -> None:
    html = get_weather._repr_html_()
    (css,) = re.findall(r"<style>(.*?)</style>", html, re.S)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", css) for s in block.split(",")]
    assert selectors
    assert all(s.startswith(".aiw-tool") for s in selectors), selectors
    for value in re.findall(r"var\(([^)]*)\)", css):
        assert value.startswith("--jp-"), value  # a JupyterLab variable...
        assert "," in value, value  # ...with a fallback
    assert html.startswith('<div class="aiw-tool">')


def test_mimebundle_has_markdown_for_front_ends_without_html() -> None:
    bundle = hostile._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "text/markdown"}
    assert bundle["text/plain"] == repr(hostile)
    assert bundle["text/html"] == hostile._repr_html_()
    markdown = bundle["text/markdown"]
    # No raw HTML of the author's gets through: every < is escaped outside the code blocks.
    blocks = re.findall(r"^(`{3,})json\n(.*?)\n\1$", markdown, re.S | re.M)
    outside = re.sub(r"^(`{3,})json\n.*?\n\1$", "", markdown, flags=re.S | re.M)
    assert "<" not in outside.replace("\\<", "")
    assert "\\<script\\>" in outside
    # The JSON of each provider, whole, in a fence longer than any backtick run inside it.
    assert [json.loads(text) for _, text in blocks] == list(provider_definitions(hostile).values())
    assert all(len(fence) > 3 for fence, _ in blocks)  # the description has a ``` run
    for view in provider_views(hostile):
        assert f"{view.size:,} bytes, about {view.tokens:,} tokens" in markdown
    assert "openai\\-array\\-items" not in outside  # warnings shown by message...
    assert "array schema missing items" in outside.replace("\\", "")
    assert "because its risk is destructive" in outside


def test_a_bare_definition_has_a_view_too() -> None:
    html = definition_tool(name="ping")._repr_html_()
    parse(html)
    assert "No description." in html
    assert "no parameters" in html
    assert "missing-description" in html


# --- the registry shows every tool's warnings -----------------------------------------------------------------------


def test_registry_html_shows_the_warnings_of_every_tool() -> None:
    odd = definition_tool(
        name="odd",
        description="Odd.",
        parameters={"type": "object", "properties": {"<img src=x onerror=alert(1)>": {"type": "array"}}},
    )
    html = ToolRegistry([get_weather, odd])._repr_html_()
    parse(html)
    assert "<img" not in html
    rows = html.split("<tr>")[2:]
    weather_row, odd_row = rows
    assert ">Warnings</th>" in html
    assert weather_row.rstrip().endswith("none</span></div></td></tr>")
    assert "missing-parameter-description" in odd_row
    assert "openai-array-items" in odd_row
    assert escape('$.properties["<img src=x onerror=alert(1)>"]') in odd_row


def test_the_views_of_a_tool_with_a_megabyte_description_stay_small() -> None:
    """Before: a 1 MB description made a 9 MB HTML view (it is in the head and in each provider's JSON) and a 10 MB
    markdown view, sent to the front end and saved in the notebook."""

    @tool(description="A" * 1_000_000)
    def big(x: Annotated[int, Field(description="B" * 1_000_000)]) -> int:
        return x

    html, markdown, table = tool_html(big), tool_markdown(big), registry_html([big])
    assert len(html) < 150_000
    assert len(markdown) < 150_000
    assert len(table) < 20_000
    assert "more characters" in html
    assert "more characters" in markdown
    assert "more characters" in table
    # The sizes stay those of the whole definition, as sent.
    assert all(view.size > 2_000_000 for view in provider_views(big))
    assert f"{provider_views(big)[0].size:,} bytes" in html


@pytest.mark.slow  # jsonschema checks the 5,000-parameter schema: seconds
def test_a_five_thousand_value_enum_and_five_thousand_parameters_stay_small() -> None:
    values = tuple(f"value-{i}" for i in range(5000))
    enum = raw_tool(
        {"type": "object", "properties": {"x": {"type": "string", "enum": list(values), "description": "d"}}}
    )
    assert len(tool_html(enum)) < 150_000
    many = raw_tool({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}})
    html, markdown = tool_html(many), tool_markdown(many)
    assert len(html) < 200_000  # 5,000 parameters and 5,000 warnings (no descriptions) were all listed
    assert len(markdown) < 200_000
    assert "… and 4,800 more" in html
    assert "… and 4,950 more" in html  # the warnings
    assert len(registry_html([many])) < 100_000


def test_names_titles_and_descriptions_are_escaped_in_every_view() -> None:
    """Guards what already held (and still holds with the views clipped)."""

    @tool(title="<script>alert(1)</script>\u202e\u200b", icon="<img src=x onerror=alert(1)>")
    def shady(q: Annotated[str, Field(description="</pre><script>x</script>")]) -> str:
        """<b>bold</b> & "quoted" </details>"""
        return q

    for html in (tool_html(shady), registry_html([shady])):
        assert "<script" not in html
        assert "<img" not in html
        assert "<b>" not in html
        assert "&lt;script&gt;" in html


def nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    inner = schema
    for _ in range(levels):
        child: dict[str, Any] = {"type": "object", "properties": {}, "description": "d"}
        inner["properties"]["x"] = child
        inner = child
    return schema


def test_a_schema_that_contains_itself_or_nests_thousands_deep_is_refused_at_once() -> None:
    """Before: both were taken, and then ``check()``, the HTML and markdown views and every request that offered
    the tool raised ``RecursionError`` (or recursed forever)."""
    cyclic: dict[str, Any] = {"type": "object", "properties": {}}
    cyclic["properties"]["self"] = cyclic
    with pytest.raises(ValueError, match="nest deeper than 200 levels"):
        ToolDefinition(name="cyclic", parameters=cyclic)
    with pytest.raises(ValueError, match="nest deeper than 200 levels"):
        ToolDefinition(name="deep", parameters=nested(5000))
    deep_enough = raw_tool(nested(95))  # 191 levels: taken, and every view and check works
    assert deep_enough.check() == []
    tool_html(deep_enough)
    tool_markdown(deep_enough)
    registry_html([deep_enough])


def test_lone_surrogates_are_reported_and_never_break_a_view() -> None:
    """Before: ``check()`` said nothing of a lone surrogate (every request fails to encode), its warnings could not be
    printed, and the views held it (a Jupyter display message cannot carry it)."""
    odd = raw_tool(
        {
            "type": "object",
            "properties": {
                "x\ud800": {"type": "string", "description": "d"},
                "y": {"default": "\udcff", "description": "d"},
            },
        },
        description="Reads \udce9 bytes.",
    )
    warnings_ = odd.check()
    found = {(w.code, w.path) for w in warnings_}
    assert ("not-utf8", None) in found  # the description
    assert ("not-utf8", '$.properties["x\\ud800"]') in found
    assert ("not-utf8", "$.properties.y.default") in found
    for warning in warnings_:
        str(warning).encode("utf-8")
    tool_html(odd).encode("utf-8")
    tool_markdown(odd).encode("utf-8")
    registry_html([odd]).encode("utf-8")


def test_a_required_parameter_that_is_not_among_the_properties_is_reported() -> None:
    ghost = raw_tool(
        {"type": "object", "properties": {"x": {"type": "string", "description": "d"}}, "required": ["x", "ghost"]}
    )
    assert [(w.code, w.path) for w in ghost.check()] == [("undeclared-required", "$.required")]
    assert "'ghost'" in ghost.check()[0].message
