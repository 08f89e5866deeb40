"""An MCP server for the tests that pages its listings (the SDK's ``MCPServer`` never does), speaking JSON-RPC
over stdio by hand: ``resources/list``, ``resources/templates/list`` and ``prompts/list`` give three pages of two
items each, the cursor naming the next page."""

from __future__ import annotations

import json
import sys
from typing import Any

PAGES = 3


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def item(method: str, n: int) -> dict[str, Any]:
    if method == "resources/list":
        return {"uri": f"paged://{n}", "name": f"r{n}", "size": n * 10}
    if method == "resources/templates/list":
        return {"uriTemplate": f"paged://{n}/{{x}}", "name": f"t{n}"}
    return {"name": f"p{n}", "arguments": [{"name": "x", "required": n % 2 == 0}]}


KEYS = {"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": "paged", "version": "1"},
            }
        elif method in KEYS:
            page = int(params.get("cursor") or 0)
            result = {KEYS[method]: [item(method, 2 * page + k) for k in range(2)]}
            if page + 1 < PAGES:
                result["nextCursor"] = str(page + 1)
        elif method == "tools/list":
            result = {"tools": []}
        elif request_id is None:
            continue
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
