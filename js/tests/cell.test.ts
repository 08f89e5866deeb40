// A code call's outcome shown as a notebook cell's outputs (`outcome.cell`), what it changed, and the Copy /
// Insert as cell / Undo buttons with the kernel's answers.

import { afterEach, describe, expect, it, vi } from "vitest";
import type { CellRun, OutgoingMessage, ToolCallPart } from "../src/types";
import { $, FakeModel, assertInert, assistant, call, mount } from "./helpers";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const TOOLS = {
  run_python: {
    title: "Run Python",
    risk: "destructive",
    requires_approval: true,
    parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
    code_arguments: { code: "python" },
  },
};

const CELL: CellRun = {
  code: "print('a')\ndf2 = df.dropna()\ndf2.plot()",
  language: "python",
  edited: false,
  outputs: [
    { kind: "stream", name: "stdout", text: "a\n" },
    { kind: "stream", name: "stdout", text: "b\n" },
    { kind: "stream", name: "stderr", text: "warning <b>x</b>\n" },
    { kind: "display", display: { data: { "text/html": "<table><tr><td>1</td></tr></table><img src=x onerror=alert(1)>" } } },
    { kind: "display", display: { data: { "image/png": PNG, "text/plain": "<Figure>" } } },
    { kind: "result", display: { data: { "text/plain": "42" } } },
  ],
  created: ["df2"],
  rebound: ["df"],
  deleted: ["tmp"],
  mutated: ["rows"],
  stopped_at: null,
};

