"""An MCP server with MCP Apps (``io.modelcontextprotocol/ui``), written with the SDK's ``MCPServer`` and its
``Apps`` extension, for the tests of apps in tool cards.

- ``counter`` names the app ``ui://counter/app.html`` (``_meta.ui.resourceUri``).
- ``bump`` is a plain tool the app calls (``tools/call`` from the app): it adds to a count kept by the server.
- ``legacy`` names its app the older way (``_meta["ui/resourceUri"]``) and says whether the client declared apps, ``hidden`` is for the app only
  (``visibility: ["app"]``), ``huge`` names an app of more than a megabyte, ``elsewhere`` a URI that is not ``ui://``.
- ``tally`` is for the model only (``visibility: ["model"]``) and claims to be read-only: it counts its runs, so a
  test can tell whether an app's call reached it. ``nobody`` has an empty visibility (neither model nor app).

The app's page shows the tool's result and has a button that calls ``bump`` through the host. Run as a script it
serves over stdio (``python app_server.py``).
"""

from __future__ import annotations

from mcp.server.apps import Apps, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

APP_URI = "ui://counter/app.html"
HUGE_URI = "ui://counter/huge.html"

#: The app: speaks the MCP Apps messages by hand (no SDK), shows the result and calls ``bump`` on a click.
APP_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Counter app</title></head>
<body>
<p>Count: <code id="count">waiting</code> theme: <code id="theme">?</code></p>
<button id="bump">Bump</button>
<p id="status"></p>
<script>
let next = 1;
const waiting = new Map();
function request(method, params) {
  const id = next++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const msg = event.data || {};
  if (msg.id !== undefined && waiting.has(msg.id)) {
    const { resolve, reject } = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (msg.error) reject(new Error(msg.error.message)); else resolve(msg.result);
    return;
  }
  if (msg.method === "ui/notifications/tool-result") {
    const count = msg.params && msg.params.structuredContent && msg.params.structuredContent.count;
    document.getElementById("count").textContent = String(count);
  }
});
document.getElementById("bump").addEventListener("click", async () => {
  try {
    const result = await request("tools/call", { name: "bump", arguments: { by: 2 } });
    if (result.isError) throw new Error(result.content[0].text);
    document.getElementById("count").textContent = String(result.structuredContent.count);
    document.getElementById("status").textContent = "bumped";
  } catch (error) {
    document.getElementById("status").textContent = "refused: " + error.message;
  }
});
request("ui/initialize", { appInfo: { name: "counter", version: "1" }, appCapabilities: {},
                           protocolVersion: "2026-01-26" }).then((result) => {
  document.getElementById("theme").textContent = result.hostContext.theme;
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized" }, "*");
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/size-changed",
                              params: { width: 300, height: 140 } }, "*");
});
</script>
</body></html>
"""


def build() -> MCPServer:
    apps = Apps()
    state = {"count": 0, "tally": 0}

    @apps.tool(resource_uri=APP_URI, description="Shows the counter (an app).", title="Counter")
    def counter(ctx: Context, start: int = 0) -> dict[str, int]:
        state["count"] = max(state["count"], start)
        return {"count": state["count"]}

    @apps.tool(resource_uri=APP_URI, visibility=["app"], description="Only the app calls this.")
    def hidden() -> str:
        return "hidden"

    @apps.tool(
        resource_uri=APP_URI,
        visibility=["model"],
        description="Counts its runs (the model's alone).",
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    def tally() -> dict[str, int]:
        state["tally"] += 1
        return {"tally": state["tally"]}

    @apps.tool(resource_uri=HUGE_URI, description="An app too big to show.")
    def huge() -> str:
        return "huge"

    apps.add_html_resource(APP_URI, APP_HTML, title="Counter app", prefers_border=True)
    apps.add_html_resource(HUGE_URI, "<!DOCTYPE html><p>" + "x" * 1_100_000 + "</p>")

    server = MCPServer("app-server", log_level="WARNING", extensions=[apps])

    @server.tool(description="Adds to the count.")
    def bump(by: int = 1) -> dict[str, int]:
        state["count"] += by
        return {"count": state["count"]}

    @server.tool(description="The counter as text, for a client without apps.", meta={"ui/resourceUri": APP_URI})
    def legacy(ctx: Context) -> str:
        return f"count {state['count']} (apps: {client_supports_apps(ctx)})"

    @server.tool(description="Names an app that is not ui://.", meta={"ui": {"resourceUri": "https://example.com/a"}})
    def elsewhere() -> str:
        return "elsewhere"

    @server.tool(description="Visible to nobody.", meta={"ui": {"visibility": []}})
    def nobody() -> str:
        return "nobody"

    return server


if __name__ == "__main__":
    build().run("stdio")
