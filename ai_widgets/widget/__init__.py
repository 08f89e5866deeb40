"""The notebook widget: ``ChatWidget`` and ``run_tool``. Imports anywidget and ipywidgets; the core does not."""

from ai_widgets.widget._chat import ChatWidget, FrontEndNotBuiltError, ReplyFuture
from ai_widgets.widget._kernel import UnsupportedKernelError
from ai_widgets.widget._run_tool import ToolRun, arun_tool, run_tool

__all__ = [
    "ChatWidget",
    "FrontEndNotBuiltError",
    "ReplyFuture",
    "ToolRun",
    "UnsupportedKernelError",
    "arun_tool",
    "run_tool",
]
