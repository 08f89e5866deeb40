"""The model works in the notebook: tools that run Python in the kernel, see its variables, and undo what they
changed (:class:`KernelTools`)."""

from ai_widgets.kernel._changes import RunChanges
from ai_widgets.kernel._names import looks_secret
from ai_widgets.kernel._tools import KernelTools
from ai_widgets.kernel._undo import UndoError, UndoLog
from ai_widgets.kernel._variables import VariableError, VariableView, inspect_variable, list_variables
from ai_widgets.kernel._watch import NamespaceWatch, RunDiff, code_names, watch_start

__all__ = [
    "KernelTools",
    "NamespaceWatch",
    "RunChanges",
    "RunDiff",
    "UndoError",
    "UndoLog",
    "VariableError",
    "VariableView",
    "code_names",
    "inspect_variable",
    "list_variables",
    "looks_secret",
    "watch_start",
]
