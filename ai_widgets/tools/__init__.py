"""Tools: what a model is told about a function, and how a call of it is validated, run and answered.

A tool is a :class:`ToolDefinition` (what the model and the card see) plus an async ``invoke``. ``@tool`` builds
one from a plain function, deriving the JSON Schema from its signature with pydantic; the same pydantic model
validates and binds the arguments, so what the model is told is exactly what gets bound.

One module per concept: ``_definition`` (the definition, risk and the default approval rule), ``_invocation`` (a
call as its handler sees it), ``_tool`` (``Tool`` and ``@tool``), ``_problems`` (what is wrong with a call's
arguments, worded once for the model and a form), ``_detached`` (a call sent to another executor),
``_registry`` (the tools a session offers, and sources of tools), ``_live`` (re-running the cell that defines a tool
replaces it in every registry holding it), ``_formats`` (each provider's tool JSON), ``_views`` (a definition as each
provider receives it, with its size), ``_checks`` (``Tool.check()``: what a provider would refuse or degrade) and
``_display`` (a tool's and a registry's HTML). What a call gives back (``ToolOutcome`` and friends) is vocabulary
below the tools, in :mod:`ai_widgets.outcome`; it is re-exported here.
"""

from ai_widgets.outcome import Attachment, Citation, DisplayBundle, ToolError, ToolOutcome, safe_outcome
from ai_widgets.tools._checks import ToolWarning
from ai_widgets.tools._definition import ToolDefinition, ToolRisk
from ai_widgets.tools._invocation import (
    Approve,
    AskPerson,
    NobodyToAskError,
    ToolInvocation,
    ToolProgress,
    parse_arguments,
)
from ai_widgets.tools._live import ToolReplacementWarning
from ai_widgets.tools._registry import ToolRegistry, ToolSource
from ai_widgets.tools._tool import Tool, tool

__all__ = [
    "Approve",
    "AskPerson",
    "Attachment",
    "Citation",
    "DisplayBundle",
    "NobodyToAskError",
    "Tool",
    "ToolDefinition",
    "ToolError",
    "ToolInvocation",
    "ToolOutcome",
    "ToolProgress",
    "ToolRegistry",
    "ToolReplacementWarning",
    "ToolRisk",
    "ToolSource",
    "ToolWarning",
    "parse_arguments",
    "safe_outcome",
    "tool",
]
