// `@name` in the input box: the @token at the caret, the completion state machine, the input's keys and chips,
// and a sent message's attachments shown as chips (docs/protocol.md, "Attachments by name").

import { describe, expect, it } from "vitest";
import { CompletionState, completionItems, insertMention, mentionAt, mentionEndedAt } from "../src/mention";
import { normalizeMessage, normalizePart } from "../src/normalize";
import { attachmentTitle, safeThumbnail } from "../src/render/attachments";
import type { Message } from "../src/types";
import { $, FakeModel, mount, settle } from "./helpers";

const PNG = "data:image/png;base64,iVBORw0KGgo=";
const HOSTILE = '<img src=x onerror="alert(1)">';

function key(el: HTMLElement, k: string, init: KeyboardEventInit = {}): KeyboardEvent {
  const ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init });
  el.dispatchEvent(ev);
  return ev;
}

/** Types `text` as if at the caret's end: value, caret, then the input event. */
function type(input: HTMLTextAreaElement, text: string, caret = text.length): void {
  input.value = text;
  input.setSelectionRange(caret, caret);
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

const sentOf = (model: FakeModel, kind: string): Record<string, unknown>[] =>
  model.sent.filter((m) => (m as { type: string }).type === kind) as Record<string, unknown>[];

describe("the @token at the caret", () => {
  it("is an @ at the start or after whitespace, then word characters", () => {
    expect(mentionAt("@df", 3)).toEqual({ start: 0, end: 3, prefix: "df" });
    expect(mentionAt("look at @d", 10)).toEqual({ start: 8, end: 10, prefix: "d" });
    expect(mentionAt("look at @", 9)).toEqual({ start: 8, end: 9, prefix: "" });
    expect(mentionAt("see @dfx and", 6)).toEqual({ start: 4, end: 8, prefix: "d" }); // caret inside the word
    expect(mentionAt("line\n@été", 9)).toEqual({ start: 5, end: 9, prefix: "été" });
    expect(mentionAt("mail a@b.com", 8)).toBeNull(); // an e-mail address
    expect(mentionAt("@df x", 5)).toBeNull(); // past the word
    expect(mentionAt("no at sign", 5)).toBeNull();
    expect(mentionAt("@@d", 3)).toBeNull();
    expect(mentionAt("@d", 9)).toBeNull();
  });

  it("a whole @name ended by a space attaches it", () => {
    expect(mentionEndedAt("use @df ", 8)).toBe("df");
    expect(mentionEndedAt("use @df\n", 8)).toBe("df");
    expect(mentionEndedAt("use @ ", 6)).toBeNull();
    expect(mentionEndedAt("use @1x ", 8)).toBeNull(); // not a name
    expect(mentionEndedAt("a@df ", 5)).toBeNull();
    expect(mentionEndedAt("use @df", 7)).toBeNull();
  });

  it("accepting replaces the token with @name and one space", () => {
    expect(insertMention("look @d", { start: 5, end: 7, prefix: "d" }, "df")).toEqual({ text: "look @df ", caret: 9 });
    expect(insertMention("@d and", { start: 0, end: 2, prefix: "d" }, "df")).toEqual({ text: "@df and", caret: 4 });
    expect(insertMention("@dx!", { start: 0, end: 3, prefix: "d" }, "data")).toEqual({ text: "@data !", caret: 6 });
  });
});

describe("the completion state machine", () => {
  const items = completionItems([
    { name: "df", kind: "DataFrame 3×1", attachable: true },
    { name: "data", kind: "list 2 items", attachable: true },
    { name: "dog", kind: "object", attachable: false },
  ]);

  it("asks once per prefix and shows only the latest answer", () => {
    const state = new CompletionState();
    const first = state.update("@d", 2)!;
    expect(first.prefix).toBe("d");
    expect(state.update("@d", 2)).toBeNull(); // the same token: no new request
    const second = state.update("@do", 3)!;
    expect(second.request).toBe(first.request + 1);
    expect(state.receive(first.request, "d", items)).toBe(false); // a slow answer to the earlier prefix
    expect(state.open).toBe(false);
    expect(state.receive(second.request, "do", items.slice(2))).toBe(true);
    expect(state.open).toBe(true);
    expect(state.current()?.name).toBe("dog");
    expect(state.update("@do ", 4)).toBeNull(); // the caret left the token: closed
    expect(state.open).toBe(false);
  });

  it("ArrowUp/Down move round, Enter and Tab accept, Escape closes until the caret leaves the token", () => {
    const state = new CompletionState();
    const ask = state.update("x @d", 4)!;
    state.receive(ask.request, "d", items);
    expect(state.key("ArrowDown")).toBe("move");
    expect(state.current()?.name).toBe("data");
    expect(state.key("ArrowUp")).toBe("move");
    expect(state.key("ArrowUp")).toBe("move");
    expect(state.current()?.name).toBe("dog");
    expect(state.key("Enter")).toBe("accept");
    expect(state.key("Tab")).toBe("accept");
    expect(state.key("a")).toBeNull();
    expect(state.key("Escape")).toBe("close");
    expect(state.open).toBe(false);
    expect(state.key("Enter")).toBeNull(); // closed: Enter is the input's again
    expect(state.update("x @da", 5)).toBeNull(); // dismissed for this token
    expect(state.update("x @da ", 6)).toBeNull();
    expect(state.update("x @da @", 7)).not.toBeNull(); // a new token asks again
  });

  it("takes only well-formed items from the kernel", () => {
    expect(completionItems("nope")).toEqual([]);
    const shaped = completionItems([{ name: "ok" }, { name: "not a name" }, { name: 3 }, null, { name: "x", kind: 5 }]);
    expect(shaped).toEqual([
      { name: "ok", kind: "", attachable: true },
      { name: "x", kind: "", attachable: true },
    ]);
  });
});

describe("file parts and attachment text parts", () => {
  it("normalizePart keeps file parts (they used to be dropped)", () => {
    const file = { kind: "file", media_type: "image/png", name: "fig.png", size: 2048, url: null };
    expect(normalizePart(file)).toBe(file);
    expect(normalizePart({ kind: "file", name: "x" })).toEqual({ kind: "file", name: "x", media_type: "application/octet-stream" });
    const message = normalizeMessage({ id: "u", index: 0, role: "user", status: "completed", parts: [{ kind: "text", text: "hi" }, file] });
    expect(message?.parts).toHaveLength(2);
  });

  it("only a raster data: URL is a thumbnail", () => {
    expect(safeThumbnail(PNG)).toBe(PNG);
    expect(safeThumbnail("data:image/jpeg;base64,/9j/4A==")).not.toBeNull();
    expect(safeThumbnail("data:image/svg+xml;base64,PHN2Zz4=")).toBeNull();
    expect(safeThumbnail("https://evil.example/x.png")).toBeNull();
    expect(safeThumbnail('data:image/png;base64,AAAA" onerror="alert(1)')).toBeNull();
    expect(safeThumbnail("javascript:alert(1)")).toBeNull();
    expect(safeThumbnail(7)).toBeNull();
  });

  it("reads an attachment's header", () => {
    expect(attachmentTitle("Attached pandas DataFrame `df`:\n3 rows")).toEqual({ kind: "pandas DataFrame", name: "df" });
    expect(attachmentTitle("Attached Text:\nhello")).toEqual({ kind: "Text", name: "" });
    expect(attachmentTitle("just text")).toBeNull();
  });

  it("a sent message shows its files and text views as chips, hostile names as text", async () => {
    const model = new FakeModel();
    const sent: Message = {
      id: "u1",
      index: 0,
      role: "user",
      status: "completed",
      parts: [
        { kind: "text", text: "compare @df and @fig" },
        { kind: "text", text: `Attached pandas DataFrame \`${HOSTILE}\`:\n| a |\n|---|\n| <script>x</script> |`, attachment: true },
        { kind: "file", media_type: "image/png", name: `${HOSTILE}.png`, size: 20480, url: null },
        { kind: "file", media_type: "application/pdf", name: "report.pdf", size: 1_500_000, url: null },
        { kind: "file", media_type: "image/svg+xml", name: "x.svg", size: 10, url: null },
      ],
      thumbnails: { "2": PNG, "4": "data:image/svg+xml;base64,PHN2Zz4=", "3": `${PNG}" onerror="alert(1)` },
    };
    model.attrs._history.push(sent);
    const { root } = await mount(model);
    const message = $(root, '.aiw-message[data-role="user"]');
    expect($(message, ".aiw-plain").textContent).toBe("compare @df and @fig");
    const text = $<HTMLDetailsElement>(message, "details.aiw-attachment");
    expect(text.open).toBe(false); // folded: no wall of text
    expect($(text, ".aiw-chip-name").textContent).toBe(HOSTILE);
    expect($(text, ".aiw-chip-kind").textContent).toBe("pandas DataFrame");
    expect($(text, ".aiw-attachment-body").textContent).toContain("<script>x</script>");
    const files = message.querySelectorAll(".aiw-chip-file");
    expect(files).toHaveLength(3);
    expect(files[0].querySelector(".aiw-chip-name")!.textContent).toBe(`${HOSTILE}.png`);
    expect(files[0].querySelector("img")!.getAttribute("src")).toBe(PNG);
    expect(files[1].textContent).toContain("PDF"); // the input chip's word; the media type is in its title
    expect(files[1].getAttribute("title")).toContain("application/pdf");
    expect(files[1].textContent).toContain("1.5 MB");
    expect(files[1].querySelector("img")).toBeNull(); // a thumbnail that is not a clean data: URL is dropped
    expect(files[2].querySelector("img")).toBeNull(); // not raster: no picture
    expect(message.querySelectorAll("script, img[onerror]")).toHaveLength(0);
    expect(root.querySelectorAll("img")).toHaveLength(1);
  });
});

describe("the input box with @name", () => {
  async function connected(): Promise<{ model: FakeModel; root: HTMLElement; input: HTMLTextAreaElement }> {
    const model = new FakeModel();
    const { root } = await mount(model);
    model.custom({ type: "snapshot", live: [] });
    return { model, root, input: $<HTMLTextAreaElement>(root, ".aiw-input") };
  }

  function answerCompletion(model: FakeModel, items: unknown[]): void {
    const ask = sentOf(model, "complete").at(-1)!;
    model.custom({ type: "completions", request: ask.request, prefix: ask.prefix, items });
  }

  const ITEMS = [
    { name: "df", kind: "DataFrame 1,000×4", attachable: true },
    { name: "data", kind: "list 2 items", attachable: true },
  ];

  it("completes, accepts with Tab, shows the chip, and sends the names with the text", async () => {
    const { model, root, input } = await connected();
    type(input, "sum @d");
    expect(sentOf(model, "complete").at(-1)).toMatchObject({ type: "complete", prefix: "d" });
    answerCompletion(model, ITEMS);
    const list = $(root, ".aiw-mentions");
    expect(list.hidden).toBe(false);
    expect([...list.querySelectorAll(".aiw-mention-name")].map((e) => e.textContent)).toEqual(["@df", "@data"]);
    expect(input.getAttribute("aria-expanded")).toBe("true");
    expect(key(input, "ArrowDown").defaultPrevented).toBe(true);
    expect(list.querySelector('[aria-selected="true"]')!.textContent).toContain("@data");
    key(input, "ArrowUp");
    expect(key(input, "Tab").defaultPrevented).toBe(true);
    expect(input.value).toBe("sum @df ");
    expect(list.hidden).toBe(true);
    const describeMsg = sentOf(model, "describe").at(-1)!;
    expect(describeMsg).toMatchObject({ name: "df" });
    const chip = $(root, ".aiw-chips .aiw-chip");
    expect(chip.textContent).toContain("@df");
    model.custom({ type: "attachment", request: describeMsg.request, name: "df", found: true, error: null, kind: "DataFrame 1,000×4", size: 2100, thumbnail: null });
    expect(chip.textContent).toContain("DataFrame 1,000×4");
    expect(chip.textContent).toContain("2.1 KB");
    // Enter with no list open sends; the text and chip stay until the kernel takes the message.
    type(input, "sum @df please");
    expect(root.querySelector<HTMLElement>(".aiw-mentions")!.hidden).toBe(true);
    expect(key(input, "Enter").defaultPrevented).toBe(true);
    const send = sentOf(model, "send").at(-1)!;
    expect(send).toMatchObject({ type: "send", text: "sum @df please", attach: ["df"] });
    expect(input.value).toBe("sum @df please");
    expect($<HTMLButtonElement>(root, ".aiw-send").disabled).toBe(true); // no second send meanwhile
    model.custom({ type: "sent", id: send.id });
    expect(input.value).toBe("");
    expect(root.querySelectorAll(".aiw-chips .aiw-chip")).toHaveLength(0);
  });

  it("a refused send keeps the text and the chips; Escape closes the list and keeps the text", async () => {
    const { model, root, input } = await connected();
    type(input, "@fig ");
    expect(sentOf(model, "describe").at(-1)).toMatchObject({ name: "fig" }); // a whole @name and a space
    expect(root.querySelectorAll(".aiw-chips .aiw-chip")).toHaveLength(1);
    type(input, "@fig and @d");
    answerCompletion(model, ITEMS);
    const escape = key(input, "Escape");
    expect(escape.defaultPrevented).toBe(true);
    expect(root.querySelector<HTMLElement>(".aiw-mentions")!.hidden).toBe(true);
    expect(input.value).toBe("@fig and @d");
    key(input, "Enter"); // the list is closed: Enter sends
    const send = sentOf(model, "send").at(-1)!;
    expect(send.attach).toEqual(["fig"]);
    model.custom({ type: "error", message: "cannot attach @fig: the provider takes no images", id: send.id });
    expect(root.querySelector(".aiw-banner-kernel")!.textContent).toContain("provider takes no images");
    expect(input.value).toBe("@fig and @d");
    expect(root.querySelectorAll(".aiw-chips .aiw-chip")).toHaveLength(1);
    expect($<HTMLButtonElement>(root, ".aiw-send").disabled).toBe(false); // may be sent again
  });

  it("a chip's × removes it (reachable by keyboard); an unknown name leaves no chip", async () => {
    const { model, root, input } = await connected();
    type(input, "@df ");
    type(input, "@df @ghost ");
    const ghost = sentOf(model, "describe").at(-1)!;
    model.custom({ type: "attachment", request: ghost.request, name: "ghost", found: false, error: "no variable 'ghost'" });
    expect([...root.querySelectorAll(".aiw-chips .aiw-chip-name")].map((e) => e.textContent)).toEqual(["@df"]);
    const remove = $<HTMLButtonElement>(root, ".aiw-chip-remove");
    expect(remove.tagName).toBe("BUTTON"); // focusable, Enter/Space click it
    expect(remove.getAttribute("aria-label")).toBe("Remove attachment df");
    remove.click();
    expect(root.querySelectorAll(".aiw-chips .aiw-chip")).toHaveLength(0);
    expect($(root, ".aiw-chips").hidden).toBe(true);
    key(input, "Enter");
    expect(sentOf(model, "send").at(-1)).toEqual({ type: "send", text: "@df @ghost ", id: expect.any(String) }); // no chips: a plain send
    expect(input.value).toBe("");
  });

  it("hostile names and kinds from the kernel are text; only a raster thumbnail shows", async () => {
    const { model, root, input } = await connected();
    type(input, "@d");
    answerCompletion(model, [{ name: "d", kind: HOSTILE, attachable: true }, { name: HOSTILE, kind: "x" }]);
    expect(root.querySelectorAll(".aiw-mention")).toHaveLength(1); // not a name: left out
    expect($(root, ".aiw-mention-kind").textContent).toBe(HOSTILE);
    key(input, "Enter");
    const ask = sentOf(model, "describe").at(-1)!;
    model.custom({ type: "attachment", request: ask.request, name: "d", found: true, error: null, kind: HOSTILE, size: "<b>1</b>", thumbnail: "data:image/svg+xml;base64,PHN2Zz4=" });
    const chip = $(root, ".aiw-chips .aiw-chip");
    expect($(chip, ".aiw-chip-kind").textContent).toBe(HOSTILE);
    expect(chip.querySelector("img, b")).toBeNull();
    model.custom({ type: "attachment", request: ask.request, name: "d", found: true, error: null, kind: "Figure", size: 1000, thumbnail: PNG });
    expect(chip.querySelector("img")!.getAttribute("src")).toBe(PNG);
    await settle();
  });

  it("Shift+Enter is still a new line, and Enter without chips clears at once", async () => {
    const { model, input } = await connected();
    type(input, "hello");
    expect(key(input, "Enter", { shiftKey: true }).defaultPrevented).toBe(false);
    key(input, "Enter");
    expect(sentOf(model, "send").at(-1)).toEqual({ type: "send", text: "hello", id: expect.any(String) });
    expect(input.value).toBe("");
  });
});
