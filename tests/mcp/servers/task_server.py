"""An MCP server whose tools run as tasks (2025-11-25's task-augmented ``tools/call``), speaking JSON-RPC over stdio by
hand: the Python SDK's server (2.3) has the task types but does not run tasks.

It declares ``tasks.requests.tools.call`` (and ``tasks.cancel``, ``tasks.list``). Its tools, all with
``execution.taskSupport: "required"`` (a plain call of one is refused with -32601, as the specification says) but
``maybe``:

- ``steps`` (``n``, ``delay`` seconds, ``notify``): ``n`` steps, each with the status message ``"step i of n"``
  (sent as ``notifications/tasks/status`` and a progress notification when ``notify``, else seen by ``tasks/get``
  only), then completed: ``"did n steps"``.
- ``fails``: fails after a moment with the status message ``"the disk is full"``; ``tasks/result`` answers a result
  marked ``isError`` (``"disk full: /data"``).
- ``fails_hard``: fails the same way, and ``tasks/result`` answers a JSON-RPC error (``"write failed"``).
- ``gives_up``: the server cancels it itself after a moment (``"the operator stopped it"``).
- ``forever``: works (``"still working"``) until it is cancelled.
- ``ask`` (``what``): moves to ``input_required``; the question (an elicitation whose ``_meta`` names the task) goes
  out while ``tasks/result`` waits; completes with ``"answer: <what the person answered>"``.
- ``maybe`` (``taskSupport: "optional"``): answers ``"plain"`` to a plain call, ``"as a task"`` to a task.

``pollInterval`` is 50 ms. Each request is written to the file ``AIW_TASK_LOG`` names: its method, the tool's name or
the task id, and ``task`` when the call was task-augmented (with its ``ttl``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any

LOG = os.environ.get("AIW_TASK_LOG")
RELATED = "io.modelcontextprotocol/related-task"
_out = threading.Lock()
_state = threading.Condition()
tasks: dict[str, dict[str, Any]] = {}  # task id -> its state (the Task fields, plus "result" or "error")
answers: dict[str, Any] = {}  # our request id -> the client's answer
asked: dict[str, str] = {}  # task id -> the id of its question, once asked
_count = 0


def log(text: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as file:
            file.write(text + "\n")


def send(message: dict[str, Any]) -> None:
    with _out:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, support: str = "required", **properties: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The tool {name}.",
        "inputSchema": {"type": "object", "properties": properties},
        "execution": {"taskSupport": support},
    }


TOOLS = [
    tool("steps", n={"type": "integer"}, delay={"type": "number"}, notify={"type": "boolean"}),
    tool("fails"),
    tool("fails_hard"),
    tool("gives_up"),
    tool("forever"),
    tool("ask", what={"type": "string"}),
    tool("maybe", "optional"),
]


def public(task: dict[str, Any]) -> dict[str, Any]:
    keys = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "pollInterval")
    return {k: task[k] for k in keys if k in task}


def update(task_id: str, status: str, message: str | None, *, notify: bool = True, **ending: Any) -> None:
    """Moves a task on (a cancelled task stays cancelled), telling the client when ``notify``."""
    with _state:
        task = tasks[task_id]
        if task["status"] in ("completed", "failed", "cancelled"):
            return
        task.update(status=status, lastUpdatedAt=now(), **ending)
        if message is None:
            task.pop("statusMessage", None)
        else:
            task["statusMessage"] = message
        shown = public(task)
        _state.notify_all()
    if notify:
        send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": shown})


def cancelled(task_id: str) -> bool:
    with _state:
        return tasks[task_id]["status"] == "cancelled"


def run(task_id: str, name: str, arguments: dict[str, Any], token: Any) -> None:
    if name == "steps":
        n, delay, notify = int(arguments.get("n", 3)), float(arguments.get("delay", 0.2)), arguments.get("notify", True)
        for i in range(1, n + 1):
            time.sleep(delay)
            if cancelled(task_id):
                return
            update(task_id, "working", f"step {i} of {n}", notify=notify)
            if notify and token is not None:
                params = {"progressToken": token, "progress": i, "total": n}
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
        time.sleep(delay)
        update(task_id, "completed", None, result={"content": [text(f"did {n} steps")]})
    elif name in ("fails", "fails_hard"):
        time.sleep(0.2)
        if name == "fails":
            update(
                task_id, "failed", "the disk is full", result={"content": [text("disk full: /data")], "isError": True}
            )
        else:
            update(task_id, "failed", "the disk is full", error={"code": -32603, "message": "write failed"})
    elif name == "gives_up":
        time.sleep(0.2)
        update(task_id, "cancelled", "the operator stopped it")
    elif name == "forever":
        update(task_id, "working", "still working")
        while not cancelled(task_id):
            time.sleep(0.05)
    elif name == "ask":
        time.sleep(0.1)
        update(task_id, "input_required", "needs your answer")
        with _state:
            while task_id not in asked or asked[task_id] not in answers:
                if tasks[task_id]["status"] == "cancelled":
                    return
                _state.wait(0.1)
            answer = answers.pop(asked[task_id])
        content = (answer.get("result") or {}).get("content") or {}
        update(task_id, "working", "got it")
        update(task_id, "completed", None, result={"content": [text(f"answer: {content.get('answer')}")]})
    elif name == "maybe":
        update(task_id, "completed", None, result={"content": [text("as a task")]})


def create(request_id: Any, name: str, arguments: dict[str, Any], token: Any) -> None:
    global _count
    with _state:
        _count += 1
        task_id = f"task-{_count}"
        stamp = now()
        tasks[task_id] = {
            "taskId": task_id,
            "status": "working",
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttl": 60000,
            "pollInterval": 50,
            "name": name,
            "arguments": arguments,
        }
        created = public(tasks[task_id])
    send({"jsonrpc": "2.0", "id": request_id, "result": {"task": created}})
    threading.Thread(target=run, args=(task_id, name, arguments, token), daemon=True).start()


def result(request_id: Any, task_id: str) -> None:
    """``tasks/result``: asks the task's question first (while it wants input), then waits for the end."""
    with _state:
        task = tasks[task_id]
        question = task["name"] == "ask" and task_id not in asked
        while question and task["status"] == "working":
            _state.wait(0.05)
        question = question and task["status"] == "input_required"
        if question:
            asked[task_id] = f"q-{task_id}"
    if question:
        what = task["arguments"].get("what", "something")
        params = {
            "mode": "form",
            "message": f"Tell me {what}",
            "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}},
            "_meta": {RELATED: {"taskId": task_id}},
        }
        send({"jsonrpc": "2.0", "id": asked[task_id], "method": "elicitation/create", "params": params})
    with _state:
        while task["status"] not in ("completed", "failed", "cancelled"):
            _state.wait(0.1)
    if "error" in task:
        send({"jsonrpc": "2.0", "id": request_id, "error": task["error"]})
    elif task["status"] == "cancelled":
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "the task was cancelled"}})
    else:
        body = {**task["result"], "_meta": {RELATED: {"taskId": task_id}}}
        send({"jsonrpc": "2.0", "id": request_id, "result": body})


