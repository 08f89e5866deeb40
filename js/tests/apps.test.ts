// MCP Apps, the host's side of the postMessage protocol (../src/apps): the handshake and host context, nothing
// posted before the app is initialized, tool input (partial, then complete once) and result (once), the app's
// tools/call going to the kernel and its answer (or a decline, as an error) coming back under the app's own id,
// bounded sizes, unknown methods refused, and the page's Content-Security-Policy.

import { describe, expect, it } from "vitest";
import {
  AppSession,
  MAX_HEIGHT,
  MAX_PENDING_CALLS,
  MIN_HEIGHT,
  PROTOCOL_VERSION,
  boundedHeight,
  callToolResult,
  hostContext,
  withPolicy,
} from "../src/apps";

const context = () =>
  hostContext({ theme: "dark", tool: { name: "c_counter", title: "Counter", inputSchema: { type: "object" } }, toolCallId: "call_1" });

function ready(): AppSession {
  const app = new AppSession(context);
  app.receive({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: PROTOCOL_VERSION } });
  app.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  return app;
}

describe("the handshake", () => {
  it("answers ui/initialize with the host's context (theme, display mode, the tool) under the app's id", () => {
    const app = new AppSession(context);
    const { post } = app.receive({ jsonrpc: "2.0", id: "a", method: "ui/initialize", params: {} });
    expect(post).toHaveLength(1);
    expect(post[0].id).toBe("a");
    const result = post[0].result as Record<string, any>;
    expect(result.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(result.hostInfo.name).toBe("ai_widgets");
    expect(result.hostCapabilities.serverTools).toEqual({});
    expect(result.hostContext.theme).toBe("dark");
    expect(result.hostContext.displayMode).toBe("inline");
    expect(result.hostContext.toolInfo).toEqual({
      id: "call_1",
      tool: { name: "c_counter", title: "Counter", description: "", inputSchema: { type: "object" } },
    });
    expect(app.ready).toBe(false);
  });

  it("posts nothing before the app is initialized, then what waited, the newest partial input only", () => {
    const app = new AppSession(context);
    expect(app.partialInput({ a: 1 }).post).toEqual([]);
    expect(app.partialInput({ a: 12 }).post).toEqual([]);
    expect(app.input({ a: 123 }).post).toEqual([]);
    const { post } = app.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(post.map((m) => [m.method, m.params])).toEqual([
      ["ui/notifications/tool-input-partial", { arguments: { a: 12 } }],
      ["ui/notifications/tool-input", { arguments: { a: 123 } }],
    ]);
    expect(app.ready).toBe(true);
  });

  it("ignores what is not JSON-RPC 2.0", () => {
    const app = new AppSession(context);
    for (const junk of [null, "x", { method: "ui/initialize", id: 1 }, { jsonrpc: "1.0", id: 1, method: "ping" }, []]) {
      expect(app.receive(junk)).toEqual({ post: [], calls: [], logs: [], links: [] });
    }
  });
});

describe("the call's input and result", () => {
  it("sends partial input while it streams (changes only), the complete input once, the result once", () => {
    const app = ready();
    expect(app.partialInput({ q: "a" }).post[0].method).toBe("ui/notifications/tool-input-partial");
    expect(app.partialInput({ q: "a" }).post).toEqual([]); // unchanged
    expect(app.input({ q: "ab" }).post[0]).toEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { q: "ab" } } });
    expect(app.input({ q: "ab" }).post).toEqual([]);
    expect(app.partialInput({ q: "abc" }).post).toEqual([]); // never after the complete input
    const outcome = { status: "success" as const, value: { count: 3 } };
    const sent = app.result(outcome, { q: "ab" }).post;
    expect(sent).toEqual([
      { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [{ type: "text", text: '{"count":3}' }], isError: false, structuredContent: { count: 3 } } },
    ]);
    expect(app.result(outcome, {}).post).toEqual([]);
  });

  it("a result sends the complete input first if it had not gone", () => {
    const app = ready();
    const methods = app.result({ status: "success", value: "12:00" }, { tz: "UTC" }).post.map((m) => m.method);
    expect(methods).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
  });

  it("a declined call tells the app it was cancelled", () => {
    const app = ready();
    expect(app.cancelled("The person declined").post[0]).toEqual({
      jsonrpc: "2.0",
      method: "ui/notifications/tool-cancelled",
      params: { reason: "The person declined" },
    });
  });

  it("an outcome becomes a CallToolResult", () => {
    expect(callToolResult({ status: "success", value: "text" })).toEqual({ content: [{ type: "text", text: "text" }], isError: false });
    expect(callToolResult({ status: "success", value: null, text: "shown" })).toEqual({ content: [{ type: "text", text: "shown" }], isError: false });
    expect(callToolResult({ status: "failure", message: "no" })).toEqual({ content: [{ type: "text", text: "no" }], isError: true });
    expect(callToolResult({ status: "success", value: [1, 2] })).toEqual({ content: [{ type: "text", text: "[1,2]" }], isError: false });
  });
});

