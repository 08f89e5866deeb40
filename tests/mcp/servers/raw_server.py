"""A misbehaving MCP server for the tests, speaking JSON-RPC over stdio by hand (the SDK's server would not misbehave).

Tools: ``echo`` (answers its ``text``), ``odd`` (answers with a content block of a type MCP does not have),
``chatty`` (prints a line that is not JSON-RPC to stdout, then answers), ``whoami`` (answers its process id),
``nan_default`` (listed with ``NaN`` in its input schema).
``AIW_RAW_TOOLS`` (a JSON list of names) adds tools under names providers may refuse; each answers its own name.
Every request is written, one line each, to the file named by ``AIW_RAW_LOG``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

LOG = os.environ.get("AIW_RAW_LOG")
EXTRA = json.loads(os.environ.get("AIW_RAW_TOOLS", "[]"))


def log(text: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as file:
            file.write(text + "\n")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def spec(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The tool {name}.", "inputSchema": {"type": "object", "properties": {}}}


TOOLS = [spec(name) for name in ("echo", "odd", "chatty", "whoami", *EXTRA)]
# json.dumps writes NaN as it is (not JSON, but the SDK's parser reads it).
TOOLS.append(
    {
        "name": "nan_default",
        "description": "A schema with NaN in it.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "default": float("nan")}}},
    }
)


def result(request_id: Any, *content: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": list(content)}})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, request_id = message.get("method"), message.get("id")
        log(f"{method} {json.dumps(message.get('params', {}).get('name'))}")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            name = message["params"]["name"]
            arguments = message["params"].get("arguments") or {}
            if name == "odd":
                result(request_id, {"type": "hologram", "data": "3d"}, text("and some text"))
            elif name == "chatty":
                sys.stdout.write("debug: chatty was called\n")  # a print() in a server: not a message
                sys.stdout.flush()
                result(request_id, text("said it"))
            elif name == "whoami":
                result(request_id, text(str(os.getpid())))
            elif name == "echo":
                result(request_id, text(str(arguments.get("text", ""))))
            else:
                result(request_id, text(name))
        elif request_id is not None and method:
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})


if __name__ == "__main__":
    main()
