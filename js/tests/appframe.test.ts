// A tool's MCP App in its card (render/appframe.ts): the card asks the kernel for the page once, shows it in a
// frame sandboxed to scripts alone with the restrictive policy, takes messages only from its own frame, routes
// the kernel's app_reply to it, and says in the card why a page cannot be shown (too large), keeping the text form.

import { describe, expect, it } from "vitest";
import { deliverAppReply } from "../src/render/appframe";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const HTML = "<!DOCTYPE html><html><head><title>t</title></head><body><p id=x>app</p></body></html>";

async function appCard(apps: Record<string, unknown> = {}) {
  const model = new FakeModel({ _tools: { counter: { title: "Counter", app: "ui://counter/app.html" } }, _apps: apps, collapse_tool_calls: true });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "counter", { state: "completed", outcome: { status: "success", value: { count: 3 } } })])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

const sentOf = (model: FakeModel, type: string) => model.sent.filter((m) => (m as { type?: string }).type === type);

describe("an MCP App in its card", () => {
  it("asks the kernel for the page once, then shows it in a sandboxed frame with the policy", async () => {
    const { model, view, card } = await appCard();
    expect(sentOf(model, "app_open")).toEqual([{ type: "app_open", tool_call_id: "c1" }]);
    expect(card.querySelector("iframe")).toBeNull();
    model.set("_apps", { counter: { uri: "ui://counter/app.html", html: HTML, error: null, csp: null, prefers_border: true } });
    view.flush();
    const frame = $<HTMLIFrameElement>(card, "iframe.aiw-app-frame");
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.srcdoc).toMatch(/^<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    expect(frame.srcdoc).toContain("<p id=x>app</p>");
    expect(sentOf(model, "app_open")).toHaveLength(1);
    // Shown collapsed too, outside the card's body (the text form stays in the body).
    expect(card.classList.contains("aiw-collapsed")).toBe(true);
    expect(frame.closest(".aiw-tool-body")).toBeNull();
  });

  it("says why a page cannot be shown, and makes no frame", async () => {
    const { card } = await appCard({ counter: { uri: "ui://counter/app.html", html: null, error: "The app is 1.1 MB, more than the 1 MB a card shows." } });
    expect(card.querySelector("iframe")).toBeNull();
    expect($(card, ".aiw-app-note").textContent).toBe("The app is 1.1 MB, more than the 1 MB a card shows.");
  });

  it("takes messages only from its own frame; a message from elsewhere asks nothing of the kernel", async () => {
    const { model, card } = await appCard({ counter: { uri: "ui://counter/app.html", html: HTML } });
    const frame = $<HTMLIFrameElement>(card, "iframe.aiw-app-frame");
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bump", arguments: {} } };
    window.dispatchEvent(new MessageEvent("message", { data: call, source: window }));
    expect(sentOf(model, "app_call")).toEqual([]);
    window.dispatchEvent(new MessageEvent("message", { data: call, source: frame.contentWindow }));
    expect(sentOf(model, "app_call")).toEqual([{ type: "app_call", tool_call_id: "c1", request: 1, name: "bump", arguments: {} }]);
    // The kernel's answer goes back to that frame (no error for a reply to a request it has).
    deliverAppReply({ type: "app_reply", tool_call_id: "c1", request: 1, error: "declined" });
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 5000 } }, source: frame.contentWindow }));
    expect(frame.style.height).toBe("800px");
  });

  it("opens a link the app asks for only once the person says so, and tells the app", async () => {
    const { card } = await appCard({ counter: { uri: "ui://counter/app.html", html: HTML } });
    const frame = $<HTMLIFrameElement>(card, "iframe.aiw-app-frame");
    const opened: unknown[][] = [];
    const realOpen = window.open;
    window.open = ((...args: unknown[]) => (opened.push(args), null)) as typeof window.open;
    try {
      const ask = (id: number) =>
        window.dispatchEvent(
          new MessageEvent("message", { data: { jsonrpc: "2.0", id, method: "ui/open-link", params: { url: "https://example.com/a?b=1" } }, source: frame.contentWindow }),
        );
      ask(3);
      expect($(card, ".aiw-app-link .aiw-link-domain").textContent).toBe("example.com");
      expect(opened).toEqual([]); // asked, not opened
      $<HTMLButtonElement>(card, ".aiw-app-link-open").click();
      expect(opened).toEqual([["https://example.com/a?b=1", "_blank", "noopener,noreferrer"]]);
      expect(card.querySelector(".aiw-app-link")).toBeNull();
      ask(4);
      $<HTMLButtonElement>(card, ".aiw-app-link-no").click();
      expect(opened).toHaveLength(1);
      expect(card.querySelector(".aiw-app-link")).toBeNull();
    } finally {
      window.open = realOpen;
    }
  });
  it("starts over with the app when its frame reloads (moved in the page): the call's input and result again", async () => {
    const { card } = await appCard({ counter: { uri: "ui://counter/app.html", html: HTML } });
    const frame = $<HTMLIFrameElement>(card, "iframe.aiw-app-frame");
    const win = frame.contentWindow as Window;
    const posted: Array<Record<string, unknown>> = [];
    const realPost = win.postMessage.bind(win);
    win.postMessage = ((message: Record<string, unknown>) => void posted.push(message)) as typeof win.postMessage;
    const fromApp = (data: unknown) => window.dispatchEvent(new MessageEvent("message", { data, source: win }));
    const start = () => {
      fromApp({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
      fromApp({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    };
    const methods = () => posted.map((m) => m.method ?? `reply ${String(m.id)}`);
    try {
      frame.dispatchEvent(new Event("load")); // its first load: nothing starts over
      start();
      expect(methods()).toEqual(["reply 1", "ui/notifications/tool-input", "ui/notifications/tool-result"]);
      // The app asks for a call; then its frame reloads before the kernel answers.
      fromApp({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "bump", arguments: {} } });
      posted.length = 0;
      frame.dispatchEvent(new Event("load"));
      expect(methods()).toEqual([]); // nothing to a page that has not said it is ready
      start();
      expect(methods()).toEqual(["reply 1", "ui/notifications/tool-input", "ui/notifications/tool-result"]);
      // The kernel's late answer to the call the earlier page asked for does not reach the new page.
      posted.length = 0;
      deliverAppReply({ type: "app_reply", tool_call_id: "c1", request: 1, error: "declined" });
      expect(methods()).toEqual([]);
    } finally {
      win.postMessage = realPost;
    }
  });
});
