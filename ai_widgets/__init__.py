"""ai_widgets: a live LLM chat session with tools, in a Jupyter notebook cell."""

import importlib

from ai_widgets.approval import ApprovalDecision, ApprovalError, ApprovalPolicy, DefaultApprovalPolicy
from ai_widgets.attachments import AttachmentError, AttachmentLimits, File, Preview, register_converter
from ai_widgets.messages import (
    ErrorKind,
    FilePart,
    FinishReason,
    InputRequest,
    InputResponse,
    InputResponseError,
    Message,
    MessageStatus,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallState,
    Usage,
)
from ai_widgets.options import RequestOptions, SessionOptions, ToolChoice
from ai_widgets.session import (
    BranchError,
    BranchPoint,
    CancelError,
    ChatSession,
    NoOutputError,
    NotDeliveredError,
    OutputValidationError,
    SessionBusyError,
    UnknownToolCallError,
)
from ai_widgets.tools import (
    Attachment,
    Citation,
    DisplayBundle,
    Tool,
    ToolDefinition,
    ToolError,
    ToolInvocation,
    ToolOutcome,
    ToolProgress,
    ToolRegistry,
    ToolReplacementWarning,
    ToolRisk,
    ToolSource,
    ToolWarning,
    tool,
)

__all__ = [
    "ApprovalDecision",
    "ApprovalError",
    "ApprovalPolicy",
    "Attachment",
    "AttachmentError",
    "AttachmentLimits",
    "BranchError",
    "BranchPoint",
    "CancelError",
    "ChatSession",
    "ChatWidget",
    "Citation",
    "DefaultApprovalPolicy",
    "DisplayBundle",
    "ErrorKind",
    "File",
    "FilePart",
    "FinishReason",
    "InputRequest",
    "InputResponse",
    "InputResponseError",
    "Message",
    "MessageStatus",
    "NoOutputError",
    "NotDeliveredError",
    "OutputValidationError",
    "Preview",
    "ReasoningPart",
    "RequestOptions",
    "Role",
    "SessionBusyError",
    "SessionOptions",
    "TextPart",
    "Tool",
    "ToolCallPart",
    "ToolCallState",
    "ToolChoice",
    "ToolDefinition",
    "ToolError",
    "ToolInvocation",
    "ToolOutcome",
    "ToolProgress",
    "ToolRegistry",
    "ToolReplacementWarning",
    "ToolRisk",
    "ToolRun",
    "ToolSource",
    "ToolWarning",
    "UnknownToolCallError",
    "Usage",
    "arun_tool",
    "register_converter",
    "run_tool",
    "tool",
]

__version__ = "0.1.0"

# The widget layer imports anywidget, ipywidgets and IPython: it loads when one of its names is first asked for, so
# the core works in a script or a test without loading them (the provider transports load the same way, in
# ai_widgets.transports).
_WIDGET_NAMES = frozenset({"ChatWidget", "ToolRun", "run_tool", "arun_tool"})


def __getattr__(name: str) -> object:
    if name in _WIDGET_NAMES:
        return getattr(importlib.import_module("ai_widgets.widget"), name)
    raise AttributeError(f"module 'ai_widgets' has no attribute {name!r}")
