// A call its agent describes (ACP): the line diff of an edit, and the card's view of title, files, diffs and
// terminal output, shown before the person decides.

import { describe, expect, it } from "vitest";
import { lineDiff } from "../src/diff";
import { $, FakeModel, assistant, call, mount } from "./helpers";

describe("lineDiff", () => {
  it("keeps a few lines of context and shows the changed middle as removed then added", () => {
    const before = ["a", "b", "c", "d", "e", "old", "x", "y"].join("\n") + "\n";
    const after = ["a", "b", "c", "d", "e", "new", "x", "y"].join("\n") + "\n";
    expect(lineDiff(before, after)).toEqual([
      { kind: "skipped", text: "2 unchanged lines" },
      { kind: "same", text: "c" },
      { kind: "same", text: "d" },
      { kind: "same", text: "e" },
      { kind: "removed", text: "old" },
      { kind: "added", text: "new" },
      { kind: "same", text: "x" },
      { kind: "same", text: "y" },
    ]);
  });

  it("shows a new file as added lines, and caps what it shows", () => {
    expect(lineDiff(null, "one\ntwo\n")).toEqual([
      { kind: "added", text: "one" },
      { kind: "added", text: "two" },
    ]);
    const rows = lineDiff("", Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n"), 10);
    expect(rows).toHaveLength(11);
    expect(rows[10]).toEqual({ kind: "skipped", text: "990 more lines not shown" });
  });
});

describe("a call's view in its card", () => {
  it("shows the title, the files, the diff and a terminal while the person decides", async () => {
    const model = new FakeModel({ collapse_tool_calls: true });
    const { view, root } = await mount(model);
    const diff = { type: "diff" as const, path: "/w/a.txt", old_text: "old\n", new_text: "new\n" };
    const terminal = { type: "terminal" as const, terminal_id: "t1", command: "ls", cwd: "/w", output: "a.txt\n", exit_code: 0 };
    const callView = { title: "Write /w/a.txt", kind: "edit", locations: [{ path: "/w/a.txt", line: 1 }], content: [diff, terminal] };
    model.patch([
      "start",
      assistant("a1", 0, [call("c1", "Write", { state: "awaiting_approval", provider_executed: true, view: callView })]),
    ]);
    view.flush();
    const card = $(root, '.aiw-tool-card[data-call-id="c1"]');
    expect($(card, ".aiw-call-view-title").textContent).toBe("Write /w/a.txt");
    expect($(card, ".aiw-call-view-locations").textContent).toBe("/w/a.txt:1");
    const lines = [...card.querySelectorAll<HTMLElement>(".aiw-diff-line")].map((l) => [l.dataset.kind, l.textContent]);
    expect(lines).toEqual([
      ["removed", "- old"],
      ["added", "+ new"],
    ]);
    expect($(card, ".aiw-terminal-command").textContent).toContain("$ ls");
    expect($(card, ".aiw-terminal-output").textContent).toBe("a.txt\n");
    expect($(card, ".aiw-call-view").hidden).toBe(false);
  });

  it("is hidden for a call without one", async () => {
    const model = new FakeModel({ collapse_tool_calls: false });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "rm")])]);
    view.flush();
    expect($(root, ".aiw-call-view").hidden).toBe(true);
  });
});

describe("an agent's call awaiting approval", () => {
  it("offers Allow once, Allow always and Decline, but no Edit: ACP has no room for changed arguments", async () => {
    const model = new FakeModel({});
    const { view, root } = await mount(model);
    const callView = { title: "Write /w/a.txt", kind: "edit", content: [{ type: "diff" as const, path: "/w/a.txt", old_text: null, new_text: "a\n" }] };
    model.patch([
      "start",
      assistant("a1", 0, [
        call("c1", "mcp__acp__Write", { state: "awaiting_approval", provider_executed: true, view: callView }),
        call("c2", "sell", { state: "awaiting_approval", provider_executed: true }),
      ]),
    ]);
    view.flush();
    const agents = $(root, '.aiw-tool-card[data-call-id="c1"]');
    expect(agents.querySelector(".aiw-approve-once")).not.toBeNull();
    expect(agents.querySelector(".aiw-approve-always")).not.toBeNull();
    expect(agents.querySelector(".aiw-decline")).not.toBeNull();
    expect(agents.querySelector(".aiw-edit-args")).toBeNull();
    expect($(root, '.aiw-tool-card[data-call-id="c2"]').querySelector(".aiw-edit-args")).not.toBeNull(); // AG-UI's can
  });
});
