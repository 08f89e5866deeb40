"""The IPython side of running code as a cell: which shell's namespace the code runs in, the shell's transform of
the code (so magics work), and the shell escapes in it that run only when allowed."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["SHELL_MAGICS", "ipython_shell", "running_shell", "shell_escapes"]

#: Magics that run a shell or another program: IPython's shell escapes (``%sx``, ``%system``, ``%sc``, ``%%!``),
#: its script magics (``%%bash``, ``%%script``...), and the installers that run one (``%pip``, ``%conda``...).
SHELL_MAGICS = frozenset(
    {
        "!",
        "sx",
        "system",
        "sc",
        "bash",
        "sh",
        "zsh",
        "script",
        "perl",
        "ruby",
        "python",
        "python2",
        "python3",
        "pypy",
        "cmd",
        "powershell",
        "pip",
        "conda",
        "mamba",
        "micromamba",
        "uv",
    }
)
#: The shell's methods that run a command.
SHELL_METHODS = frozenset({"system", "system_piped", "system_raw", "getoutput"})
#: How deep magics that run code (``%%capture``, ``%time``) are looked into.
MAX_DEPTH = 8


def running_shell() -> Any | None:
    """The running IPython shell, or ``None``."""
    module = sys.modules.get("IPython.core.interactiveshell")
    if module is None or not module.InteractiveShell.initialized():
        return None
    return module.InteractiveShell.instance()


def ipython_shell(namespace: dict[str, Any]) -> Any | None:
    """The running IPython shell whose user namespace ``namespace`` is, or ``None`` (no shell, or another dict)."""
    shell = running_shell()
    return shell if shell is not None and shell.user_ns is namespace else None


def shell_escapes(code: str, shell: Any | None) -> list[str]:
    """What in ``code`` (as the shell transforms it, when there is one) runs a shell command, each said briefly
    (``!ls -l``, ``%%bash``, ``get_ipython().system(...)``); ``[]`` when nothing does.

    Seen statically, in the transformed code and in the code that magics such as ``%%capture`` or ``%time`` run.
    Code that builds a call at run time (``getattr(get_ipython(), "sys" + "tem")``) is not seen: the person sees the
    code before it runs.
    """
    return list(dict.fromkeys(found_in(code, shell, 0)))


def found_in(code: str, shell: Any | None, depth: int) -> Iterator[str]:
    if depth > MAX_DEPTH:
        return
    source = shell.transform_cell(code) if shell is not None else code
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return  # it will not run: its error says why
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        method = node.func.attr
        arguments = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
        if method in SHELL_METHODS:
            command = arguments[0] if arguments and isinstance(arguments[0], str) else "..."
            yield f"!{command}" if method in ("system", "getoutput") else f"get_ipython().{method}(...)"
        elif method in ("run_line_magic", "run_cell_magic") and arguments and isinstance(arguments[0], str):
            name = arguments[0]
            line = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], str) else ""
            cell = method == "run_cell_magic"
            if name in SHELL_MAGICS or (shell is not None and is_alias(shell, name)):
                yield f"%%{name}" if cell else f"%{name} {line}".rstrip()
                continue
            # Magics like %%capture, %%time or %timeit run their line or body as code: look into it.
            yield from found_in(line, shell, depth + 1)
            if cell and len(arguments) > 2 and isinstance(arguments[2], str):
                yield from found_in(arguments[2], shell, depth + 1)


def is_alias(shell: Any, name: str) -> bool:
    """Whether ``%name`` is one of the shell's aliases of a system command (``%ls``, ``%cat``...)."""
    manager = getattr(shell, "alias_manager", None)
    try:
        return manager is not None and bool(manager.is_alias(name))
    except Exception:
        return False
