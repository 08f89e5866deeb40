"""A misbehaving MCP server for the tests, speaking JSON-RPC over stdio by hand (the SDK's server would not misbehave).

Tools: ``echo`` (answers its ``text``), ``odd`` (answers with a content block of a type MCP does not have),
``chatty`` (prints a line that is not JSON-RPC to stdout, then answers), ``whoami`` (answers its process id),
``nan_default`` (listed with ``NaN`` in its input schema), ``off_schema`` (answers structured content its output schema
does not allow).
``AIW_RAW_TOOLS`` (a JSON list of names) adds tools under names providers may refuse; each answers its own name.
``AIW_RAW_LISTINGS`` (JSON: a list of listings, each a list of pages, each a list of tool definitions as sent, however
malformed) replaces the tools: ``tools/list`` answers the current listing's pages, chained by ``nextCursor``; a call of
``next_listing`` moves to the next listing and sends ``notifications/tools/list_changed``. Any other tool called answers
its own name.
Every request is written (its method, and the tool's name or the cursor), one line each, to the file named by ``AIW_RAW_LOG``.
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
TOOLS.append(
    {
        **spec("off_schema"),
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    }
)


#: The listings (of pages) the server goes through: ``AIW_RAW_LISTINGS``, or the one listing of one page above.
LISTINGS: list[list[list[Any]]] = json.loads(os.environ.get("AIW_RAW_LISTINGS", "null")) or [[TOOLS]]
current = 0


def page(request_id: Any, cursor: Any) -> None:
    pages = LISTINGS[min(current, len(LISTINGS) - 1)]
    index = int(cursor) if isinstance(cursor, str) and cursor.isdigit() and int(cursor) < len(pages) else 0
    listed: dict[str, Any] = {"tools": pages[index]}
    if index + 1 < len(pages):
        listed["nextCursor"] = str(index + 1)
    send({"jsonrpc": "2.0", "id": request_id, "result": listed})


def result(request_id: Any, *content: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": list(content)}})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def main() -> None:
    global current
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        log(f"{method} {json.dumps(params.get('name', params.get('cursor')))}")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            page(request_id, (message.get("params") or {}).get("cursor"))
        elif method == "tools/call":
            name = message["params"]["name"]
            arguments = message["params"].get("arguments") or {}
            if name == "odd":
                result(request_id, {"type": "hologram", "data": "3d"}, text("and some text"))
            elif name == "chatty":
                sys.stdout.write("debug: chatty was called\n")  # a print() in a server: not a message
                sys.stdout.flush()
                result(request_id, text("said it"))
            elif name == "off_schema":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": {"content": [text('{"n": "seven"}')], "structuredContent": {"n": "seven"}},
                    }
                )
            elif name == "whoami":
                result(request_id, text(str(os.getpid())))
            elif name == "next_listing":
                current += 1
                result(request_id, text(f"listing {current}"))
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            elif name == "echo":
                result(request_id, text(str(arguments.get("text", ""))))
            else:
                result(request_id, text(name))
        elif request_id is not None and method:
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})


if __name__ == "__main__":
    main()
