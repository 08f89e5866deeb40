"""The MCP task a server's message names: 2025-11-25 ties each request and notification that belongs to a task to
it by ``_meta["io.modelcontextprotocol/related-task"]`` (whose call runs that task is :mod:`ai_widgets.mcp._tasks`'
business)."""

from __future__ import annotations

from typing import Any

__all__: list[str] = []

#: The ``_meta`` key that ties a message to a task.
RELATED_TASK = "io.modelcontextprotocol/related-task"


def related_task(params: Any) -> str | None:
    """The task id a server's request or notification names in its ``_meta`` (its params, as a model or a dict),
    or ``None``."""
    meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) and task_id else None
