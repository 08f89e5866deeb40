// A call its agent describes (ACP): the line diff of an edit, and the card's view of title, files, diffs and
// terminal output, shown before the person decides.

import { describe, expect, it } from "vitest";
import { lineDiff } from "../src/diff";
import { CallViewSection, MAX_TERMINAL_CHARS, callHeading } from "../src/render/callview";
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
    // A file its diff shows is not listed again (without a line number to add).
    model.patch([
      "start",
      assistant("a2", 1, [call("c2", "Write", { state: "awaiting_approval", provider_executed: true, view: { ...callView, locations: [{ path: "/w/a.txt" }, { path: "/w/b.txt" }] } })]),
    ]);
    view.flush();
    expect($($(root, '.aiw-tool-card[data-call-id="c2"]'), ".aiw-call-view-locations").textContent).toBe("/w/b.txt");
    // Nor the directory its terminal says it runs in; and its arguments (the command, the directory) are not shown.
    const run = { title: "Run ls", kind: "execute", locations: [{ path: "/w" }], content: [{ ...terminal, exit_code: null }] };
    model.patch([
      "start",
      assistant("a3", 2, [call("c3", "terminal", { state: "awaiting_approval", provider_executed: true, view: run })]),
    ]);
    view.flush();
    const asking = $(root, '.aiw-tool-card[data-call-id="c3"]');
    expect(asking.querySelector(".aiw-call-view-locations")).toBeNull();
    expect($(asking, ".aiw-terminal-cwd").textContent).toBe("in /w");
    expect($(asking, ".aiw-tool-args").hidden).toBe(true);
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
    const other = $(root, '.aiw-tool-card[data-call-id="c2"]');
    expect(agents.querySelector(".aiw-decline-reason")).toBeNull(); // nowhere in the protocol to take it
    expect(other.querySelector(".aiw-decline-reason")).not.toBeNull();
    expect($(agents, ".aiw-tool-args").hidden).toBe(true); // the diff says what the arguments would
    expect($(other, ".aiw-tool-args").hidden).toBe(false);
  });
});

describe("a terminal in a call's card", () => {
  const command = "pytest -q";
  const terminal = (extra: Record<string, unknown> = {}) => ({
    type: "terminal" as const,
    terminal_id: "terminal-1",
    command,
    cwd: "/work",
    output: "",
    exit_code: null,
    signal: null,
    ...extra,
  });
  const viewOf = (item: ReturnType<typeof terminal>) => ({ title: `Run ${command}`, kind: "execute", content: [item] });
  /** jsdom lays nothing out: each line of the output is 20 px high, its box 40 px. */
  function layOut(pre: HTMLElement): void {
    Object.defineProperty(pre, "scrollHeight", { configurable: true, get: () => 20 * (pre.textContent ?? "").split("\n").length });
    Object.defineProperty(pre, "clientHeight", { configurable: true, get: () => 40 });
  }

  it("shows the command and its cwd before it runs, then its output growing in place, followed to its end", () => {
    const section = new CallViewSection();
    section.update(viewOf(terminal({ terminal_id: "" })));
    expect($(section.el, ".aiw-terminal-command").textContent).toBe("$ pytest -q");
    expect($(section.el, ".aiw-terminal-cwd").textContent).toBe("in /work");
    expect($(section.el, ".aiw-terminal-exit").textContent).toBe("not run yet");
    expect($(section.el, ".aiw-terminal-output").hidden).toBe(true);

    section.update(viewOf(terminal({ output: "a\n" })));
    const pre = $(section.el, ".aiw-terminal-output");
    layOut(pre);
    expect(pre.hidden).toBe(false);
    expect($(section.el, ".aiw-terminal-exit").textContent).toBe("running…");
    section.update(viewOf(terminal({ output: "a\nb\nc\nd\n" })));
    expect($(section.el, ".aiw-terminal-output")).toBe(pre); // the same element: updated, not drawn again
    expect(pre.textContent).toBe("a\nb\nc\nd\n");
    expect(pre.scrollTop).toBe(100);
    section.update(viewOf(terminal({ output: "a\nb\nc\nd\ne\n", exit_code: 0 })));
    expect(pre.scrollTop).toBe(120);
    expect($(section.el, ".aiw-terminal-exit").textContent).toBe("exit code 0");
    section.update(viewOf(terminal({ output: "a\n", signal: "SIGTERM" })));
    expect($(section.el, ".aiw-terminal-exit").textContent).toBe("killed by SIGTERM");
  });

  it("stays where the person scrolled up to read while the output grows", () => {
    const section = new CallViewSection();
    section.update(viewOf(terminal({ output: "1\n2\n3\n4\n5\n" })));
    const pre = $(section.el, ".aiw-terminal-output");
    layOut(pre);
    pre.scrollTop = 20;
    pre.dispatchEvent(new Event("scroll"));
    section.update(viewOf(terminal({ output: "1\n2\n3\n4\n5\n6\n7\n" })));
    expect(pre.scrollTop).toBe(20);
    pre.scrollTop = pre.scrollHeight - pre.clientHeight; // back at the end: it follows again
    pre.dispatchEvent(new Event("scroll"));
    section.update(viewOf(terminal({ output: "1\n2\n3\n4\n5\n6\n7\n8\n" })));
    expect(pre.scrollTop).toBe(180);
  });

  it("caps the output it shows, keeping the end and saying the start was left out", () => {
    const section = new CallViewSection();
    const long = "x".repeat(MAX_TERMINAL_CHARS) + "the end\n";
    section.update(viewOf(terminal({ output: long })));
    const shown = $(section.el, ".aiw-terminal-output").textContent ?? "";
    expect(shown).toHaveLength(MAX_TERMINAL_CHARS);
    expect(shown.endsWith("the end\n")).toBe(true);
    expect($(section.el, ".aiw-terminal-cut").hidden).toBe(false);
    section.update(viewOf(terminal({ output: "short\n" })));
    expect($(section.el, ".aiw-terminal-cut").hidden).toBe(true);
  });

  it("keeps a terminal's box when the rest of the view changes", () => {
    const section = new CallViewSection();
    section.update(viewOf(terminal({ output: "a\n" })));
    const box = $(section.el, ".aiw-terminal");
    section.update({ title: "Ran it", kind: "execute", content: [{ type: "text" as const, text: "note" }, terminal({ output: "a\nb\n" })] });
    expect($(section.el, ".aiw-terminal")).toBe(box);
    expect($(section.el, ".aiw-call-view-title").textContent).toBe("Ran it");
    expect($(section.el, ".aiw-terminal-output").textContent).toBe("a\nb\n");
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
    expect(shown.location.textContent).toBe("hello.py:3 +1"); // its name: the tooltip has the paths
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

  it("says the first file by its name, with a line number even when the title names the file, and how many more", () => {
    const at = (locations: { path: string; line?: number | null }[]) => callHeading({ title: "Read /w/a.py", locations });
    expect(at([{ path: "/w/a.py" }])?.location).toBeNull();
    expect(at([{ path: "/w/a.py", line: 12 }])?.location).toBe("a.py:12");
    expect(at([{ path: "/w/a.py" }, { path: "/w/b.py" }, { path: "/w/c.py" }])?.location).toBe("+2");
    expect(at([{ path: "/w/other.py" }])?.location).toBe("other.py");
    expect(at([{ path: "" }, { path: "/w/z.py" }])?.location).toBe("z.py");
    expect(at([{ path: "/w/work/" }])?.location).toBe("work"); // a directory (a command's cwd) by its own name
    expect(at([{ path: "C:\\w\\b.py" }])?.location).toBe("b.py");
  });
});
