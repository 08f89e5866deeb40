// Code arguments shown and edited as code: the Python colours, the code view (line numbers, incremental growth,
// "Show all"), the code editor's keys, and a code call's card from streaming to an edited Allow.

import { describe, expect, it } from "vitest";
import { CodeEditor } from "../src/render/codeedit";
import { COLLAPSED_LINES, CodeView } from "../src/render/codeview";
import { tokenize, tokenizeLine } from "../src/render/pycolor";
import type { OutgoingMessage, ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const kinds = (line: string) => tokenizeLine(line, null).tokens.filter((t) => t.kind !== "plain").map((t) => [t.kind, t.text]);

describe("Python colours", () => {
  it("finds keywords, builtins, strings, comments, numbers and decorators", () => {
    expect(kinds('def f(x=1.5e3): return print("a#b", x)  # done')).toEqual([
      ["keyword", "def"],
      ["number", "1.5e3"],
      ["keyword", "return"],
      ["builtin", "print"],
      ["string", '"a#b"'],
      ["comment", "# done"],
    ]);
    expect(kinds("@cache")).toEqual([["decorator", "@cache"]]);
    expect(kinds("x = 0x1F + rb'\\d' + f'{y}'")).toEqual([
      ["number", "0x1F"],
      ["string", "rb'\\d'"],
      ["string", "f'{y}'"],
    ]);
    expect(kinds("s = 'it\\'s'")).toEqual([["string", "'it\\'s'"]]);
    // Soft keywords only where a statement starts; names that contain keywords are names.
    expect(kinds("match = type_of(classes)")).toEqual([]);
    expect(kinds("match x:")).toEqual([["keyword", "match"]]);
  });

  it("carries a triple-quoted string across lines, and a one-quote string ends with its line", () => {
    const lines = tokenize('a = """one\ntwo # not a comment\nthree""" + 1\nb = "open\nc = 2');
    expect(lines[1]).toEqual([{ kind: "string", text: "two # not a comment" }]);
    expect(lines[2][0]).toEqual({ kind: "string", text: 'three"""' });
    expect(lines[2].at(-1)).toEqual({ kind: "number", text: "1" });
    expect(lines[4].map((t) => t.kind)).toContain("number");
  });

  it("gives every character back, whatever the text", () => {
    for (const text of ['x = "\\', "'''", "\t\u00e9t\u00e9 = 1 ;; ¿?", "1..2", "@", "f'''a\n'''b"]) {
      expect(tokenize(text).map((line) => line.map((t) => t.text).join("")).join("\n")).toBe(text);
    }
  });
});

describe("the code view", () => {
  it("numbers the lines, colours them with text nodes only, and reads as the code", () => {
    const view = new CodeView("python");
    view.setText('import os\nprint("<b>hi</b>")');
    expect(view.el.querySelector(".aiw-code-gutter")!.textContent).toBe("1\n2");
    const code = view.el.querySelector(".aiw-code-lines")!;
    expect(code.textContent).toBe('import os\nprint("<b>hi</b>")');
    expect(code.querySelector("b")).toBeNull(); // model text is never markup
    expect(code.querySelector(".aiw-tok-keyword")!.textContent).toBe("import");
    expect(code.querySelector(".aiw-tok-string")!.textContent).toBe('"<b>hi</b>"');
  });

  it("grows at its end without rebuilding the lines before the last", () => {
    const view = new CodeView("python");
    view.setText("x = 1\ny = '''a");
    const first = view.el.querySelector(".aiw-code-line")!;
    view.setText("x = 1\ny = '''a\nb''' + 2");
    expect(view.el.querySelector(".aiw-code-line")).toBe(first);
    const lines = view.el.querySelectorAll(".aiw-code-line");
    expect(lines).toHaveLength(3);
    expect(lines[2].querySelector(".aiw-tok-string")!.textContent).toBe("b'''");
    expect(lines[2].querySelector(".aiw-tok-number")!.textContent).toBe("2");
    view.setText("z"); // not a continuation: rebuilt
    expect(view.el.querySelector(".aiw-code-lines")!.textContent).toBe("z");
    expect(view.el.querySelector(".aiw-code-gutter")!.textContent).toBe("1");
  });

  it("collapses long code with Show all", () => {
    const view = new CodeView("python");
    view.setText(Array.from({ length: COLLAPSED_LINES + 5 }, (_, i) => `x${i} = ${i}`).join("\n"));
    const more = view.el.querySelector<HTMLButtonElement>(".aiw-code-more")!;
    expect(view.el.dataset.collapsed).toBe("true");
    expect(more.hidden).toBe(false);
    expect(more.textContent).toBe(`Show all ${COLLAPSED_LINES + 5} lines`);
    more.click();
    expect(view.el.dataset.collapsed).toBeUndefined();
    expect(more.getAttribute("aria-expanded")).toBe("true");
    view.setText("short");
    expect(more.hidden).toBe(true);
  });
});

function key(target: Element, k: string, init: KeyboardEventInit = {}): KeyboardEvent {
  const ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(ev);
  return ev;
}

describe("the code editor", () => {
  it("Tab inserts four spaces, indents selected lines; Shift+Tab dedents them", () => {
    const editor = new CodeEditor("a\nb\n  c");
    document.body.append(editor.el);
    const area = editor.area;
    area.setSelectionRange(1, 1);
    expect(key(area, "Tab").defaultPrevented).toBe(true);
    expect(area.value).toBe("a    \nb\n  c");
    area.value = "a\nb\n  c";
    area.setSelectionRange(0, area.value.length);
    key(area, "Tab");
    expect(area.value).toBe("    a\n    b\n      c");
    area.setSelectionRange(0, area.value.length);
    key(area, "Tab", { shiftKey: true });
    expect(area.value).toBe("a\nb\n  c");
    area.setSelectionRange(area.value.length, area.value.length);
    key(area, "Tab", { shiftKey: true });
    expect(area.value).toBe("a\nb\nc");
    expect(editor.el.querySelector(".aiw-code-gutter")!.textContent).toBe("1\n2\n3");
    editor.el.remove();
  });

  it("Escape leaves the editor, Escape again cancels; Ctrl/Cmd+Enter submits", () => {
    let submitted = 0;
    let cancelled = 0;
    const editor = new CodeEditor("x", { onSubmit: () => submitted++, onCancel: () => cancelled++ });
    document.body.append(editor.el);
    editor.focus();
    key(editor.area, "Enter", { ctrlKey: true });
    key(editor.area, "Enter", { metaKey: true });
    expect(submitted).toBe(2);
    key(editor.area, "Escape");
    expect(document.activeElement).toBe(editor.el);
    expect(cancelled).toBe(0);
    key(editor.el, "Escape");
    expect(cancelled).toBe(1);
    key(editor.area, "Enter");
    expect(submitted).toBe(2); // a plain Enter is a new line
    editor.el.remove();
  });
});

const TOOLS = {
  run_python: {
    title: "Run Python",
    risk: "destructive",
    requires_approval: true,
    parameters: { type: "object", properties: { code: { type: "string" }, note: { type: "string" } }, required: ["code"] },
    code_arguments: { code: "python" },
  },
};

async function codeCard(extra: Partial<ToolCallPart>) {
  const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: false });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "run_python", extra)])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

