import { describe, expect, it } from "vitest";
import { formatSize, summarizeArgs } from "../src/format";
import { JsonView, looksLikeCode } from "../src/render/json";
import { $, FakeModel, assistant, call, mount } from "./helpers";

describe("watching arguments stream", () => {
  it("summarises strings decoded, never as JSON escapes", () => {
    const args = { content: '"""Fibonacci.\n\n    Returns the n-th number.', n: 3 };
    const summary = summarizeArgs(args);
    expect(summary).not.toContain("\\");
    expect(summary).toContain('“"""Fibonacci. ⏎  ⏎ ');
  });

  it("follows the tail of a long string while the call streams, with its size", () => {
    const long = "x".repeat(500) + "THE NEWEST WORDS";
    const summary = summarizeArgs({ path: "a.py", content: long }, 80, true);
    expect(summary.endsWith(`THE NEWEST WORDS” (${formatSize(long.length)})`)).toBe(true);
    expect(summary.length).toBeLessThanOrEqual(80);
    expect(summarizeArgs({ content: long }, 80, false)).not.toContain("NEWEST");
  });

  it("tells code from prose", () => {
    expect(looksLikeCode("content", "def fib(n):\n    return n")).toBe(true);
    expect(looksLikeCode("code", "x = 1\n  y = 2")).toBe(true);
    expect(looksLikeCode("notes", "Dear Ann,\nsee you on Monday.")).toBe(false);
    expect(looksLikeCode("content", "one line only")).toBe(false);
  });

  it("shows a long string's live size and marks code as a code block as it grows", () => {
    const json = new JsonView({});
    json.setLive(true);
    json.apply([["set", ["content"], "import os\n"]]);
    for (let i = 0; i < 40; i++) json.apply([["append", ["content"], `def f${i}():\n    return ${i}\n`]]);
    const str = $(json.el, ".aiw-json-str");
    expect(json.el.classList.contains("aiw-json-live")).toBe(true);
    expect(str.classList.contains("aiw-json-clip")).toBe(true);
    expect(str.classList.contains("aiw-json-code")).toBe(true);
    const size = $(json.el, ".aiw-json-size").textContent!;
    expect(size).toBe(formatSize((str.firstChild as Text).data.length));
    json.setLive(false);
    expect(json.el.classList.contains("aiw-json-live")).toBe(false);
  });

  it("the card's collapsed summary moves while a long argument streams", async () => {
    const model = new FakeModel({ collapse_tool_calls: true });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "write_file")])]);
    view.flush();
    const card = $(root, '[data-call-id="c1"]');
    const summary = $(card, ".aiw-tool-summary");
    model.patch(["args", "a1", "c1", [["set", ["content"], "a".repeat(200)]]]);
    view.flush();
    const first = summary.textContent;
    model.patch(["args", "a1", "c1", [["append", ["content"], "b".repeat(30)]]]);
    view.flush();
    expect(summary.textContent).not.toBe(first);
    expect(summary.textContent).toContain("bbbb");
    expect(summary.textContent).toContain("(230 B)");
  });
});
