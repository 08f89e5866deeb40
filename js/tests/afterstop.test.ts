// A sync tool's thread after its call ended (cancelled, stopped, timed out): the card says it is stopping until the
// thread returns, then what it returned or raised, discarded. Display-only fields (AFTER_STOP_FIELDS) that apply to a
// finished message too, while its record (state, outcome) never changes.

import { describe, expect, it } from "vitest";
import type { Message, ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const CANCELLED = {
  state: "cancelled",
  finished_at: 1002,
  outcome: { status: "failure", message: "Cancelled by the person. Its thread had not returned yet; whatever it returns is discarded." },
} as const;

async function running(collapse = false) {
  const model = new FakeModel({ collapse_tool_calls: collapse });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "slow", { state: "running", run_started_at: 1000 })])]);
  view.flush();
  return { model, view, root, card: () => $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

const finishedCopy = (late: Partial<ToolCallPart> = {}): Message =>
  assistant("a1", 0, [call("c1", "slow", { ...CANCELLED, run_started_at: 1000, ...late })], { status: "completed" });

const afterStopText = (card: HTMLElement): string => $(card, ".aiw-tool-after-stop").textContent ?? "";

describe("a call whose thread still runs after it ended", () => {
  it.each([true, false])("says it is stopping, with a moving cue (collapsed: %s)", async (collapse) => {
    const { model, view, card } = await running(collapse);
    expect(card().querySelector(".aiw-after-stop")).toBeNull();
    model.patch(["call", "a1", "c1", { ...CANCELLED, stopping: true, late: null }]);
    view.flush();
    expect($(card(), ".aiw-state").textContent).toBe("cancelled");
    expect($<HTMLButtonElement>(card(), ".aiw-cancel-call").hidden).toBe(true);
    const note = $(card(), ".aiw-after-stop");
    expect(note.dataset.phase).toBe("stopping");
    expect(note.getAttribute("role")).toBe("status");
    expect(note.textContent).toBe("Stopping… (the tool has not returned yet)");
    expect(note.querySelector(".aiw-after-stop-cue")).not.toBeNull();
    expect($(card(), ".aiw-tool-after-stop").closest("[hidden]")).toBeNull(); // shown collapsed too
  });

  it("a timed-out call says the same", async () => {
    const { model, view, card } = await running();
    const failed = { status: "failure", message: "The tool slow did not finish within 1 seconds." };
    model.patch(["call", "a1", "c1", { state: "failed", finished_at: 1003, outcome: failed }], ["call", "a1", "c1", { stopping: true, late: null }]);
    view.flush();
    expect($(card(), ".aiw-state").textContent).toBe("failed");
    expect(afterStopText(card())).toBe("Stopping… (the tool has not returned yet)");
  });

  it("then, on the finished message, what it returned: discarded, and kept in the model's history", async () => {
    const { model, view, card } = await running();
    model.patch(["call", "a1", "c1", { ...CANCELLED, stopping: true, late: null }]);
    view.flush();
    model.finish(finishedCopy()); // built from the record: without the thread's fields...
    model.patch(["call", "a1", "c1", { stopping: true, late: null }]); // ...which the kernel sends again after it
    view.flush();
    expect(afterStopText(card())).toBe("Stopping… (the tool has not returned yet)");
    model.patch(["call", "a1", "c1", { stopping: false, late: { kind: "returned", preview: '{"rows": 12}' } }]);
    view.flush();
    const note = $(card(), ".aiw-after-stop");
    expect(note.dataset.phase).toBe("returned");
    expect($(note, ".aiw-after-stop-label").textContent).toBe("Returned after the stop: discarded");
    expect($(note, ".aiw-after-stop-preview").textContent).toBe('{"rows": 12}');
    expect(note.querySelector(".aiw-after-stop-cue")).toBeNull();
    expect(card().textContent).not.toContain("Stopping");
    // In place, in the model's own history: a saved notebook (and a view opened from it) shows it.
    const saved = (model.attrs._history[0] as Message).parts[0] as ToolCallPart;
    expect(saved.late).toEqual({ kind: "returned", preview: '{"rows": 12}' });
    expect(saved.stopping).toBe(false);
    const { root: again } = await mount(new FakeModel({ _history: JSON.parse(JSON.stringify(model.attrs._history)) }));
    expect(afterStopText($(again, '.aiw-tool-card[data-call-id="c1"]'))).toBe('Returned after the stop: discarded{"rows": 12}');
  });

  it("or what it raised", async () => {
    const { model, view, card } = await running();
    model.finish(finishedCopy({ stopping: true }));
    model.patch(["call", "a1", "c1", { stopping: false, late: { kind: "raised", preview: "ValueError: boom" } }]);
    view.flush();
    const note = $(card(), ".aiw-after-stop");
    expect(note.dataset.phase).toBe("raised");
    expect($(note, ".aiw-after-stop-label").textContent).toBe("Raised after the stop:");
    expect($(note, ".aiw-after-stop-preview").textContent).toBe("ValueError: boom");
  });

  it("never changes a finished call's record: only the thread's fields apply", async () => {
    const { model, view, card } = await running();
    model.finish(finishedCopy());
    const late = { kind: "returned", preview: "42" };
    model.patch(["call", "a1", "c1", { state: "completed", outcome: { status: "success", value: 42 }, late }]);
    view.flush();
    const saved = (model.attrs._history[0] as Message).parts[0] as ToolCallPart;
    expect(saved.state).toBe("cancelled");
    expect(saved.outcome).toEqual(CANCELLED.outcome);
    expect(saved.late).toEqual(late);
    expect($(card(), ".aiw-state").textContent).toBe("cancelled");
    expect(afterStopText(card())).toBe("Returned after the stop: discarded42");
    model.patch(["call", "a1", "nope", { late }], ["call", "ghost", "c1", { late }]); // unknown: ignored
    view.flush();
  });

  it("shows a hostile preview as text", async () => {
    const { model, view, card } = await running();
    model.finish(finishedCopy({ stopping: true }));
    const hostile = '<img src=x onerror="globalThis.pwned=1"><script>globalThis.pwned=1</script>';
    model.patch(["call", "a1", "c1", { stopping: false, late: { kind: "returned", preview: hostile } }]);
    view.flush();
    expect(card().querySelector("img, script")).toBeNull();
    expect($(card(), ".aiw-after-stop-preview").textContent).toBe(hostile);
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
  });
});
