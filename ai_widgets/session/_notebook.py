"""The conversation as a Jupyter notebook (``.ipynb``, nbformat 4.5): messages as markdown cells, and the code each
code-running call ran as code cells, in order, so Run All repeats the analysis.

The notebook has no outputs and no execution counts: opening it runs and shows nothing of the past runs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ai_widgets.messages import (
    FilePart,
    Message,
    PlanPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolCallState,
)

__all__ = ["conversation_notebook"]

#: The states of a call that ran (it was allowed and started): its code belongs in the notebook.
RAN = (ToolCallState.COMPLETED, ToolCallState.FAILED)


def conversation_notebook(messages: Sequence[Message], code_arguments: Callable[[str], dict[str, str]]) -> str:
    """The notebook's JSON text for ``messages``.

    Args:
        messages: The conversation.
        code_arguments: A tool's code arguments by the tool's name (``ToolDefinition.code_arguments``; empty for a
            tool that runs no code, or one no longer registered): the Python ones of a call that ran become code
            cells, with the arguments it ran with (the person's edit where there was one).
    """
    cells: list[dict[str, Any]] = []
    for message in messages:
        pending = ["**You**" if message.role is Role.USER else "**Assistant**"]
        said = False  # whether ``pending`` holds more than the header
        for part in message.parts:
            if isinstance(part, TextPart):
                if not part.text.strip():
                    continue
                pending.append(part.text)
            elif isinstance(part, ReasoningPart):
                continue  # the model's notes to itself: not part of the analysis
            elif isinstance(part, FilePart):
                pending.append(f"📎 {part.describe()}")
            elif isinstance(part, PlanPart):
                pending.append(part.markdown())
            else:
                code = ran_code(part, code_arguments(part.tool_name))
                if not code:
                    pending.append(f"🔧 `{part.tool_name}`: {part.state.value.replace('_', ' ')}")
                else:
                    if said:
                        cells.append(markdown_cell(pending))
                    cells.extend(code_cell(text, part) for text in code)
                    pending, said = [], False
                    continue
            said = True
        if said:
            cells.append(markdown_cell(pending))
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, ensure_ascii=False, indent=1) + "\n"


def ran_code(part: ToolCallPart, arguments: dict[str, str]) -> list[str]:
    """The Python code ``part`` ran, one text per code argument, or none (it did not run, or runs no Python)."""
    if part.state not in RAN or part.run_started_at is None or part.provider_executed:
        return []
    values = part.effective_arguments
    return [
        values[name]
        for name, language in arguments.items()
        if language.lower() == "python" and isinstance(values.get(name), str) and values[name].strip()
    ]


def markdown_cell(lines: list[str]) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id(), "metadata": {}, "source": source("\n\n".join(lines))}


def code_cell(code: str, part: ToolCallPart) -> dict[str, Any]:
    marks: dict[str, Any] = {"tool_call_id": part.tool_call_id, "tool_name": part.tool_name, "state": part.state.value}
    if part.edited_arguments is not None:
        marks["edited"] = True
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell_id(),
        "metadata": {"ai_widgets": marks},
        "outputs": [],
        "source": source(code),
    }


def cell_id() -> str:
    return uuid.uuid4().hex[:12]


def source(text: str) -> list[str]:
    """A cell's source as nbformat writes it: lines, each but the last with its newline."""
    return text.splitlines(keepends=True)
