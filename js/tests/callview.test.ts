// A call its agent describes (ACP): the line diff of an edit, and the card's view of title, files, diffs and
// terminal output, shown before the person decides.

import { describe, expect, it } from "vitest";
import { lineDiff } from "../src/diff";
import { callHeading } from "../src/render/callview";
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

describe("an agent's call in its card's header", () => {
  const header = (card: HTMLElement) => ({
    icon: $(card, ".aiw-tool-icon"),
    title: $(card, ".aiw-tool-title"),
    kind: $(card, ".aiw-call-kind"),
    location: $(card, ".aiw-tool-location"),
  });

  it("shows the agent's title, its kind and its first file; the tool's name is the title's tooltip", async () => {
    const model = new FakeModel({ collapse_tool_calls: true });
    const { view, root } = await mount(model);
    const callView = { title: "Tidy hello.py", kind: "edit", locations: [{ path: "/w/hello.py", line: 3 }, { path: "/w/b.py" }] };
    model.patch(["start", assistant("a1", 0, [call("c1", "Edit", { state: "running", provider_executed: true, view: callView })])]);
    view.flush();
    const shown = header($(root, '.aiw-tool-card[data-call-id="c1"]'));
    expect(shown.title.textContent).toBe("Tidy hello.py");
    expect(shown.title.title).toBe("Tool: Edit");
    expect(shown.icon.textContent).toBe("✏️");
    expect(shown.icon.title).toBe("edit");
    expect(shown.kind.hidden).toBe(false);
    expect(shown.kind.textContent).toBe("edit");
    expect(shown.kind.dataset.kind).toBe("edit");
    expect(shown.location.hidden).toBe(false);
    expect(shown.location.textContent).toBe("/w/hello.py:3 +1");
    expect(shown.location.title).toBe("/w/hello.py:3\n/w/b.py");
  });

  it("keeps the tool's name until the agent gives a title, then takes it in place", async () => {
    const model = new FakeModel({ collapse_tool_calls: true });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "write_text_file", { state: "running", provider_executed: true })])]);
    view.flush();
    const card = $(root, '.aiw-tool-card[data-call-id="c1"]');
    let shown = header(card);
    expect(shown.title.textContent).toBe("write_text_file");
    expect(shown.title.hasAttribute("title")).toBe(false);
    expect(shown.icon.textContent).toBe("🔧");
    expect(shown.kind.hidden).toBe(true);
    expect(shown.location.hidden).toBe(true);

    const callView = { title: "Write /tmp/x/a.txt", kind: "edit", locations: [{ path: "/tmp/x/a.txt" }] };
    const revised = call("c1", "write_text_file", { state: "awaiting_approval", provider_executed: true, view: callView });
    model.patch(["part", "a1", 0, revised]);
    view.flush();
    expect($(root, '.aiw-tool-card[data-call-id="c1"]')).toBe(card);
    shown = header(card);
    expect(shown.title.textContent).toBe("Write /tmp/x/a.txt");
    expect(shown.title.title).toBe("Tool: write_text_file");
    expect(shown.kind.textContent).toBe("edit");
    expect(shown.location.hidden).toBe(true); // the title names the file already
    expect(shown.location.title).toBe("/tmp/x/a.txt");
  });
});

describe("callHeading", () => {
  it("is null without a title, and names a kind ACP does not know by its label alone", () => {
    expect(callHeading(null)).toBeNull();
    expect(callHeading({ title: "  ", kind: "edit" })).toBeNull();
    expect(callHeading({ title: "Think", kind: "pondering" })).toEqual({
      title: "Think",
      kind: "pondering",
      icon: null,
      location: null,
      locations: null,
    });
  });

  it("says the first file, with a line number even when the title names the file, and how many more", () => {
    const at = (locations: { path: string; line?: number | null }[]) => callHeading({ title: "Read /w/a.py", locations });
    expect(at([{ path: "/w/a.py" }])?.location).toBeNull();
    expect(at([{ path: "/w/a.py", line: 12 }])?.location).toBe("/w/a.py:12");
    expect(at([{ path: "/w/a.py" }, { path: "/w/b.py" }, { path: "/w/c.py" }])?.location).toBe("+2");
    expect(at([{ path: "/w/other.py" }])?.location).toBe("/w/other.py");
    expect(at([{ path: "" }, { path: "/w/z.py" }])?.location).toBe("/w/z.py");
  });
});