describe("a code call's card", () => {
  it("shows the code as code while it streams, the other arguments as JSON", async () => {
    const { model, view, card } = await codeCard({ parsed_arguments: { code: "import pandas as pd\n" } });
    expect($(card, ".aiw-code-lines").textContent).toBe("import pandas as pd\n");
    expect($(card, ".aiw-tool-args .aiw-json").hidden).toBe(true); // nothing but code
    model.patch(["args", "a1", "c1", [["append", ["code"], "df = pd.read_csv('x')"]]]);
    view.flush();
    expect($(card, ".aiw-code-lines").textContent).toBe("import pandas as pd\ndf = pd.read_csv('x')");
    expect($(card, ".aiw-code-gutter").textContent).toBe("1\n2");
    model.patch(["args", "a1", "c1", [["set", ["note"], "cleaning"]]]);
    view.flush();
    const json = $(card, ".aiw-tool-args .aiw-json");
    expect(json.hidden).toBe(false);
    expect(json.textContent).toContain("cleaning");
    expect(json.textContent).not.toContain("read_csv");
  });

  it("Edit code, change it, Ctrl+Enter allows with the edited code; the card then says it ran edited", async () => {
    const { model, view, card } = await codeCard({
      state: "awaiting_approval",
      approval_requested_at: 1000,
      parsed_arguments: { code: "x = 1" },
    });
    const sent = model.sent as OutgoingMessage[];
    const edit = $<HTMLButtonElement>(card, ".aiw-edit-args");
    expect(edit.textContent).toBe("Edit code");
    edit.click();
    const area = $<HTMLTextAreaElement>(card, "textarea.aiw-code-input");
    expect(area.value).toBe("x = 1");
    area.value = "x = 2";
    key(area, "Enter", { ctrlKey: true });
    expect(sent.at(-1)).toEqual({ type: "approve", tool_call_id: "c1", decision: "approved", arguments: { code: "x = 2" } });
    model.patch([
      "call",
      "a1",
      "c1",
      { state: "running", decision: "approved", edited_arguments: { code: "x = 2" }, run_started_at: 1001 },
    ]);
    view.flush();
    expect($(card, ".aiw-edited").hidden).toBe(false);
    expect($(card, ".aiw-code-arg .aiw-code-lines").textContent).toBe("x = 2");
    expect($(card, ".aiw-code-arg .aiw-section-label").textContent).toContain("edited");
    expect($(card, ".aiw-code-original").hidden).toBe(false);
    expect($(card, ".aiw-code-original .aiw-code-lines").textContent).toBe("x = 1");
    expect($(card, ".aiw-tool-edited").hidden).toBe(true); // no other argument was edited
  });

  it("Allow from the editor with the code unchanged allows it as the model sent it (not edited)", async () => {
    const { model, card } = await codeCard({
      state: "awaiting_approval",
      approval_requested_at: 1000,
      parsed_arguments: { code: "x = 1", note: "n" }, // the form gives them back in another order
    });
    $<HTMLButtonElement>(card, ".aiw-edit-args").click();
    $<HTMLButtonElement>(card, ".aiw-approve-edited").click();
    expect(model.sent.at(-1)).toEqual({ type: "approve", tool_call_id: "c1", decision: "approved" });
  });

  it("Escape twice leaves the editor and goes back to the buttons", async () => {
    const { card } = await codeCard({ state: "awaiting_approval", approval_requested_at: 1000, parsed_arguments: { code: "x" } });
    $<HTMLButtonElement>(card, ".aiw-edit-args").click();
    const area = $<HTMLTextAreaElement>(card, "textarea.aiw-code-input");
    key(area, "Escape");
    key(document.activeElement!, "Escape");
    expect(card.querySelector("textarea.aiw-code-input")).toBeNull();
    expect(document.activeElement).toBe($(card, ".aiw-edit-args"));
  });
});

describe("the code form", () => {
  it("edits the code in a code editor and the other arguments as fields; a required code left empty still goes", async () => {
    const { CodeEditForm } = await import("../src/render/codeform");
    const schema = TOOLS.run_python.parameters;
    const form = new CodeEditForm(schema, { code: "x = 1", note: "n" }, { code: "python" });
    const area = form.el.querySelector<HTMLTextAreaElement>("textarea.aiw-code-input")!;
    const note = form.el.querySelector<HTMLInputElement>('[data-field="note"]')!;
    expect(area.value).toBe("x = 1");
    expect(note.value).toBe("n");
    expect(form.el.querySelectorAll('[data-field="code"]')).toHaveLength(1); // not a second, plain field
    area.value = "x = 2";
    note.value = "m";
    expect(form.value()).toEqual({ code: "x = 2", note: "m" });
    area.value = "";
    expect(form.value()).toEqual({ code: "", note: "m" });
  });
});
