// A bench run whose sync call was cancelled while its thread ran: the entry's card says the thread is stopping,
// then what it returned (the kernel keeps AFTER_STOP_FIELDS in the entry's message, as in the chat's).

import { describe, expect, it } from "vitest";
import type { BenchEntry, ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const TOOLS = {
  slow: { title: "Slow", icon: "🐢", risk: "normal", description: "Sleeps.", parameters: { type: "object", properties: { n: { type: "integer" } } } },
};

const CANCELLED = {
  state: "cancelled",
  run_started_at: 1,
  finished_at: 2,
  outcome: { status: "failure", message: "Cancelled by the person." },
} as const;

function entry(part: Partial<ToolCallPart>): BenchEntry {
  return {
    id: "bench_1",
    tool_name: "slow",
    arguments: { n: 1 },
    source: null,
    message: { ...assistant("m_b", 0, [call("b_call", "slow", { ...CANCELLED, ...part })]), status: "completed" },
    running: false,
    errors: {},
    error: null,
    attempt: 1,
  };
}

describe("a bench run whose thread outlives its cancelled call", () => {
  it("says it is stopping, then what the thread returned, and a new run shows neither", async () => {
    const model = new FakeModel({ _tools: TOOLS });
    const { view, root } = await mount(model);
    model.set("_bench", [entry({ stopping: true, late: null })]);
    view.flush();
    const card = () => $(root, '.aiw-bench-run .aiw-tool-card[data-call-id="b_call"]');
    expect($(card(), ".aiw-after-stop").dataset.phase).toBe("stopping");
    model.set("_bench", [entry({ stopping: false, late: { kind: "returned", preview: "20" } })]);
    view.flush();
    const note = $(card(), ".aiw-after-stop");
    expect(note.dataset.phase).toBe("returned");
    expect(note.textContent).toContain("20");
    expect($(card(), ".aiw-state").textContent).toBe("cancelled"); // the record is the one it ended with
    model.set("_bench", [entry({ tool_call_id: "b_call", state: "completed", outcome: { status: "success", value: 30 } })]);
    view.flush();
    expect(card().querySelector(".aiw-after-stop")).toBeNull();
  });
});
