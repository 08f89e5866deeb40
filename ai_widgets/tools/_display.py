"""What a notebook shows for a tool and a tool registry: small HTML views, every text escaped.

A tool shows its definition as each provider receives it (with its size), its risk and approval behaviour, its
parameters and its warnings (:meth:`Tool.check`); front ends without HTML get the same as markdown. A registry is a
table of its tools (icon, name, title, risk, whether a call asks for approval, description, warnings) with each
tool's parameters as a tree: nested properties, their types, required marks, descriptions, allowed values. (An
outcome's one line is :func:`ai_widgets.outcome.outcome_html`.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ai_widgets._html import DIM, clipped, cut, escaped, json_text
from ai_widgets._safe import safe_text
from ai_widgets.tools._checks import ToolWarning, check_tool, openai_strict_problems
from ai_widgets.tools._definition import HasDefinition, ToolDefinition, default_approval_reason, definition_of
from ai_widgets.tools._views import BYTES_PER_TOKEN, provider_views

__all__ = ["registry_html", "schema_tree", "tool_html", "tool_markdown"]

MAX_DEPTH = 8  # nested levels of a schema shown; deeper ones say "…"
# A view stays small whatever the tool holds (a 1 MB description, a 5,000-value enum, thousands of properties): what
# is longer is cut, saying how much is left out. Sizes and token estimates are always of the whole definition.
MAX_DESCRIPTION = 4000  # characters of a tool's description shown
MAX_JSON = 20_000  # characters of each provider's JSON shown
MAX_NAME = 200  # characters of a name, title, type or path shown
MAX_PROPERTIES = 200  # properties shown at each level of the parameters' tree
MAX_WARNINGS = 50  # warnings listed
MAX_MESSAGE = 1000  # characters of a warning's message shown
CELL = "text-align: left; vertical-align: top; padding: 4px 8px"
LIST = "list-style: none; margin: 0; padding-left: 1.1em"
RISK = {"read_only": "read-only", "normal": "normal", "destructive": "destructive"}


# --- the parameter schema as a tree ---------------------------------------------------------------------------------


class Schema:
    """Reads a JSON Schema for people: local ``$ref``s resolved (once per branch), unions described."""

    def __init__(self, root: dict[str, Any]) -> None:
        defs = root.get("$defs", root.get("definitions"))
        self.defs: dict[str, Any] = defs if isinstance(defs, dict) else {}

    def resolve(self, node: Any, seen: frozenset[str]) -> tuple[dict[str, Any], frozenset[str], str | None]:
        """The node with its ``$ref`` followed, the refs followed so far, and the name of a ref already on the path
        (a recursive model), if it is one."""
        if not isinstance(node, dict):
            return {}, seen, None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node, seen, None
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return {}, seen, name
        target = self.defs.get(name) if ref.startswith(("#/$defs/", "#/definitions/")) else None
        if not isinstance(target, dict):
            return {}, seen, name
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return merged, seen | {name}, None

    def type_of(self, node: dict[str, Any], seen: frozenset[str]) -> str:
        """A short type: ``string``, ``integer | null``, ``list of string``, ``object``, ``Address``..."""
        alternatives = node.get("anyOf") or node.get("oneOf")
        if isinstance(alternatives, list) and alternatives:
            return " | ".join(self.type_of(*self.resolve(alt, seen)[:2]) for alt in alternatives)
        kind = node.get("type")
        if isinstance(kind, list):
            return " | ".join(str(k) for k in kind)
        if kind == "array":
            items, inner_seen, recursive = self.resolve(node.get("items"), seen)
            if recursive is not None:
                return f"list of {recursive}"
            return f"list of {self.type_of(items, inner_seen)}" if items else "list"
        if isinstance(kind, str):
            return kind
        if "enum" in node:
            return "enum"
        if "const" in node:
            return "constant"
        if isinstance(node.get("properties"), dict):
            return "object"
        return "any"

    def children(self, node: dict[str, Any], seen: frozenset[str]) -> tuple[dict[str, Any], frozenset[str]] | None:
        """The object schema whose properties show under this node (itself, its items, its one non-null
        alternative), or ``None``."""
        if isinstance(node.get("properties"), dict) and node["properties"]:
            return node, seen
        if node.get("type") == "array":
            items, inner_seen, _ = self.resolve(node.get("items"), seen)
            return self.children(items, inner_seen) if items else None
        alternatives = node.get("anyOf") or node.get("oneOf")
        if isinstance(alternatives, list):
            objects = [self.resolve(alt, seen) for alt in alternatives]
            found = [(alt, s) for alt, s, _ in objects if self.children(alt, s) is not None]
            if len(found) == 1:
                return self.children(*found[0])
        return None


def details_line(node: dict[str, Any]) -> str:
    """Allowed values, default, format and bounds, as one dim line of escaped text (empty when none)."""
    shown: list[str] = []
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        values = ", ".join(json_text(v) for v in enum[:20]) + (", …" if len(enum) > 20 else "")
        shown.append(f"one of: {values}")
    if "const" in node:
        shown.append(f"always {json_text(node['const'])}")
    if "default" in node:
        shown.append(f"default {json_text(node['default'])}")
    for key, label in (
        ("format", "format"),
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("pattern", "pattern"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
    ):
        if key in node:
            value = node[key]
            shown.append(f"{label} {value if isinstance(value, (int, float)) else json_text(value)}")
    return escaped(clipped("; ".join(shown), 400)) if shown else ""


def schema_tree(parameters: dict[str, Any]) -> str:
    """A tool's parameters as nested lists: each property with its type, whether it is required, its description
    and its allowed values; nested objects and lists of objects as sub-lists."""
    schema = Schema(parameters)
    root, seen, _ = schema.resolve(parameters, frozenset())
    if not (isinstance(root.get("properties"), dict) and root["properties"]):
        return f'<span style="{DIM}">no parameters</span>'
    return properties_text(schema, root, seen, 0)


def properties_text(schema: Schema, node: dict[str, Any], seen: frozenset[str], depth: int) -> str:
    required = node.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    items = []
    properties = node["properties"]
    for index, (name, raw) in enumerate(properties.items()):
        if index == MAX_PROPERTIES:
            items.append(f'<li><span style="{DIM}">… and {len(properties) - index:,} more</span></li>')
            break
        prop, prop_seen, recursive = schema.resolve(raw, seen)
        kind = recursive if recursive is not None else schema.type_of(prop, prop_seen)
        line = (
            f'<code>{escaped(clipped(name, MAX_NAME))}</code> <em style="{DIM}">{escaped(clipped(kind, MAX_NAME))}</em>'
        )
        if name in required_names:
            line += ' <strong title="required">required</strong>'
        description = prop.get("description") if recursive is None else "(the same structure, nested)"
        if isinstance(description, str) and description.strip():
            line += f" — {escaped(clipped(' '.join(description.split()), 600))}"
        details = details_line(prop)
        if details:
            line += f'<br><span style="{DIM}">{details}</span>'
        nested = None if recursive is not None else schema.children(prop, prop_seen)
        if nested is not None:
            if depth + 1 >= MAX_DEPTH:
                line += f'<br><span style="{DIM}">… (nested deeper)</span>'
            else:
                line += properties_text(schema, nested[0], nested[1], depth + 1)
        items.append(f"<li>{line}</li>")
    return f'<ul style="{LIST}">{"".join(items)}</ul>'


# --- the registry ---------------------------------------------------------------------------------------------------


def warnings_of(item: HasDefinition | ToolDefinition) -> list[ToolWarning]:
    try:
        return check_tool(item)
    except Exception as exc:  # a view never fails for a check's sake
        return [ToolWarning(None, "check-failed", f"The checks could not run: {type(exc).__name__}: {exc}")]


PROVIDER_NAMES = {None: "all providers", "openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Gemini"}


def warning_items(warnings: list[ToolWarning]) -> str:
    items = []
    for w in warnings[:MAX_WARNINGS]:
        where = f" <code>{escaped(clipped(w.path, MAX_NAME))}</code>" if w.path else ""
        items.append(
            f"<li><strong>{escaped(PROVIDER_NAMES.get(w.provider, w.provider))}</strong>{where}: "
            f"{escaped(clipped(w.message, MAX_MESSAGE))} "
            f'<span style="{DIM}">({escaped(w.code)})</span></li>'
        )
    if len(warnings) > MAX_WARNINGS:
        items.append(f'<li><span style="{DIM}">… and {len(warnings) - MAX_WARNINGS:,} more</span></li>')
    return "".join(items)


def registry_html(items: Sequence[HasDefinition | ToolDefinition]) -> str:
    """The tools as a table: icon, name and title; risk; whether a call asks for approval (destructive tools and
    those that require it ask, unless allowed always); description; parameters as a tree; warnings
    (:meth:`Tool.check`)."""
    if not items:
        return f'<div class="aiw-registry"><em style="{DIM}">No tools registered.</em></div>'
    header = "".join(
        f'<th style="{CELL}">{label}</th>'
        for label in ("Tool", "Risk", "Approval", "Description", "Parameters", "Warnings")
    )
    rows = []
    for item in items:
        d = definition_of(item)
        icon = f"<span>{escaped(clipped(d.icon, 16))}</span>&nbsp;" if d.icon else ""
        title = f'<br><span style="{DIM}">{escaped(clipped(d.title, MAX_NAME))}</span>' if d.title else ""
        tool = f'<span style="white-space: nowrap">{icon}<code>{escaped(d.name)}</code></span>{title}'
        reason = default_approval_reason(d)
        approval = (
            f'<span title="because {escaped(reason)}"><strong>asks</strong></span>'
            if reason
            else f'<span style="{DIM}; white-space: nowrap">runs unasked</span>'
        )
        description = (
            escaped(cut(d.description.strip(), MAX_DESCRIPTION))
            if d.description.strip()
            else f'<em style="{DIM}">none</em>'
        )
        warnings = warnings_of(item)
        shown = (
            f'<ul style="{LIST}; padding-left: 0">{warning_items(warnings)}</ul>'
            if warnings
            else f'<span style="{DIM}">none</span>'
        )
        cells = (
            tool,
            f'<span style="white-space: nowrap">{escaped(RISK.get(d.risk.value, d.risk.value))}</span>',
            approval,
            f'<div style="white-space: pre-line; min-width: 12em">{description}</div>',
            schema_tree(d.parameters),
            f'<div style="min-width: 12em">{shown}</div>',
        )
        rows.append("<tr>" + "".join(f'<td style="{CELL}">{cell}</td>' for cell in cells) + "</tr>")
    count = f"{len(items)} tool{'' if len(items) == 1 else 's'}"
    return (
        f'<div class="aiw-registry"><table style="border-collapse: collapse">'
        f'<caption style="text-align: left; {DIM}">ToolRegistry: {count}</caption>'
        f"<thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


# --- one tool: what each provider receives --------------------------------------------------------------------------

# Scoped under .aiw-tool; JupyterLab's variables with fallbacks for other front ends (light and dark follow the theme).
TOOL_CSS = """
.aiw-tool { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, inherit); border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px;
  padding: 8px 12px; max-width: 64em; }
