"""The model works in the notebook: tools that run Python in the kernel, see its variables, and undo what they
changed (:class:`KernelTools`)."""

__all__: list[str] = []