async function finished(cell: CellRun | null, extra: Partial<ToolCallPart> = {}, traits: Record<string, unknown> = {}) {
  const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: false, ...traits });
  const { view, root } = await mount(model);
  const outcome = { status: "success" as const, text: "a\nb\n42\nChanged: created df2.", cell };
  const part = call("c1", "run_python", { state: "completed", parsed_arguments: { code: "x = 1" }, finished_at: 1002, outcome, ...extra });
  model.patch(["start", assistant("a1", 0, [part])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

afterEach(() => vi.restoreAllMocks());

describe("a cell's outputs", () => {
  it("show in order as the notebook shows them, sanitised, with what it changed as chips", async () => {
    const { card } = await finished(CELL);
    const outputs = $(card, ".aiw-tool-display-slot .aiw-cell-outputs");
    const kinds = [...outputs.children].map((el) => el.className.split(" ").find((c) => c.startsWith("aiw-cell-") || c === "aiw-display"));
    expect(kinds).toEqual(["aiw-cell-stream", "aiw-cell-stream", "aiw-display", "aiw-display", "aiw-display"]);
    const streams = outputs.querySelectorAll<HTMLElement>(".aiw-cell-stream");
    expect(streams[0].textContent).toBe("a\nb\n"); // consecutive prints to one stream: one block
    expect(streams[1].dataset.name).toBe("stderr");
    expect(streams[1].querySelector("b")).toBeNull();
    expect(outputs.querySelector("table td")!.textContent).toBe("1");
    expect(outputs.querySelector<HTMLImageElement>(".aiw-display-image")!.src).toMatch(/^data:image\/png;base64,/);
    expect(outputs.querySelector(".aiw-cell-result")!.textContent).toBe("42");
    assertInert(card);
    const chips = [...card.querySelectorAll<HTMLElement>(".aiw-cell-chip")].map((c) => [c.dataset.change, c.textContent]);
    expect(chips).toEqual([["created", "df2"], ["rebound", "df"], ["deleted", "tmp"], ["mutated", "rows"]]);
    expect($(card, '.aiw-cell-change-group[data-change="mutated"]').textContent).toContain("cannot be undone");
    expect($(card, ".aiw-cell-told pre").textContent).toContain("Changed: created df2.");
    expect(card.querySelector(".aiw-result-text")).toBeNull(); // the model's text is not the card's result
  });

  it("read as a cell's: open, under the code and before what it changed and the buttons; closed, under the header", async () => {
    const { card } = await finished(CELL);
    const body = $(card, ".aiw-tool-body");
    const slot = $(card, ".aiw-tool-display-slot");
    const before = (a: Element, b: Element) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
    expect(slot.parentElement).toBe(body);
    expect(before($(card, ".aiw-code-args"), slot)).toBe(true);
    expect(before(slot, $(card, ".aiw-cell-changes"))).toBe(true);
    expect(before(slot, $(card, ".aiw-cell-actions"))).toBe(true);
    $<HTMLButtonElement>(card, ".aiw-tool-toggle").click(); // closed: the outputs still show, under the header
    expect(body.hidden).toBe(true);
    expect(slot.parentElement).toBe(card);
    expect(slot.previousElementSibling).toBe(body);
    expect(slot.hidden).toBe(false);
    $<HTMLButtonElement>(card, ".aiw-tool-toggle").click();
    expect(slot.parentElement).toBe(body);
  });

  it("show the error with its traceback under a fold, and where a stopped run stopped", async () => {
    const cell: CellRun = {
      code: "while True: pass",
      outputs: [
        { kind: "stream", name: "stdout", text: "started\n" },
        { kind: "error", text: 'Traceback (most recent call last):\n  File "<cell>", line 1\nKeyboardInterrupt: stopped\n' },
      ],
      stopped_at: "line 1 of the code",
    };
    const { card } = await finished(cell, {
      state: "cancelled",
      outcome: { status: "failure", message: "Cancelled: stopped at line 1 of the code", cell, error: { type: "KeyboardInterrupt", traceback: "tb" } },
    });
    const error = $<HTMLDetailsElement>(card, ".aiw-cell-error");
    expect(error.open).toBe(false);
    expect(error.querySelector("summary")!.textContent).toBe("KeyboardInterrupt: stopped");
    expect(error.querySelector("pre")!.textContent).toContain('File "<cell>"');
    expect($(card, ".aiw-cell-stopped").textContent).toBe("Stopped at line 1 of the code.");
    expect(card.querySelector(".aiw-traceback")).toBeNull(); // the cell's error is the traceback shown
  });
});

describe("a failed run", () => {
  it("shows its error among the outputs, not again as the card's line; the model's text under the fold", async () => {
    const traceback = "Traceback (most recent call last):\n  line 1 of the code\n    1/0\nZeroDivisionError: division by zero\n";
    const cell: CellRun = { code: "1/0", outputs: [{ kind: "error", text: traceback }] };
    const { card } = await finished(cell, {
      state: "failed",
      outcome: { status: "failure", message: `${traceback}No variables changed.`, cell },
    });
    expect($(card, ".aiw-tool-outcome-line").hidden).toBe(true);
    expect($(card, ".aiw-tool-display-slot .aiw-cell-error summary").textContent).toBe("ZeroDivisionError: division by zero");
    expect(card.querySelector(".aiw-tool-error-message")).toBeNull();
    expect($(card, ".aiw-cell-told pre").textContent).toContain("No variables changed.");
  });

  it("that never ran (refused) says why in the card's line", async () => {
    const cell: CellRun = { code: "!ls", outputs: [] };
    const message = "Refused, and nothing ran: the code runs shell commands (!ls).";
    const { card } = await finished(cell, { state: "failed", outcome: { status: "failure", message, cell } });
    expect($(card, ".aiw-tool-outcome-line").textContent).toBe(message);
    expect(card.querySelector(".aiw-cell-told")).toBeNull(); // the same text: not twice
  });
});

describe("Copy, Insert as cell, Undo", () => {
  it("are on a finished code call: Copy copies the code as it ran", async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const { card } = await finished(CELL);
    const actions = $(card, ".aiw-cell-actions");
    expect(actions.hidden).toBe(false);
    $<HTMLButtonElement>(actions, ".aiw-cell-copy").click();
    await new Promise((r) => setTimeout(r, 0));
    expect(writeText).toHaveBeenCalledWith(CELL.code);
    expect($(actions, ".aiw-cell-copy").textContent).toBe("Copied");
  });

  it("are not on a call that has not run, nor on one of a tool without code", async () => {
    const { card } = await finished(null, { state: "rejected", outcome: { status: "failure", message: "Declined" } });
    expect($(card, ".aiw-cell-actions").hidden).toBe(true);
  });

  it("Undo asks the kernel, shows its answer, and the card shows undone from the trait", async () => {
    const { model, view, card } = await finished(CELL);
    const undo = $<HTMLButtonElement>(card, ".aiw-cell-undo");
    expect(undo.hidden).toBe(false);
    undo.click();
    undo.click(); // once
    const sent = (model.sent as OutgoingMessage[]).filter((m) => m.type === "undo_call");
    expect(sent).toEqual([{ type: "undo_call", tool_call_id: "c1" }]);
    expect(undo.disabled).toBe(true);
    model.custom({ type: "cell_action", action: "undo_call", tool_call_id: "c1", ok: true, message: "Put back df; removed df2." });
    model.set("_undone", { c1: "Put back df; removed df2." });
    view.flush();
    await new Promise((r) => setTimeout(r, 0));
    expect($(card, ".aiw-cell-action-status").textContent).toBe("Put back df; removed df2.");
    expect($(card, ".aiw-undone").hidden).toBe(false);
    expect(undo.hidden).toBe(true);
  });

  it("a refused Undo shows the kernel's reason and can be tried again", async () => {
    const { model, card } = await finished(CELL);
    const undo = $<HTMLButtonElement>(card, ".aiw-cell-undo");
    undo.click();
    model.custom({ type: "cell_action", action: "undo_call", tool_call_id: "c2", ok: true, message: "other call" });
    model.custom({ type: "cell_action", action: "undo_call", tool_call_id: "c1", ok: false, message: "Undo call c9 first: it changed df since." });
    await new Promise((r) => setTimeout(r, 0));
    const status = $(card, ".aiw-cell-action-status");
    expect(status.textContent).toBe("Undo call c9 first: it changed df since.");
    expect(status.dataset.kind).toBe("refused");
    expect(undo.disabled).toBe(false);
    expect($(card, ".aiw-undone").hidden).toBe(true);
  });

  it("Undo is disabled for a run that only changed values in place, absent for one that changed nothing", async () => {
    const { card } = await finished({ ...CELL, created: [], rebound: [], deleted: [], mutated: ["rows"] });
    const undo = $<HTMLButtonElement>(card, ".aiw-cell-undo");
    expect(undo.disabled).toBe(true);
    expect(undo.title).toContain("cannot be undone");
    const other = await finished({ ...CELL, created: [], rebound: [], deleted: [], mutated: [] });
    expect($<HTMLButtonElement>(other.card, ".aiw-cell-undo").hidden).toBe(true);
  });

  it("Insert as cell: where the host cannot, the kernel says so and the code is copied instead", async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const { model, card } = await finished(CELL);
    $<HTMLButtonElement>(card, ".aiw-cell-insert").click();
    expect(model.sent.at(-1)).toEqual({ type: "insert_cell", tool_call_id: "c1" });
    model.custom({ type: "cell_action", action: "insert_cell", tool_call_id: "c1", ok: false, copy: true, message: "No cell is running here." });
    await new Promise((r) => setTimeout(r, 0));
    expect(writeText).toHaveBeenCalledWith(CELL.code);
    expect($(card, ".aiw-cell-action-status").textContent).toBe("No cell is running here. The code was copied instead.");
  });

  it("a kernel error naming the action lets the buttons work again", async () => {
    const { model, view, card } = await finished(CELL);
    const insert = $<HTMLButtonElement>(card, ".aiw-cell-insert");
    insert.click();
    expect(insert.disabled).toBe(true);
    model.custom({ type: "error", message: "The 'insert_cell' request failed: boom" });
    view.flush();
    expect(insert.disabled).toBe(false);
  });
});