.aiw-tool .aiw-tool-head { font-size: var(--jp-ui-font-size2, 15px); margin-bottom: 4px; }
.aiw-tool .aiw-tool-description { white-space: pre-line; margin: 4px 0 8px; }
.aiw-tool .aiw-dim { color: var(--jp-content-font-color2, #666); }
.aiw-tool .aiw-badge { display: inline-block; padding: 0 6px; border-radius: 8px;
  border: 1px solid var(--jp-border-color2, #ccc); }
.aiw-tool .aiw-risk-destructive { color: var(--jp-error-color1, #d32f2f); border-color: currentColor; }
.aiw-tool .aiw-risk-read_only { color: var(--jp-success-color1, #388e3c); border-color: currentColor; }
.aiw-tool .aiw-warnings { border-left: 3px solid var(--jp-warn-color1, #f57c00); padding: 2px 8px; margin: 8px 0;
  background: var(--jp-layout-color2, transparent); }
.aiw-tool .aiw-warnings ul { margin: 4px 0; padding-left: 1.2em; }
.aiw-tool .aiw-section { margin: 8px 0 4px; font-weight: bold; }
.aiw-tool details { margin: 2px 0; }
.aiw-tool summary { cursor: pointer; }
.aiw-tool pre { background: var(--jp-layout-color2, #f5f5f5); color: var(--jp-content-font-color1, inherit);
  font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 12px);
  padding: 6px 8px; margin: 4px 0; max-height: 28em; overflow: auto; white-space: pre; }
"""


def approval_line(definition: ToolDefinition) -> str:
    reason = default_approval_reason(definition)
    if reason:
        return (
            f"The default approval policy asks a person before every call, because {reason} (until they choose "
            '"allow always" for this session).'
        )
    return (
        "The default approval policy runs calls without asking (it asks only for destructive tools and those "
        "marked requires_approval)."
    )


def strict_note(view_strict: bool | None, strict_problems: list[ToolWarning]) -> str:
    if view_strict is None:
        return ""
    state = "on" if view_strict else "off (arguments are validated against the schema before the tool runs)"
    if not strict_problems:
        return f"Strict mode: {state}. This schema would qualify for it."
    more = f" ({len(strict_problems) - 1} more)" if len(strict_problems) > 1 else ""
    return f"Strict mode: {state}. This schema would not qualify for it: {strict_problems[0].message}{more}"


def tool_html(item: HasDefinition | ToolDefinition) -> str:
    """A tool as a notebook shows it: icon, title and name; description; risk and whether the default policy asks
    (and why); its warnings; its parameters; then, per provider API, a collapsible block with the exact JSON of its
    entry in the request, and its size in bytes and estimated tokens. Every text is escaped."""
    d = definition_of(item)
    icon = f"<span>{escaped(clipped(d.icon, 16))}</span> " if d.icon else ""
    title = f"<strong>{escaped(clipped(d.title, MAX_NAME))}</strong> " if d.title else ""
    head = f'<div class="aiw-tool-head">{icon}{title}<code>{escaped(d.name)}</code></div>'
    description = (
        f'<div class="aiw-tool-description">{escaped(cut(d.description.strip(), MAX_DESCRIPTION))}</div>'
        if d.description.strip()
        else '<div class="aiw-tool-description aiw-dim"><em>No description.</em></div>'
    )
    risk = RISK.get(d.risk.value, d.risk.value)
    behaviour = (
        f'<div>Risk: <span class="aiw-badge aiw-risk-{escaped(d.risk.value)}">{escaped(risk)}</span>. '
        f"{escaped(approval_line(d))}</div>"
    )
    warnings = warnings_of(item)
    if warnings:
        count = f"{len(warnings)} warning{'' if len(warnings) == 1 else 's'}"
        checks = f'<div class="aiw-warnings"><strong>{count}</strong><ul>{warning_items(warnings)}</ul></div>'
    else:
        checks = '<div class="aiw-dim">No warnings: every provider takes this definition as it is.</div>'
    parameters = f'<div class="aiw-section">Parameters</div>{schema_tree(d.parameters)}'
    strict_problems = openai_strict_problems(d.parameters)
    blocks = []
    for view in provider_views(item):
        note = strict_note(view.strict, strict_problems)
        note_html = f'<div class="aiw-dim">{escaped(clipped(note, MAX_MESSAGE))}</div>' if note else ""
        pretty = cut(json.dumps(view.definition, indent=2, ensure_ascii=False, default=repr), MAX_JSON)
        blocks.append(
            f"<details><summary><strong>{escaped(view.label)}</strong> "
            f'<span class="aiw-dim">{view.size:,} bytes, about {view.tokens:,} tokens</span></summary>'
            f"{note_html}<pre>{escaped(pretty)}</pre></details>"
        )
    providers = (
        '<div class="aiw-section">As each provider receives it</div>'
        f'<div class="aiw-dim">Sizes are of the JSON as sent (compact, UTF-8); tokens are an estimate at about '
        f"{BYTES_PER_TOKEN} bytes each, before the provider's own template. Shown indented.</div>" + "".join(blocks)
    )
    return (
        f'<div class="aiw-tool"><style>{TOOL_CSS}</style>'
        f"{head}{description}{behaviour}{checks}{parameters}{providers}</div>"
    )


# CommonMark lets any ASCII punctuation be escaped with a backslash, which makes it a literal character: text from a
# tool author cannot become markup, links or raw HTML in a markdown front end.
MD_PUNCTUATION = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")


def md_text(value: object) -> str:
    lines = [MD_PUNCTUATION.sub(r"\\\1", line.strip()) for line in safe_text(str(value)).splitlines()]
    return "  \n".join(lines)


def md_code(value: object) -> str:
    text = " ".join(safe_text(str(value)).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"{fence}{text}{fence}"


def md_block(text: str, info: str = "") -> str:
    text = safe_text(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_parameters(parameters: dict[str, Any]) -> list[str]:
    properties = parameters.get("properties")
    if not isinstance(properties, dict) or not properties:
        return ["*no parameters*"]
    required = parameters.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    schema = Schema(parameters)
    lines = []
    for index, (name, raw) in enumerate(properties.items()):
        if index == MAX_PROPERTIES:
            lines.append(f"- … and {len(properties) - index:,} more")
            break
        prop, seen, recursive = schema.resolve(raw, frozenset())
        kind = clipped(recursive if recursive is not None else schema.type_of(prop, seen), MAX_NAME)
        line = f"- {md_code(clipped(name, MAX_NAME))} ({md_text(kind)}{', required' if name in required_names else ''})"
        described = prop.get("description")
        if isinstance(described, str) and described.strip():
            line += f": {md_text(clipped(' '.join(described.split()), 600))}"
        lines.append(line)
    return lines


def tool_markdown(item: HasDefinition | ToolDefinition) -> str:
    """The same as :func:`tool_html`, as markdown for front ends without HTML; every text escaped."""
    d = definition_of(item)
    heading = " ".join(
        part for part in (md_text(clipped(d.icon or "", 16)), md_text(clipped(d.title or "", MAX_NAME))) if part
    )
    lines = [f"### {heading + ' ' if heading else ''}{md_code(d.name)}", ""]
    description = d.description.strip()
    lines += [md_text(cut(description, MAX_DESCRIPTION)) if description else "*No description.*", ""]
    reason = default_approval_reason(d)
    approval = f"asks before every call, because {reason}" if reason else "runs calls without asking"
    lines += [f"**Risk:** {md_text(RISK.get(d.risk.value, d.risk.value))}. **Approval:** {md_text(approval)}.", ""]
    warnings = warnings_of(item)
    if warnings:
        lines.append(f"**{len(warnings)} warning{'' if len(warnings) == 1 else 's'}:**")
        for w in warnings[:MAX_WARNINGS]:
            where = f" at {md_code(clipped(w.path, MAX_NAME))}" if w.path else ""
            message = md_text(clipped(w.message, MAX_MESSAGE))
            lines.append(f"- **{md_text(PROVIDER_NAMES.get(w.provider, w.provider))}**{where}: {message}")
        if len(warnings) > MAX_WARNINGS:
            lines.append(f"- … and {len(warnings) - MAX_WARNINGS:,} more")
    else:
        lines.append("No warnings: every provider takes this definition as it is.")
    lines += ["", "**Parameters:**", "", *md_parameters(d.parameters), ""]
    lines.append(
        f"**As each provider receives it** (sizes of the JSON as sent, compact UTF-8; tokens estimated at about "
        f"{BYTES_PER_TOKEN} bytes each):"
    )
    for view in provider_views(item):
        pretty = cut(json.dumps(view.definition, indent=2, ensure_ascii=False, default=repr), MAX_JSON)
        lines += [
            "",
            f"**{md_text(view.label)}**: {view.size:,} bytes, about {view.tokens:,} tokens",
            "",
            md_block(pretty, "json"),
        ]
    return "\n".join(lines) + "\n"
