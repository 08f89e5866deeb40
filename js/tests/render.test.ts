import { describe, expect, it } from "vitest";
import type { ToolCallState } from "../src/types";
import { $, FakeModel, assistant, call, mount, settle, user } from "./helpers";

const TOOLS = {
  get_weather: { title: "Weather", icon: "☀", risk: "read_only", description: "", requires_approval: false },
  rm: { title: "Delete files", icon: "🗑", risk: "destructive", description: "", requires_approval: true },
};

describe("messages and parts", () => {
  it("renders user text as text, assistant text as markdown, reasoning collapsed, in index order", async () => {
    const model = new FakeModel();
    model.finish(user("u1", 0, "**not bold** <b>x</b>"));
    const { view, root } = await mount(model);
    expect(root.dataset.rendered).toBe("true");
    model.patch([
      "start",
      assistant("a1", 1, [
        { kind: "reasoning", text: "thinking" },
        { kind: "text", text: "**bold** and `code`" },
      ]),
    ]);
    view.flush();
    const msgs = root.querySelectorAll(".aiw-message");
    expect([...msgs].map((m) => [m.getAttribute("data-role"), m.getAttribute("data-id"), m.getAttribute("data-status")])).toEqual([
      ["user", "u1", "completed"],
      ["assistant", "a1", "in_progress"],
    ]);
    expect($(msgs[0], ".aiw-text").textContent).toBe("**not bold** <b>x</b>");
    expect(msgs[0].querySelector("b")).toBeNull();
    expect($(msgs[1], ".aiw-md strong").textContent).toBe("bold");
    const reasoning = $<HTMLDetailsElement>(msgs[1], "details.aiw-reasoning");
    expect(reasoning.open).toBe(false);
    expect(reasoning.textContent).toContain("thinking");
  });

  it("streams text into the part and shows the status line until the reply starts", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0)], ["msg", "a1", { status_text: "Thinking…" }]);
    view.flush();
    const line = $(root, ".aiw-status-line");
    expect(line.hidden).toBe(false);
    expect(line.textContent).toBe("Thinking…");
    expect(line.classList.contains("aiw-status-active")).toBe(true);
    model.patch(["msg", "a1", { status_text: null }], ["part", "a1", 0, { kind: "text", text: "Hel" }]);
    view.flush();
    const part = $(root, ".aiw-md");
    model.patch(["text", "a1", 0, "lo *world*"]);
    view.flush();
    expect($(root, ".aiw-md")).toBe(part);
    expect(part.innerHTML).toContain("<em>world</em>");
    expect(line.textContent).toBe("");
    model.patch(["msg", "a1", { status: "completed" }]);
    view.flush();
    expect(line.hidden).toBe(true);
  });

  // Before: every error showed twice, an inline note and a banner whose primary button was Continue (after a
  // connection failure, the wrong action).
  it("says a reply's error once, in the reply, with the action for its kind and a troubleshooting link", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    const help = "https://ai-widgets.readthedocs.io/en/latest/troubleshooting/#providererror";
    model.patch(["start", assistant("a1", 0)], ["msg", "a1", { status: "error", error: "Could not reach the server.", error_kind: "request", error_help: help }]);
    view.flush();
    const error = $(root, ".aiw-message[data-id='a1'] .aiw-reply-error");
    expect(error.hidden).toBe(false);
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toContain("Could not reach the server.");
    expect(root.textContent!.split("Could not reach the server.").length).toBe(2); // said once
    const action = $<HTMLButtonElement>(error, ".aiw-error-action");
    expect(action.dataset.label).toBe("Retry"); // drawn by CSS: not part of the reply's text
    expect(root.querySelector(".aiw-continue, .aiw-turn-banner")).toBeNull(); // no banner for one reply
    const link = $<HTMLAnchorElement>(error, "a.aiw-error-help");
    expect(link.getAttribute("href")).toBe(help);
    expect(link.target).toBe("_blank");
    expect(link.rel).toContain("noopener");
    action.click();
    expect(model.sent.at(-1)).toEqual({ type: "regenerate" });

    model.patch(["msg", "a1", { status: "limit_reached", error: "Paused at the limit (max_iterations).", error_kind: "max_iterations", error_help: "https://ai-widgets.readthedocs.io/en/latest/troubleshooting/#max-iterations" }]);
    view.flush();
    expect(link.getAttribute("href")).toBe("https://ai-widgets.readthedocs.io/en/latest/troubleshooting/#max-iterations");
    expect(action.dataset.label).toBe("Continue"); // only after a loop or budget limit
    expect(action.disabled).toBe(false);
    expect(error.dataset.kind).toBe("limit_reached");
    action.click();
    expect(model.sent.at(-1)).toEqual({ type: "continue" });
    expect(action.disabled).toBe(true);
    model.custom({ type: "error", message: "A reply is still running" }); // the kernel refused it: click again
    view.flush();
    expect(action.disabled).toBe(false);

    // A saved notebook's state is not trusted: only a web address becomes the link, never another scheme.
    for (const bad of ["javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,<b>x</b>", "docs/troubleshooting.md"]) {
      model.patch(["msg", "a1", { status: "error", error: "bad link", error_kind: "request", error_help: bad }]);
      view.flush();
      expect(error.textContent).toContain("bad link"); // the patch applied
      expect(error.querySelector("a")).toBeNull(); // no address, no anchor
    }
    model.patch(["msg", "a1", { status: "cancelled", error: null, error_kind: null, error_help: null }]);
    view.flush();
    expect(error.hidden).toBe(true);
    expect($(root, ".aiw-note").textContent).toBe("Stopped");
  });

  it("a reply's error that is not the last offers no action, and one with no link shows none", async () => {
    const model = new FakeModel();
    model.finish(assistant("a1", 0, [], { status: "error", error: "boom" }), { notify: false });
    model.finish(user("u1", 1, "again"), { notify: false });
    model.finish(assistant("a2", 2, [{ kind: "text", text: "ok" }], { status: "completed" }), { notify: false });
    const { view, root } = await mount(model);
    model.custom({ type: "snapshot", live: [] });
    view.flush();
    // The earlier messages are built when idle (render/backfill.ts).
    for (let i = 0; i < 100 && root.querySelector(".aiw-unbuilt"); i++) await new Promise((r) => setTimeout(r, 20));
    const error = $(root, ".aiw-message[data-id='a1'] .aiw-reply-error");
    expect(error.textContent).toContain("boom");
    expect($(error, ".aiw-error-action").hidden).toBe(true);
    expect(error.querySelector("a")).toBeNull(); // no address, no anchor
  });

  it("shows kernel errors as dismissible banners", async () => {
    const model = new FakeModel();
    const { root } = await mount(model);
    model.custom({ type: "error", message: "A reply is still running" });
    const banner = $(root, ".aiw-banner-kernel");
    expect(banner.getAttribute("role")).toBe("alert");
    expect(banner.textContent).toContain("A reply is still running");
    $<HTMLButtonElement>(banner, "button").click();
    expect(root.querySelector(".aiw-banner-kernel")).toBeNull();
  });
});