def error(request_id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def handle(message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if method is None:  # an answer to our question
        with _state:
            answers[str(request_id)] = message
            _state.notify_all()
        return
    if method.startswith("notifications/"):
        return
    task = params.get("task")
    about = params.get("name", params.get("taskId"))
    log(f"{method} {json.dumps(about)}" + (f" task ttl={task.get('ttl')}" if isinstance(task, dict) else ""))
    if method == "initialize":
        capabilities = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
        info = {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "serverInfo": {"name": "tasks", "version": "1"},
        }
        send({"jsonrpc": "2.0", "id": request_id, "result": info})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = params.get("name")
        spec = next((t for t in TOOLS if t["name"] == name), None)
        if spec is None:
            error(request_id, -32602, f"no tool {name}")
        elif isinstance(task, dict):
            token = (params.get("_meta") or {}).get("progressToken")
            create(request_id, name, params.get("arguments") or {}, token)
        elif spec["execution"]["taskSupport"] == "required":
            error(request_id, -32601, f"{name} must be called as a task")
        else:
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [text("plain")]}})
    elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
        task_id = params.get("taskId")
        with _state:
            known = tasks.get(task_id)
        if known is None:
            error(request_id, -32602, f"no task {task_id}")
        elif method == "tasks/get":
            with _state:
                shown = public(known)
            send({"jsonrpc": "2.0", "id": request_id, "result": shown})
        elif method == "tasks/result":
            threading.Thread(target=result, args=(request_id, task_id), daemon=True).start()
        elif known["status"] in ("completed", "failed", "cancelled"):
            error(request_id, -32602, f"the task {task_id} has ended")
        else:
            update(task_id, "cancelled", "cancelled by request", notify=False)
            with _state:
                shown = public(known)
            send({"jsonrpc": "2.0", "id": request_id, "result": shown})
    else:
        error(request_id, -32601, f"no method {method}")


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message)


if __name__ == "__main__":
    main()
