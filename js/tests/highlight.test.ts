// Syntax colour in a reply's code blocks: highlight.js tokens rebuilt as text and class-only spans inside sanitised
// markdown, the Copy button kept, nothing a model writes able to run, and only complete blocks coloured while the
// reply streams.

import { afterEach, describe, expect, it, vi } from "vitest";
import { markdownFragment } from "../src/markdown";
import { MAX_HIGHLIGHT_CHARS, highlightCode, highlightCodeBlocks, highlightLanguage } from "../src/render/highlight";
import { $, FakeModel, assistant, mount } from "./helpers";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function rendered(markdown: string): HTMLElement {
  const div = document.createElement("div");
  div.append(markdownFragment(markdown));
  highlightCodeBlocks(div);
  return div;
}

/** Every element under `root` is a span whose classes are all highlight tokens. */
function onlyTokenSpans(root: Element): void {
  for (const el of root.querySelectorAll("*")) {
    expect(el.nodeName).toBe("SPAN");
    expect([...el.attributes].map((a) => a.name)).toEqual(["class"]);
    for (const c of el.classList) expect(c).toMatch(/^hljs-/);
  }
}

describe("code block colour", () => {
  it.each([
    ["python", "def f(x):\n    return x + 1  # one more\n", ["hljs-keyword", "hljs-comment", "hljs-number"]],
    ["py", "import os\n", ["hljs-keyword"]],
    ["javascript", "const a = 'x';\n", ["hljs-keyword", "hljs-string"]],
    ["ts", "let n: number = 2;\n", ["hljs-keyword", "hljs-number"]],
    ["json", '{"a": [1, true, null]}\n', ["hljs-attr", "hljs-number", "hljs-literal"]],
    ["bash", "echo \"$HOME\" # home\n", ["hljs-built_in", "hljs-string", "hljs-comment"]],
    ["sh", "export A=1\n", ["hljs-built_in"]],
    ["sql", "SELECT name FROM t WHERE id = 3;\n", ["hljs-keyword", "hljs-number"]],
    ["yaml", "key: value\nlist:\n  - 1\n", ["hljs-attr", "hljs-number"]],
    ["yml", "a: b\n", ["hljs-attr"]],
  ])("colours %s and keeps the code's text exactly", (lang, code, tokens) => {
    const div = rendered("```" + lang + "\n" + code + "```");
    const el = $(div, "pre > code");
    expect(el.classList.contains("aiw-hl")).toBe(true);
    expect(el.textContent).toBe(code);
    for (const token of tokens) expect(el.querySelector(`.${token}`), token).not.toBeNull();
    onlyTokenSpans(el);
  });

  it("names the registered language of an alias, and nothing for others", () => {
    expect(highlightLanguage("PY")).toBe("python");
    expect(highlightLanguage("js")).toBe("javascript");
    expect(highlightLanguage("yml")).toBe("yaml");
    expect(highlightLanguage("cobol")).toBeNull();
  });

  it("leaves a block without a language, in an unknown one, an inline code span, or a huge block as plain text", () => {
    const div = rendered(
      "```\nprint(1)\n```\n\n```cobol\nDISPLAY 'X'.\n```\n\nsee `import os` here\n\n```python\n" +
        "x = 1\n".repeat(MAX_HIGHLIGHT_CHARS / 6 + 1) +
        "```",
    );
    for (const code of div.querySelectorAll("code")) {
      expect(code.classList.contains("aiw-hl")).toBe(false);
      expect(code.children.length).toBe(0);
    }
  });

  it("keeps markup a model writes in a code block as text: nothing in it is an element or runs", () => {
    const evil = '<img src=x onerror="window.__hit=1"><script>window.__hit=2</script></span><b>x</b>';
    for (const lang of ["python", "javascript", "json", "bash", "sql", "yaml"]) {
      const div = rendered("```" + lang + "\n" + evil + "\n```");
      const code = $(div, "pre > code");
      expect(code.textContent).toBe(evil + "\n");
      expect(div.querySelector("img, script, b")).toBeNull();
      onlyTokenSpans(code);
    }
    expect((window as unknown as { __hit?: number }).__hit).toBeUndefined();
  });

  it("does not colour a code element whose class was not a language (the sanitiser keeps only language-*)", () => {
    const div = document.createElement("div");
    div.append(markdownFragment('<pre><code class="hljs language-python evil">import os</code></pre>'));
    const code = $(div, "code");
    expect(code.getAttribute("class")).toBe("language-python");
    expect(highlightCode(code)).toBe(true);
    expect(code.textContent).toBe("import os");
  });

  it("colours a reply's code block once it is complete, keeping its Copy button and the code it copies", async () => {
    const writeText = vi.fn(async () => {});
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "" }])]);
    view.flush();
    // The growing block is not coloured (it is re-rendered on each update)...
    model.patch(["text", "a1", 0, "Try:\n\n```python\ndef f():\n"]);
    view.flush();
    const message = $(root, '.aiw-message[data-id="a1"]');
    expect(message.querySelector(".aiw-hl")).toBeNull();
    // ...a complete one is, once, and keeps its spans while later text streams in.
    model.patch(["text", "a1", 0, "    return 1\n```\n\nThen "]);
    view.flush();
    const code = $(message, ".aiw-code-block pre > code.aiw-hl");
    const keyword = $(code, ".hljs-keyword");
    model.patch(["text", "a1", 0, "more text"]);
    view.flush();
    expect($(message, ".hljs-keyword")).toBe(keyword);
    model.patch(["msg", "a1", { status: "completed", finish_reason: "stop" }]);
    view.flush();
    const final = $(message, ".aiw-code-block pre > code.aiw-hl");
    expect(final.textContent).toBe("def f():\n    return 1\n");
    $<HTMLButtonElement>(message, ".aiw-code-block .aiw-copy-code").click();
    await vi.waitFor(() => expect(writeText).toHaveBeenLastCalledWith("def f():\n    return 1\n"));
  });
});

const css = import.meta.glob<string>("../src/styles/highlight.css", { eager: true, query: "?raw", import: "default" })[
  "../src/styles/highlight.css"
];

describe("code block colour's style", () => {
  it("takes every colour from the notebook editor's theme variables, so light and dark themes both read", () => {
    const colors = [...css.matchAll(/(?:^|[\s;{])color\s*:\s*([^;]+);/g)].map((m) => m[1]);
    expect(colors.length).toBeGreaterThan(15);
    for (const value of colors) expect(value).toMatch(/^var\(--jp-mirror-editor-[a-z0-9-]+-color,/);
    expect(css).not.toMatch(/background/);
  });
});
