"""The session: a conversation with a model that can call tools (see :class:`ChatSession`)."""

from ai_widgets.session._branches import BranchError, BranchPoint
from ai_widgets.session._calls import CancelError, UnknownToolCallError
from ai_widgets.session._chat import ChatSession, NoTransportError, SessionBusyError, turn_loop
from ai_widgets.session._history import HistoryError, HistoryLockedError, HistoryTakenOverError, read_history
from ai_widgets.session._output import NoOutputError, OutputValidationError
from ai_widgets.session._reply import StreamProtocolError
from ai_widgets.session._round import ToolRound
from ai_widgets.session._steering import NotDeliveredError
from ai_widgets.session._unasked import CODE_TOOLS, UnaskedRule

__all__ = [
    "CODE_TOOLS",
    "BranchError",
    "BranchPoint",
    "CancelError",
    "ChatSession",
    "HistoryError",
    "HistoryLockedError",
    "HistoryTakenOverError",
    "NoOutputError",
    "NoTransportError",
    "NotDeliveredError",
    "OutputValidationError",
    "SessionBusyError",
    "StreamProtocolError",
    "ToolRound",
    "UnaskedRule",
    "UnknownToolCallError",
    "read_history",
    "turn_loop",
]
