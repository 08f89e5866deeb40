import { describe, expect, it, vi } from "vitest";
import { markdownFragment, renderMarkdown } from "../src/markdown";
import { $, FakeModel, assertInert, assistant, call, mount } from "./helpers";

const PAYLOADS = [
  "<img src=x onerror=alert(1)>",
  "<script>alert(1)</script>",
  "[click](javascript:alert(1))",
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  '<svg onload=alert(1)><circle r="1"/></svg>',
  '<svg><script>alert(1)</script></svg>',
  '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
  '<iframe src="https://evil.example"></iframe>',
  '<div style="position:fixed;inset:0">cover</div>',
  '<form action="https://evil.example"><button formaction="javascript:alert(1)">b</button></form>',
  '<details open ontoggle=alert(1)>x</details>',
  '<img src="data:text/html,<script>alert(1)</script>">',
  "![img](javascript:alert(1))",
  '<a href="vbscript:msgbox(1)">v</a>',
  '<base href="https://evil.example/">',
  '<div class="aiw-approve-once">fake button</div>',
  '<p id="aiw" name="x">clobber</p>',
];

describe("markdown sanitiser", () => {
  it.each(PAYLOADS)("neutralises %s", (payload) => {
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown(`text ${payload} more`);
    assertInert(div);
    expect(div.querySelector(".aiw-approve-once")).toBeNull();
    expect(div.querySelector("[id]")).toBeNull();
  });

  it("keeps code blocks, tables, links and safe images", () => {
    const md = [
      "# Title",
      "```python\nprint('<b>hi</b>')\n```",
      "| a | b |\n|---|---|\n| 1 | 2 |",
      "[site](https://example.com) and <mailto:a@b.c>",
      "![ok](https://example.com/x.png) ![ok2](data:image/png;base64,AAAA)",
    ].join("\n\n");
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown(md);
    assertInert(div);
    expect(div.querySelector("pre code.language-python")!.textContent).toBe("print('<b>hi</b>')\n");
    expect(div.querySelectorAll("table td")).toHaveLength(2);
    const link = div.querySelector('a[href="https://example.com"]')!;
    expect(link.getAttribute("target")).toBe("_blank");
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(div.querySelector('a[href^="mailto:"]')).not.toBeNull();
    // Remote images in markdown are dropped (they would load on render and could carry data out).
    expect([...div.querySelectorAll("img[src]")].map((img) => img.getAttribute("src"))).toEqual([
      "data:image/png;base64,AAAA",
    ]);
  });
});

describe("untrusted data in the rendered widget", () => {
  it("renders nothing executable from replies, tool results, citations and attachments", async () => {
    const alert = vi.fn();
    (window as unknown as { alert: unknown }).alert = alert;
    const model = new FakeModel({
      _tools: { evil: { title: '<img src=x onerror="alert(1)">', icon: "<script>alert(1)</script>", risk: "normal" } },
    });
    const { view, root } = await mount(model);
    model.patch([
      "start",
      assistant("a1", 0, [
        { kind: "text", text: PAYLOADS.join("\n\n") },
        { kind: "reasoning", text: "<script>alert(1)</script>" },
        call("c1", "evil", {
          parsed_arguments: { "<img src=x onerror=alert(1)>": "<script>alert(1)</script>" },
          state: "completed",
          outcome: {
            status: "success",
            text: "<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>",
            citations: [
              { url: "javascript:alert(1)", title: "bad" },
              { url: "data:text/html,<script>alert(1)</script>", title: "bad2" },
              { url: "https://ok.example", title: "<b>good</b>" },
            ],
            attachments: [
              { mime_type: "text/html", data: "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", name: "page.html" },
              { mime_type: "image/png", url: "data:text/html,<script>alert(1)</script>", name: "fake" },
              { mime_type: "image/png", url: "javascript:alert(1)", name: "fake2" },
              { mime_type: "text/html", url: "javascript:alert(1)", name: "link" },
              { mime_type: "image/png", data: "iVBORw0KGgo=", name: "real.png" },
            ],
          },
        }),
        call("c2", "evil", {
          state: "failed",
          outcome: {
            status: "failure",
            message: "<img src=x onerror=alert(1)>",
            error: { type: "<script>", message: "<img src=x onerror=alert(1)>", traceback: "<script>alert(1)</script>" },
          },
        }),
      ]),
    ]);
    view.flush();
    const card = $(root, '.aiw-tool-card[data-call-id="c1"]');
    // A collapsed card builds its body when opened: open both, then nothing in them may be live.
    for (const id of ["c1", "c2"]) $<HTMLButtonElement>(root, `.aiw-tool-card[data-call-id="${id}"] .aiw-tool-toggle`).click();
    assertInert(root);
    expect(alert).not.toHaveBeenCalled();
    expect($(card, ".aiw-tool-title").textContent).toBe('<img src=x onerror="alert(1)">');
    const links = [...card.querySelectorAll(".aiw-citations a")].map((a) => a.getAttribute("href"));
    expect(links).toEqual(["https://ok.example"]);
    const imgs = [...card.querySelectorAll(".aiw-attachments img")].map((i) => i.getAttribute("src"));
    expect(imgs).toEqual(["data:image/png;base64,iVBORw0KGgo="]);
    expect(card.querySelectorAll(".aiw-attachments a")).toHaveLength(0);
    expect($(root, '.aiw-tool-card[data-call-id="c2"] .aiw-traceback pre').textContent).toBe("<script>alert(1)</script>");
  });
});

describe("markdownFragment in an inert template", () => {
  it("keeps text after a stray closing tag and runs nothing", () => {
    const el = document.createElement("div");
    el.append(markdownFragment('</div></template><img src=x onerror="globalThis.__pwned=1">after <b>bold</b>'));
    expect(el.textContent).toContain("after bold");
    expect(el.querySelector("img")?.getAttribute("onerror") ?? null).toBeNull();
    expect(el.querySelector("img")?.hasAttribute("src") ?? false).toBe(false);
    expect((globalThis as { __pwned?: number }).__pwned).toBeUndefined();
    expect(el.querySelector("b")?.ownerDocument).toBe(document);
  });
});