describe("tool cards", () => {
  const states: ToolCallState[] = ["streaming", "pending", "awaiting_approval", "running", "completed", "failed", "rejected", "cancelled"];

  it.each(states)("renders state %s", async (state) => {
    const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: false });
    const { view, root } = await mount(model);
    const terminal = ["completed", "failed", "rejected", "cancelled"].includes(state);
    model.patch([
      "start",
      assistant("a1", 0, [
        call("c1", "rm", {
          state,
          parsed_arguments: { path: "/tmp/x" },
          approval_reason: "Delete /tmp/x?",
          run_started_at: state === "pending" || state === "streaming" ? null : 1000,
          finished_at: terminal ? 1002.5 : null,
          decision: state === "rejected" ? "rejected" : null,
          decision_reason: state === "rejected" ? "not now" : null,
          progress: state === "running" ? { fraction: 0.25, message: "deleting" } : null,
          outcome: terminal
            ? state === "completed"
              ? { status: "success", value: { deleted: 3 } }
              : { status: "failure", message: state === "failed" ? "Tool failed" : "declined" }
            : null,
        }),
      ]),
    ]);
    view.flush();
    const card = $(root, '.aiw-tool-card[data-call-id="c1"]');
    expect(card.dataset.state).toBe(state);
    expect($(card, ".aiw-tool-title").textContent).toBe("Delete files");
    expect($(card, ".aiw-tool-icon").textContent).toBe("🗑");
    expect($(card, ".aiw-risk").dataset.risk).toBe("destructive");
    expect($(card, ".aiw-state").textContent).toBe(state.replace("_", " "));
    expect($(card, ".aiw-tool-args .aiw-json").textContent).toContain("/tmp/x");
    expect(card.querySelector(".aiw-approval") !== null).toBe(state === "awaiting_approval");
    expect(card.querySelector(".aiw-progress") !== null).toBe(state === "running");
    expect($(card, ".aiw-elapsed").textContent).toBe(terminal ? "2.5s" : state === "running" ? $(card, ".aiw-elapsed").textContent : "");
    if (state === "running") {
      const progress = $(card, ".aiw-progress");
      expect(progress.getAttribute("aria-valuenow")).toBe("25");
      expect(progress.textContent).toContain("deleting");
    }
    if (state === "completed") expect($(card, ".aiw-tool-result .aiw-json").textContent).toContain("deleted");
    if (state === "failed") expect($(card, ".aiw-tool-outcome-line").textContent).toBe("Tool failed");
    if (state === "rejected") expect($(card, ".aiw-decision").textContent).toBe("Declined: not now");
  });

  it("shows an indeterminate progress bar without a fraction", async () => {
    const model = new FakeModel({ collapse_tool_calls: false });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "t", { state: "running", run_started_at: 1 })])]);
    view.flush();
    const progress = $(root, ".aiw-progress");
    expect(progress.classList.contains("aiw-indeterminate")).toBe(true);
    expect(progress.hasAttribute("aria-valuenow")).toBe(false);
    model.patch(["call", "a1", "c1", { progress: { fraction: 0.5, message: "half" } }]);
    view.flush();
    expect($(root, ".aiw-progress")).toBe(progress);
    expect(progress.classList.contains("aiw-indeterminate")).toBe(false);
    expect(($(progress, ".aiw-progress-bar") as HTMLElement).style.width).toBe("50%");
  });

  it("renders a failure's traceback in <details>, text results as markdown, citations as links", async () => {
    const model = new FakeModel({ collapse_tool_calls: false });
    const { view, root } = await mount(model);
    model.patch([
      "start",
      assistant("a1", 0, [
        call("c1", "t", {
          state: "failed",
          outcome: { status: "failure", message: "Tool failed", error: { type: "ValueError", message: "bad", traceback: "Traceback…" } },
        }),
        call("c2", "t", {
          state: "completed",
          outcome: { status: "success", text: "**done**", citations: [{ url: "https://a.example", title: "A" }] },
        }),
      ]),
    ]);
    view.flush();
    expect($(root, '[data-call-id="c1"] .aiw-tool-outcome-line').textContent).toBe("ValueError: bad");
    expect($(root, '[data-call-id="c1"] details.aiw-traceback pre').textContent).toBe("Traceback…");
    expect($(root, '[data-call-id="c2"] .aiw-md strong').textContent).toBe("done");
    expect($(root, '[data-call-id="c2"] .aiw-citations a').getAttribute("href")).toBe("https://a.example");
  });

  it("starts collapsed when collapse_tool_calls, toggles, and stays open while awaiting approval", async () => {
    const model = new FakeModel({ _tools: TOOLS });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "get_weather", { parsed_arguments: { city: "Paris" } })])]);
    view.flush();
    const card = $(root, ".aiw-tool-card");
    const toggle = $<HTMLButtonElement>(card, ".aiw-tool-toggle");
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect($(card, ".aiw-tool-body").hidden).toBe(true);
    expect($(card, ".aiw-tool-summary").textContent).toBe("city: “Paris”");
    toggle.click();
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    toggle.click();
    model.patch(["call", "a1", "c1", { state: "awaiting_approval" }]);
    view.flush();
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect($(card, ".aiw-tool-body").hidden).toBe(false);
    model.patch(["call", "a1", "c1", { state: "running" }]);
    view.flush();
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
  });

  it("uses the tool name when the tool is unknown, and follows changes of the tools trait", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "get_weather")])]);
    view.flush();
    expect($(root, ".aiw-tool-title").textContent).toBe("get_weather");
    expect($(root, ".aiw-risk").hidden).toBe(true);
    model.set("_tools", TOOLS);
    view.flush();
    expect($(root, ".aiw-tool-title").textContent).toBe("Weather");
    expect($(root, ".aiw-risk").textContent).toBe("read-only");
  });
});

