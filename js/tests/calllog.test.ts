// A call's log (issue 21): the lines its MCP server logged, as text in the card, shown while the call runs (also
// collapsed), kept in the card's body once it ended, updated by `call` ops.

import { describe, expect, it } from "vitest";
import { CallLog } from "../src/render/calllog";
import type { ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const TOOLS = { read: { title: "Read", icon: "", risk: "read_only", description: "", requires_approval: false } };

async function cardOf(extra: Partial<ToolCallPart>) {
  const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: true });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "read", extra)])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

describe("CallLog", () => {
  it("shows the lines as text, and is hidden without any", () => {
    const log = new CallLog(["one", "<img src=x onerror=alert(1)>", 3 as unknown as string]);
    const lines = [...log.el.querySelectorAll(".aiw-call-log-line")].map((el) => el.textContent);
    expect(lines).toEqual(["one", "<img src=x onerror=alert(1)>"]);
    expect(log.el.querySelector("img")).toBeNull();
    expect(log.el.hidden).toBe(false);
    log.update([]);
    expect(log.el.hidden).toBe(true);
    expect(log.el.children.length).toBe(0);
    log.update(undefined);
    expect(log.el.hidden).toBe(true);
  });
});

describe("a card's log", () => {
  it("shows while the call runs, collapsed too, and follows call ops", async () => {
    const { model, view, card } = await cardOf({ state: "running", log_lines: ["starting"] });
    const log = $(card, ".aiw-call-log");
    expect(log.hidden).toBe(false);
    expect(log.parentElement).toBe(card); // not in the (collapsed) body
    expect(log.textContent).toBe("starting");
    model.patch(["call", "a1", "c1", { log_lines: ["starting", "half way"] }]);
    view.flush();
    expect([...card.querySelectorAll(".aiw-call-log-line")].map((el) => el.textContent)).toEqual([
      "starting",
      "half way",
    ]);
    model.patch(["call", "a1", "c1", { state: "completed", outcome: { status: "success", value: "ok" } }]);
    view.flush();
    expect($(card, ".aiw-tool-body").contains(log)).toBe(true); // kept, seen when the card is opened
  });

  it("is hidden for a call that logged nothing", async () => {
    const { card } = await cardOf({ state: "running" });
    expect($(card, ".aiw-call-log").hidden).toBe(true);
  });
});
