"""What a notebook shows for a tool registry and for a tool's outcome: small HTML views, every text escaped.

A registry is a table of its tools (icon, name, title, risk, whether a call asks for approval, description) with
each tool's parameters as a tree: nested properties, their types, required marks, descriptions, allowed values.
An outcome is one line: its value or text, or its failure.
"""

from __future__ import annotations

import json
import weakref
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ai_widgets.tools import ToolDefinition, ToolOutcome

__all__ = ["display_outcome", "mark_shown_by_card", "outcome_html", "outcome_summary", "registry_html", "schema_tree"]

_MAX_DEPTH = 8  # nested levels of a schema shown; deeper ones say "…"
_MAX_SHOWN = 300  # characters of an outcome's value shown in its one line
_DIM = "color: var(--jp-content-font-color2, #666)"
_CELL = "text-align: left; vertical-align: top; padding: 4px 8px"
_LIST = "list-style: none; margin: 0; padding-left: 1.1em"
_RISK = {"read_only": "read-only", "normal": "normal", "destructive": "destructive"}


def _text(value: object) -> str:
    return escape(str(value), quote=True)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


# --- the parameter schema as a tree ---------------------------------------------------------------------------------


class _Schema:
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


def _details(node: dict[str, Any]) -> str:
    """Allowed values, default, format and bounds, as one dim line of escaped text (empty when none)."""
    shown: list[str] = []
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        values = ", ".join(_json(v) for v in enum[:20]) + (", …" if len(enum) > 20 else "")
        shown.append(f"one of: {values}")
    if "const" in node:
        shown.append(f"always {_json(node['const'])}")
    if "default" in node:
        shown.append(f"default {_json(node['default'])}")
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
            shown.append(f"{label} {value if isinstance(value, (int, float)) else _json(value)}")
    return _text(_clip("; ".join(shown), 400)) if shown else ""


def schema_tree(parameters: dict[str, Any]) -> str:
    """A tool's parameters as nested lists: each property with its type, whether it is required, its description
    and its allowed values; nested objects and lists of objects as sub-lists."""
    schema = _Schema(parameters)
    root, seen, _ = schema.resolve(parameters, frozenset())
    if not (isinstance(root.get("properties"), dict) and root["properties"]):
        return f'<span style="{_DIM}">no parameters</span>'
    return _properties(schema, root, seen, 0)


def _properties(schema: _Schema, node: dict[str, Any], seen: frozenset[str], depth: int) -> str:
    required = node.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    items = []
    for name, raw in node["properties"].items():
        prop, prop_seen, recursive = schema.resolve(raw, seen)
        kind = recursive if recursive is not None else schema.type_of(prop, prop_seen)
        line = f'<code>{_text(name)}</code> <em style="{_DIM}">{_text(kind)}</em>'
        if name in required_names:
            line += ' <strong title="required">required</strong>'
        description = prop.get("description") if recursive is None else "(the same structure, nested)"
        if isinstance(description, str) and description.strip():
            line += f" — {_text(_clip(' '.join(description.split()), 600))}"
        details = _details(prop)
        if details:
            line += f'<br><span style="{_DIM}">{details}</span>'
        nested = None if recursive is not None else schema.children(prop, prop_seen)
        if nested is not None:
            if depth + 1 >= _MAX_DEPTH:
                line += f'<br><span style="{_DIM}">… (nested deeper)</span>'
            else:
                line += _properties(schema, nested[0], nested[1], depth + 1)
        items.append(f"<li>{line}</li>")
    return f'<ul style="{_LIST}">{"".join(items)}</ul>'


# --- the registry ---------------------------------------------------------------------------------------------------


def registry_html(definitions: list[ToolDefinition]) -> str:
    """The tools as a table: icon, name and title; risk; whether a call asks for approval (destructive tools and
    those that require it ask, unless allowed always); description; parameters as a tree."""
    if not definitions:
        return f'<div class="aiw-registry"><em style="{_DIM}">No tools registered.</em></div>'
    header = "".join(
        f'<th style="{_CELL}">{label}</th>' for label in ("Tool", "Risk", "Approval", "Description", "Parameters")
    )
    rows = []
    for d in definitions:
        icon = f"<span>{_text(d.icon)}</span>&nbsp;" if d.icon else ""
        title = f'<br><span style="{_DIM}">{_text(d.title)}</span>' if d.title else ""
        tool = f'<span style="white-space: nowrap">{icon}<code>{_text(d.name)}</code></span>{title}'
        asks = d.risk.value == "destructive" or d.requires_approval
        approval = "<strong>asks</strong>" if asks else f'<span style="{_DIM}; white-space: nowrap">runs unasked</span>'
        description = _text(d.description.strip()) if d.description.strip() else f'<em style="{_DIM}">none</em>'
        cells = (
            tool,
            f'<span style="white-space: nowrap">{_text(_RISK.get(d.risk.value, d.risk.value))}</span>',
            approval,
            f'<div style="white-space: pre-line; min-width: 12em">{description}</div>',
            schema_tree(d.parameters),
        )
        rows.append("<tr>" + "".join(f'<td style="{_CELL}">{cell}</td>' for cell in cells) + "</tr>")
    count = f"{len(definitions)} tool{'' if len(definitions) == 1 else 's'}"
    return (
        f'<div class="aiw-registry"><table style="border-collapse: collapse">'
        f'<caption style="text-align: left; {_DIM}">ToolRegistry: {count}</caption>'
        f"<thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


# --- an outcome -----------------------------------------------------------------------------------------------------


def outcome_summary(outcome: ToolOutcome) -> tuple[str, str]:
    """A label (``Result``, ``Failed``) and one line of plain text for an outcome."""
    if outcome.status == "failure":
        error = outcome.error
        detail = f"{error.type}: {error.message}" if error is not None else (outcome.message or "failed")
        return "Failed", _clip(" ".join(detail.split()), _MAX_SHOWN)
    if outcome.value is not None:
        shown = outcome.value if isinstance(outcome.value, str) else _json(outcome.value)
    else:
        shown = outcome.text or ""
    return "Result", _clip(" ".join(shown.split()), _MAX_SHOWN)


def outcome_html(outcome: ToolOutcome) -> str:
    """An outcome in one line: ``Result: …`` or ``Failed: …``, escaped."""
    label, text = outcome_summary(outcome)
    colour = "var(--jp-error-color1, #d32f2f)" if label == "Failed" else "inherit"
    return (
        f'<div class="aiw-outcome"><strong style="color: {colour}">{label}</strong>'
        f'<span style="white-space: pre-wrap">: {_text(text)}</span></div>'
    )


# --- an outcome that a run_tool card already shows ------------------------------------------------------------------

_card_shown: tuple[weakref.ref[ToolOutcome], int] | None = None


def _execution_count() -> int | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def mark_shown_by_card(outcome: ToolOutcome) -> None:
    """Records that the cell running now shows ``outcome`` in a card (``run_tool``), so the cell's value does not
    show it a second time under the card."""
    global _card_shown
    count = _execution_count()
    _card_shown = None if count is None else (weakref.ref(outcome), count)


def display_outcome(outcome: ToolOutcome) -> None:
    """Shows an outcome in one line (plain text and HTML); nothing when it is the value of the cell whose card
    shows it already. Displayed again in a later cell, it shows."""
    shown = _card_shown
    if shown is not None and shown[0]() is outcome and shown[1] == _execution_count():
        return
    from IPython.display import display

    display({"text/plain": repr(outcome), "text/html": outcome_html(outcome)}, raw=True)  # type: ignore[no-untyped-call]
