import { describe, expect, it, vi } from "vitest";

vi.mock("../src/markdown", async (importOriginal) => {
  const orig = await importOriginal<typeof import("../src/markdown")>();
  return { ...orig, markdownFragment: vi.fn(orig.markdownFragment) };
});

const { markdownFragment, renderMarkdown } = await import("../src/markdown");
const { StreamingMarkdown } = await import("../src/render/mdstream");

const DOC = [
  "# Title",
  "",
  "Some *text* with `code` and a [link](https://example.com).",
  "",
  "```python",
  "def f():",
  "",
  "    return 1  # a blank line inside the fence does not cut",
  "```",
  "",
  "| a | b |",
  "|---|---|",
  "| 1 | 2 |",
  "",
  "~~~",
  "tilde fence",
  "",
  "~~~",
  "",
  "Last paragraph.",
].join("\n");

function whole(text: string): string {
  const div = document.createElement("div");
  div.innerHTML = renderMarkdown(text);
  return div.innerHTML;
}

function stream(text: string, sizes: number[]): { md: InstanceType<typeof StreamingMarkdown>; el: HTMLElement } {
  const el = document.createElement("div");
  const md = new StreamingMarkdown(el);
  md.render("");
  let i = 0;
  let k = 0;
  while (i < text.length) {
    i = Math.min(text.length, i + sizes[k++ % sizes.length]);
    md.append(text.slice(0, i));
  }
  return { md, el };
}

describe("streaming markdown", () => {
  it.each([[[1]], [[3, 7, 2]], [[50]], [[1000]]])("matches a whole render when streamed in pieces of %j", (sizes) => {
    const { el, md } = stream(DOC, sizes);
    expect(el.innerHTML).toBe(whole(DOC));
    md.finish(DOC);
    expect(el.innerHTML).toBe(whole(DOC));
  });

  it("re-renders only the growing block: earlier blocks keep their nodes", () => {
    const el = document.createElement("div");
    const md = new StreamingMarkdown(el);
    md.render("");
    md.append("First paragraph.\n\nSecond");
    const first = el.querySelector("p")!;
    const observer = new MutationObserver(() => {});
    observer.observe(first, { subtree: true, childList: true, characterData: true, attributes: true });
    const calls = vi.mocked(markdownFragment).mock.calls;
    calls.length = 0;
    let text = "First paragraph.\n\nSecond";
    for (let i = 0; i < 50; i++) {
      text += " word";
      md.append(text);
    }
    expect(el.firstElementChild).toBe(first);
    expect(observer.takeRecords()).toEqual([]);
    expect(calls).toHaveLength(50); // one render per update, of the tail only
    expect(calls.every(([t]) => !t.includes("First"))).toBe(true);
  });

  it("renders a split list whole once finished", () => {
    const text = "1. one\n\n2. two\n\n[ref]: https://example.com\n\nsee [x][ref]";
    const { el, md } = stream(text, [4]);
    md.finish(text);
    expect(el.innerHTML).toBe(whole(text));
    expect(el.querySelectorAll("ol")).toHaveLength(1);
    expect(el.querySelector('a[href="https://example.com"]')).not.toBeNull();
  });

  it("falls back to a whole render when the text is not an extension", () => {
    const { el, md } = stream("abc\n\ndef", [2]);
    md.append("xyz");
    expect(el.innerHTML).toBe(whole("xyz"));
  });
});