describe("the app's own requests", () => {
  it("a tools/call goes to the kernel; its answer comes back under the app's id", () => {
    const app = ready();
    const asked = app.receive({ jsonrpc: "2.0", id: 42, method: "tools/call", params: { name: "bump", arguments: { by: 2 } } });
    expect(asked.post).toEqual([]);
    expect(asked.calls).toEqual([{ request: 1, name: "bump", arguments: { by: 2 } }]);
    const answered = app.reply(1, { outcome: { status: "success", value: { count: 7 } } });
    expect(answered.post).toEqual([
      { jsonrpc: "2.0", id: 42, result: { content: [{ type: "text", text: '{"count":7}' }], isError: false, structuredContent: { count: 7 } } },
    ]);
    expect(app.reply(1, { outcome: { status: "success" } }).post).toEqual([]); // answered once
  });

  it("a declined call reaches the app as an error", () => {
    const app = ready();
    app.receive({ jsonrpc: "2.0", id: "x", method: "tools/call", params: { name: "bump" } });
    expect(app.reply(1, { error: "c_bump was not run: The person declined" }).post).toEqual([
      { jsonrpc: "2.0", id: "x", error: { code: -32000, message: "c_bump was not run: The person declined" } },
    ]);
  });

  it("refuses a malformed tools/call, too many at once, and methods this host does not offer", () => {
    const app = ready();
    expect(app.receive({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } }).post[0].error).toMatchObject({ code: -32602 });
    expect(app.receive({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "a", arguments: [1] } }).calls).toEqual([]);
    for (let i = 0; i < MAX_PENDING_CALLS; i++) app.receive({ jsonrpc: "2.0", id: 10 + i, method: "tools/call", params: { name: "a" } });
    const over = app.receive({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "a" } });
    expect(over.calls).toEqual([]);
    expect(over.post[0].error).toMatchObject({ code: -32000 });
    for (const method of ["ui/message", "resources/read", "sampling/createMessage"]) {
      expect(app.receive({ jsonrpc: "2.0", id: 5, method, params: {} }).post[0].error).toMatchObject({ code: -32601 });
    }
    expect(app.receive({ jsonrpc: "2.0", id: 6, method: "ui/request-display-mode", params: { mode: "fullscreen" } }).post[0].result).toEqual({ mode: "inline" });
    expect(app.receive({ jsonrpc: "2.0", id: 7, method: "ping" }).post[0].result).toEqual({});
  });

  it("passes a link to open to the host only when it is plain http(s), and answers as the person decided", () => {
    const app = ready();
    for (const url of ["javascript:alert(1)", "https://bank.example@evil.example/", "data:text/html,x", 5, "/relative"]) {
      const refused = app.receive({ jsonrpc: "2.0", id: 8, method: "ui/open-link", params: { url } });
      expect(refused.links).toEqual([]);
      expect(refused.post[0].error).toMatchObject({ code: -32602 });
    }
    const asked = app.receive({ jsonrpc: "2.0", id: 9, method: "ui/open-link", params: { url: "https://modelcontextprotocol.io/docs" } });
    expect(asked.post).toEqual([]); // nothing answered before the person decides
    expect(asked.links).toHaveLength(1);
    expect(asked.links[0].id).toBe(9);
    expect(asked.links[0].link.domain).toBe("modelcontextprotocol.io");
    expect(app.linkAnswer(9, true).post).toEqual([{ jsonrpc: "2.0", id: 9, result: {} }]);
    expect(app.linkAnswer(9, false).post[0].error).toMatchObject({ code: -32000, message: "The person did not open the link." });
  });

  it("sizes the frame within bounds, and takes log lines as text", () => {
    const app = ready();
    expect(app.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 140.2 } }).height).toBe(141);
    expect(app.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 1e9 } }).height).toBe(MAX_HEIGHT);
    expect(app.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: -5 } }).height).toBe(MIN_HEIGHT);
    expect(app.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: "9" } }).height).toBeUndefined();
    expect(boundedHeight(Number.NaN)).toBeUndefined();
    expect(app.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } }).logs).toEqual(["app: hi"]);
  });
});

describe("the page's policy", () => {
  it("puts the restrictive default first in the head, and only well-formed declared origins", () => {
    const page = withPolicy('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body></body></html>', {
      connectDomains: ["https://api.example.com", "javascript:alert(1)", "https://x.com'; script-src *"],
    });
    const meta = /<head><meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(page);
    expect(meta).not.toBeNull();
    const policy = meta![1];
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("connect-src https://api.example.com;");
    expect(policy).toContain("frame-src 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).not.toContain("javascript:");
    expect(policy).not.toContain("x.com");
    expect(withPolicy("<p>no head</p>", null)).toMatch(/^<meta http-equiv="Content-Security-Policy" content="[^"]*connect-src 'none'/);
  });
});