describe("approval", () => {
  async function awaiting(): Promise<{ model: FakeModel; view: import("../src/view").ChatView; root: HTMLElement }> {
    const model = new FakeModel({ _tools: TOOLS });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "rm", { state: "awaiting_approval", approval_reason: "Delete /tmp?" })])]);
    view.flush();
    await settle();
    return { model, view, root };
  }

  it.each([
    [".aiw-approve-once", "approved", "Allowed once"],
    [".aiw-approve-always", "approved_always", "Allowed always"],
  ])("%s sends %s and disables the buttons", async (sel, decision, label) => {
    const { model, view, root } = await awaiting();
    expect($(root, ".aiw-approval-question").textContent).toBe("Delete /tmp?");
    $<HTMLButtonElement>(root, sel).click();
    expect(model.sent.at(-1)).toEqual({ type: "approve", tool_call_id: "c1", decision });
    for (const b of root.querySelectorAll<HTMLButtonElement>(".aiw-approval button")) expect(b.disabled).toBe(true);
    $<HTMLButtonElement>(root, sel).click();
    expect(model.sent.filter((m) => (m as { type: string }).type === "approve")).toHaveLength(1);
    model.patch(["call", "a1", "c1", { state: "running", decision }]);
    view.flush();
    expect(root.querySelector(".aiw-approval")).toBeNull();
    expect($(root, ".aiw-decision").textContent).toBe(label);
  });

  it("declines with the optional reason, and re-enables when the kernel refuses", async () => {
    const { model, root } = await awaiting();
    $<HTMLInputElement>(root, ".aiw-decline-reason").value = "  too risky ";
    $<HTMLButtonElement>(root, ".aiw-decline").click();
    expect(model.sent.at(-1)).toEqual({ type: "approve", tool_call_id: "c1", decision: "rejected", reason: "too risky" });
    expect($<HTMLButtonElement>(root, ".aiw-decline").disabled).toBe(true);
    model.custom({ type: "error", message: "Approval refused: not waiting" });
    expect($<HTMLButtonElement>(root, ".aiw-decline").disabled).toBe(false);
  });

  it("focuses Allow once when the prompt appears, unless the person is typing", async () => {
    const { root } = await awaiting();
    expect(document.activeElement).toBe($(root, ".aiw-approve-once"));
    const model = new FakeModel({ _tools: TOOLS });
    const second = await mount(model);
    second.root.querySelector<HTMLTextAreaElement>(".aiw-input")!.focus();
    model.patch(["start", assistant("a1", 0, [call("c1", "rm", { state: "awaiting_approval" })])]);
    second.view.flush();
    await settle();
    expect(document.activeElement).toBe($(second.root, ".aiw-input"));
  });

  it("lists tools allowed always with Revoke buttons", async () => {
    const model = new FakeModel({ _tools: TOOLS, _allowed_always: ["rm"] });
    const { view, root } = await mount(model);
    expect($(root, ".aiw-allowed").textContent).toContain("Delete files");
    $<HTMLButtonElement>(root, ".aiw-revoke").click();
    expect(model.sent.at(-1)).toEqual({ type: "revoke", tool_name: "rm" });
    model.set("_allowed_always", []);
    view.flush();
    expect($(root, ".aiw-allowed").hidden).toBe(true);
  });
});
