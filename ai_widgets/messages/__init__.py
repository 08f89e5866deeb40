"""The message vocabulary's public face: a conversation's messages and their parts, the tool-call states and their one
table of moves, files, usage, typed answers, the questions a tool call puts to the person, and the conversation's
JSON (:func:`dump_messages`, :func:`load_messages`). The parts live in this package's private modules."""

from ai_widgets.messages._call_view import CallDiff, CallLocation, CallTerminal, CallText, CallViewItem, ToolCallView
from ai_widgets.messages._files import FilePart
from ai_widgets.messages._json import FORMAT_VERSION as FORMAT_VERSION
from ai_widgets.messages._json import upgrade_v1_message as upgrade_v1_message
from ai_widgets.messages._parts import (
    TRANSITIONS,
    ErrorKind,
    FinishReason,
    InvalidTransitionError,
    Message,
    MessageStatus,
    Part,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallProgress,
    ToolCallState,
    conversation_markdown,
    dump_messages,
    load_messages,
)
from ai_widgets.messages._plan import PlanEntry, PlanPart
from ai_widgets.messages._questions import InputRequest, InputResponse, InputResponseError
from ai_widgets.messages._typed_answer import TypedAnswer
from ai_widgets.messages._usage import Usage

__all__ = [
    "TRANSITIONS",
    "CallDiff",
    "CallLocation",
    "CallTerminal",
    "CallText",
    "CallViewItem",
    "ErrorKind",
    "FilePart",
    "FinishReason",
    "InputRequest",
    "InputResponse",
    "InputResponseError",
    "InvalidTransitionError",
    "Message",
    "MessageStatus",
    "Part",
    "PlanEntry",
    "PlanPart",
    "ReasoningPart",
    "Role",
    "TextPart",
    "ToolCallPart",
    "ToolCallProgress",
    "ToolCallState",
    "ToolCallView",
    "TypedAnswer",
    "Usage",
    "conversation_markdown",
    "dump_messages",
    "load_messages",
]
