"""ai_widgets: a live LLM chat session with tools, in a Jupyter notebook cell."""

from ai_widgets.tools import (
    Attachment,
    Citation,
    Tool,
    ToolDefinition,
    ToolError,
    ToolInvocation,
    ToolOutcome,
    ToolProgress,
    ToolRegistry,
    ToolRisk,
    tool,
)

__all__ = [
    "Attachment",
    "Citation",
    "Tool",
    "ToolDefinition",
    "ToolError",
    "ToolInvocation",
    "ToolOutcome",
    "ToolProgress",
    "ToolRegistry",
    "ToolRisk",
    "tool",
]

__version__ = "0.1.0"
