"""The model works in the notebook: tools that run Python in the kernel, see its variables, and undo what they
changed (:class:`KernelTools`)."""

from ai_widgets.kernel._tools import KernelTools

__all__ = ["KernelTools"]
