// Tool-card states and controls added with per-call cancel and edited approvals: "skipped" (not run, nobody
// cancelled it), the arguments a person edited before allowing a call, and the Cancel button.

import { describe, expect, it } from "vitest";
import type { ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const TOOLS = {
  rm: { title: "Delete files", icon: "🗑", risk: "destructive", description: "", requires_approval: true },
};

async function cardOf(extra: Partial<ToolCallPart>, traits: Partial<{ collapse_tool_calls: boolean }> = {}) {
  const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: false, ...traits });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "rm", { parsed_arguments: { path: "/tmp/a" }, ...extra })])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

describe("a skipped call", () => {
  it("says 'not run' in a neutral badge, never 'cancelled'", async () => {
    const { card } = await cardOf({
      state: "skipped",
      finished_at: 1001,
      outcome: { status: "failure", message: "Not run: the tool-round limit was reached." },
    });
    expect(card.dataset.state).toBe("skipped");
    const badge = $(card, ".aiw-state");
    expect(badge.textContent).toBe("not run");
    expect(badge.dataset.state).toBe("skipped");
    expect(card.textContent).not.toContain("cancelled");
    expect($(card, ".aiw-tool-result").classList.contains("aiw-result-quiet")).toBe(true);
    expect($(card, ".aiw-tool-error-message").textContent).toBe("Not run: the tool-round limit was reached.");
    expect($(card, ".aiw-tool-outcome-line").hidden).toBe(true); // only a failure's message shows collapsed
    expect($<HTMLButtonElement>(card, ".aiw-cancel-call").hidden).toBe(true);
  });
});

describe("edited arguments", () => {
  it("marks the card and shows the edited values as what ran, next to the model's", async () => {
    const { model, view, card } = await cardOf({ state: "awaiting_approval" }, { collapse_tool_calls: true });
    expect($(card, ".aiw-edited").hidden).toBe(true);
    expect($(card, ".aiw-tool-edited").hidden).toBe(true);
    model.patch([
      "call",
      "a1",
      "c1",
      { state: "running", decision: "approved", edited_arguments: { path: "/tmp/b" }, approval_requested_at: 1000, run_started_at: 1001 },
    ]);
    view.flush();
    expect($(card, ".aiw-edited").hidden).toBe(false);
    expect($(card, ".aiw-edited").textContent).toBe("edited");
    const edited = $(card, ".aiw-tool-edited");
    expect(edited.hidden).toBe(false);
    expect(edited.textContent).toContain("Ran with");
    expect($(edited, ".aiw-json").textContent).toContain("/tmp/b");
    expect($(card, ".aiw-tool-args .aiw-section-label").textContent).toBe("Arguments from the model");
    expect($(card, ".aiw-tool-args .aiw-json").textContent).toContain("/tmp/a");
    // Collapsed, the summary shows what ran.
    expect($(card, ".aiw-tool-summary").textContent).toBe("path: “/tmp/b”");
    const section = edited.querySelector(".aiw-json");
    model.patch(["call", "a1", "c1", { progress: { fraction: 0.5, message: null } }]);
    view.flush();
    expect(edited.querySelector(".aiw-json")).toBe(section); // unchanged edits are not re-rendered
  });

  it("shows nothing extra without an edit", async () => {
    const { card } = await cardOf({ state: "completed", edited_arguments: null, outcome: { status: "success", value: 1 } });
    expect($(card, ".aiw-edited").hidden).toBe(true);
    expect($(card, ".aiw-tool-args .aiw-section-label").textContent).toBe("Arguments");
  });
});

describe("the Cancel button", () => {
  it.each(["awaiting_approval", "running"] as const)("cancels a call that is %s, once until its state changes", async (state) => {
    const { model, view, card } = await cardOf({ state, run_started_at: state === "running" ? 1000 : null });
    const cancel = $<HTMLButtonElement>(card, ".aiw-cancel-call");
    expect(cancel.hidden).toBe(false);
    cancel.click();
    expect(model.sent.at(-1)).toEqual({ type: "cancel", tool_call_id: "c1" });
    expect(cancel.disabled).toBe(true);
    cancel.click();
    expect(model.sent.filter((m) => (m as { type: string }).type === "cancel")).toHaveLength(1);
    model.custom({ type: "error", message: "Cancel refused: it has ended" });
    expect(cancel.disabled).toBe(false);
    model.patch(["call", "a1", "c1", { state: "cancelled", finished_at: 1002, outcome: { status: "failure", message: "Cancelled by the person." } }]);
    view.flush();
    expect(cancel.hidden).toBe(true);
    expect($(card, ".aiw-state").textContent).toBe("cancelled");
  });

  it.each(["streaming", "pending", "completed", "failed", "rejected", "cancelled", "skipped"] as const)(
    "is not offered when the call is %s",
    async (state) => {
      const { card } = await cardOf({ state });
      expect($<HTMLButtonElement>(card, ".aiw-cancel-call").hidden).toBe(true);
    },
  );
});
