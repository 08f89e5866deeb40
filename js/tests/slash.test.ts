// `/` in the input box: the query at the caret, the prompts' shaping (untrusted) and filter, the list's keys, a
// prompt's arguments as its form's schema; and in the input box: `/` asks the kernel, the list filters as one types,
// Enter/Tab choose, Escape closes, a prompt with arguments opens its form, Send sends, the kernel's refusal shows at
// the fields and nothing typed is lost (docs/protocol.md, "Prompts").

import { describe, expect, it } from "vitest";
import { type PromptItem, SlashState, filterPrompts, promptArguments, promptErrors, promptItems, promptSchema, slashQuery } from "../src/slash";
import { $, FakeModel, assertInert, mount } from "./helpers";

const HOSTILE = '<img src=x onerror="alert(1)">';

const RAW = [
  {
    name: "o_review",
    server: "offers-server",
    title: "Review code",
    description: "Asks for a review of some code.",
    arguments: [
      { name: "code", title: null, description: "The code to review", required: true },
      { name: "language", title: "Language", description: null, required: false },
    ],
  },
  { name: "hello", server: "offers-server", title: null, description: "A greeting with no arguments.", arguments: [] },
  { name: "few_shot", server: "other", title: "Translate", description: "Into French, after an example.", arguments: [{ name: "word", required: true }] },
];
const ITEMS = promptItems(RAW);

describe("the /query at the caret", () => {
  it("is the first word after a / at the start of the text, up to the caret", () => {
    expect(slashQuery("/", 1)).toBe("");
    expect(slashQuery("/rev", 4)).toBe("rev");
    expect(slashQuery("/review more", 4)).toBe("rev"); // the caret in the first word
    expect(slashQuery("/review more", 9)).toBeNull(); // past it: text
    expect(slashQuery("a /rev", 6)).toBeNull(); // not at the start
    expect(slashQuery(" /rev", 5)).toBeNull();
    expect(slashQuery("/rev", 0)).toBeNull(); // the caret before the slash
    expect(slashQuery("", 0)).toBeNull();
  });
});

describe("the prompts of a prompts answer", () => {
  it("keeps well-formed prompts and arguments, as text, names unique", () => {
    expect(ITEMS[0]).toEqual({
      name: "o_review",
      server: "offers-server",
      title: "Review code",
      description: "Asks for a review of some code.",
      arguments: [
        { name: "code", title: "", description: "The code to review", required: true },
        { name: "language", title: "Language", description: "", required: false },
      ],
    });
    const odd = promptItems([null, 3, { name: 5 }, { name: "" }, { name: "a", arguments: "x" }, { name: "a" }, { name: "b", arguments: [{ name: "x" }, { name: "x" }, {}] }]);
    expect(odd.map((item) => [item.name, item.arguments.map((a) => a.name)])).toEqual([
      ["a", []],
      ["b", ["x"]],
    ]);
    expect(promptItems("nope")).toEqual([]);
    expect(promptErrors([{ server: "gone", message: "exited" }, { server: "x" }, "y"])).toEqual([{ server: "gone", message: "exited" }]);
  });

  it("filters: names that start with the query, then names that hold it, then titles and descriptions", () => {
    const names = (query: string): string[] => filterPrompts(ITEMS, query).map((item) => item.name);
    expect(names("")).toEqual(["o_review", "hello", "few_shot"]);
    expect(names("o_")).toEqual(["o_review"]);
    expect(names("REV")).toEqual(["o_review"]); // holds it, case ignored
    expect(names("h")).toEqual(["hello", "few_shot"]); // starts, then holds
    expect(names("french")).toEqual(["few_shot"]); // its description
    expect(names("zzz")).toEqual([]);
    const many: PromptItem[] = Array.from({ length: 80 }, (_, i) => ({ name: `p${i}`, server: "s", title: "", description: "", arguments: [] }));
    expect(filterPrompts(many, "p")).toHaveLength(50);
  });

  it("a prompt's arguments are its form's schema: strings, their descriptions, the required ones", () => {
    expect(promptSchema(ITEMS[0])).toEqual({
      type: "object",
      properties: { code: { type: "string", description: "The code to review" }, language: { type: "string", title: "Language" } },
      required: ["code"],
    });
    expect(promptArguments({ code: "x = 1", language: "  ", other: 3 })).toEqual({ code: "x = 1" });
  });
});

describe("the / list's state", () => {
  it("asks once per opening, filters as the query changes, and takes only the latest answer", () => {
    const state = new SlashState();
    expect(state.key("ArrowDown")).toBeNull(); // closed: the input's keys
    const ask = state.update("/", 1)!;
    expect(ask.request).toEqual(expect.any(Number));
    expect(state.open).toBe(true);
    expect(state.loaded).toBe(false);
    expect(state.update("/_", 2)).toBeNull(); // still open: no new request
    expect(state.receive(ask.request - 1, ITEMS, [])).toBe(false); // an older answer
    expect(state.receive(ask.request, ITEMS, [{ server: "gone", message: "exited" }])).toBe(true);
    expect(state.items.map((item) => item.name)).toEqual(["o_review", "few_shot"]);
    expect(state.key("ArrowDown")).toBe("move");
    expect(state.current()?.name).toBe("few_shot");
    expect(state.key("ArrowDown")).toBe("move");
    expect(state.current()?.name).toBe("o_review"); // wraps
    expect(state.key("ArrowUp")).toBe("move");
    expect(state.update("/f", 2)).toBeNull();
    expect(state.current()?.name).toBe("few_shot"); // the selection follows its prompt through the filter
    expect(state.key("Tab")).toBe("accept");
    expect(state.key("Enter")).toBe("accept");
    state.update("/zzz", 4);
    expect(state.key("Enter")).toBeNull(); // nothing to choose: Enter sends the text
    expect(state.key("ArrowDown")).toBeNull();
    expect(state.update("/zzz more", 9)).toBeNull();
    expect(state.open).toBe(false); // past the first word
    const again = state.update("/", 1)!;
    expect(again.request).toBeGreaterThan(ask.request); // opened again: asked again (servers change)
    expect(state.items).toHaveLength(3); // the last answer meanwhile
    expect(state.loaded).toBe(false);
  });

  it("Escape closes it until the text no longer starts with /", () => {
    const state = new SlashState();
    state.receive(state.update("/", 1)!.request, ITEMS, []);
    expect(state.key("Escape")).toBe("close");
    expect(state.open).toBe(false);
    expect(state.update("/h", 2)).toBeNull();
    expect(state.open).toBe(false);
    state.update("", 0);
    expect(state.update("/", 1)).not.toBeNull();
    expect(state.open).toBe(true);
  });
});

function key(el: HTMLElement, k: string): KeyboardEvent {
  const ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
  el.dispatchEvent(ev);
  return ev;
}

function type(input: HTMLTextAreaElement, text: string, caret = text.length): void {
  input.value = text;
  input.setSelectionRange(caret, caret);
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

const sentOf = (model: FakeModel, kind: string): Record<string, unknown>[] =>
  model.sent.filter((m) => (m as { type: string }).type === kind) as Record<string, unknown>[];

describe("the input box with /", () => {
  async function connected(): Promise<{ model: FakeModel; root: HTMLElement; input: HTMLTextAreaElement }> {
    const model = new FakeModel();
    const { root } = await mount(model);
    model.custom({ type: "snapshot", live: [] });
    return { model, root, input: $<HTMLTextAreaElement>(root, ".aiw-input") };
  }

  function answer(model: FakeModel, items: unknown[] = RAW, errors: unknown[] = []): void {
    const ask = sentOf(model, "prompts").at(-1)!;
    model.custom({ type: "prompts", request: ask.request, items, errors });
  }

  const shown = (root: HTMLElement): string[] => [...root.querySelectorAll(".aiw-prompts .aiw-prompt-label")].map((e) => e.textContent ?? "");

  it("lists the prompts under /, filtered as one types; Enter on one with arguments opens its form; Send sends", async () => {
    const { model, root, input } = await connected();
    type(input, "/");
    expect(sentOf(model, "prompts")).toHaveLength(1);
    const list = $(root, ".aiw-prompts");
    expect(list.hidden).toBe(false);
    expect(list.textContent).toContain("Asking the servers for their prompts…");
    answer(model, RAW, [{ server: "gone", message: "it exited" }]);
    expect(shown(root)).toEqual(["/o_review", "/hello", "/few_shot"]);
    expect(list.textContent).toContain("gone could not list its prompts: it exited");
    expect(input.getAttribute("aria-expanded")).toBe("true");
    type(input, "/rev");
    expect(shown(root)).toEqual(["/o_review"]);
    expect(sentOf(model, "prompts")).toHaveLength(1); // filtered here, not asked again
    expect(key(input, "Enter").defaultPrevented).toBe(true);
    expect(sentOf(model, "send")).toHaveLength(0); // chosen, not sent as text
    expect(list.hidden).toBe(true);
    expect(input.value).toBe("/o_review");
    const form = $(root, ".aiw-prompt-form");
    expect(form.textContent).toContain("/o_review");
    expect(form.textContent).toContain("Review code");
    expect(form.textContent).toContain("from offers-server");
    expect(form.textContent).toContain("The code to review"); // the argument's description
    const fields = [...form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("input, textarea")];
    expect(fields).toHaveLength(2);
    expect([...form.querySelectorAll(".aiw-edit-name")].map((e) => [e.textContent, e.getAttribute("title")])).toEqual([
      ["code *", "Required"],
      ["language", null],
    ]); // the required one marked
    expect(document.activeElement).toBe(fields[0]);
    // Sent without the required argument: the form says so itself, and nothing goes.
    fields[0].value = "   ";
    $<HTMLButtonElement>(form, ".aiw-prompt-send").click();
    expect(sentOf(model, "prompt")).toHaveLength(0);
    expect(form.textContent).toContain("Required.");
    fields[0].value = "print(1)";
    fields[0].dispatchEvent(new Event("input", { bubbles: true }));
    $<HTMLButtonElement>(form, ".aiw-prompt-send").click();
    const sent = sentOf(model, "prompt").at(-1)!;
    expect(sent).toMatchObject({ type: "prompt", name: "o_review", arguments: { code: "print(1)" } });
    expect($<HTMLButtonElement>(form, ".aiw-prompt-send").disabled).toBe(true); // waiting for the kernel
    expect($<HTMLButtonElement>(form, ".aiw-prompt-send").textContent).toBe("Sending…");
    expect($<HTMLButtonElement>(root, ".aiw-send").disabled).toBe(true);
    model.custom({ type: "sent", id: sent.id });
    expect(root.querySelector(".aiw-prompt-form")).toBeNull();
    expect(input.value).toBe("");
  });

  it("a refusal shows at the argument's field, or under the form, and keeps what was typed", async () => {
    const { model, root, input } = await connected();
    type(input, "/few");
    answer(model);
    expect(key(input, "Tab").defaultPrevented).toBe(true);
    const form = $(root, ".aiw-prompt-form");
    const field = form.querySelector<HTMLInputElement | HTMLTextAreaElement>("input, textarea")!;
    field.value = "dog";
    field.dispatchEvent(new Event("input", { bubbles: true }));
    key(field, "Enter"); // Enter in a field sends
    const first = sentOf(model, "prompt").at(-1)!;
    expect(first).toMatchObject({ name: "few_shot", arguments: { word: "dog" } });
    model.custom({ type: "error", message: "The prompt /few_shot needs word.", id: first.id, fields: { word: "Required." } });
    expect(form.textContent).toContain("Required.");
    expect(root.querySelector(".aiw-banner-kernel")).toBeNull(); // said in the form, not again in a banner
    expect(field.value).toBe("dog");
    expect(input.value).toBe("/few_shot");
    $<HTMLButtonElement>(form, ".aiw-prompt-send").click();
    const second = sentOf(model, "prompt").at(-1)!;
    expect(second.id).not.toBe(first.id);
    model.custom({ type: "error", message: `The prompt /few_shot could not be rendered: ${HOSTILE}`, id: second.id });
    expect($(form, ".aiw-prompt-problem").textContent).toContain("could not be rendered");
    expect(field.value).toBe("dog");
    assertInert(root);
    // Escape closes the form; the input keeps its text.
    const escape = key(field, "Escape");
    expect(escape.defaultPrevented).toBe(true);
    expect(root.querySelector(".aiw-prompt-form")).toBeNull();
    expect(input.value).toBe("/few_shot");
  });

  it("a prompt without arguments is sent when chosen; a refusal is a banner and the text stays", async () => {
    const { model, root, input } = await connected();
    type(input, "/hel");
    answer(model);
    key(input, "Enter");
    const sent = sentOf(model, "prompt").at(-1)!;
    expect(sent).toMatchObject({ type: "prompt", name: "hello", arguments: {} });
    expect(root.querySelector(".aiw-prompt-form")).toBeNull();
    model.custom({ type: "error", message: "A reply is still running: wait for it, or press Stop.", id: sent.id });
    expect(root.querySelector(".aiw-banner-kernel")!.textContent).toContain("A reply is still running");
    expect(input.value).toBe("/hello");
    expect($<HTMLButtonElement>(root, ".aiw-send").disabled).toBe(false);
  });

  it("says when no server offers prompts; Enter then sends the text", async () => {
    const { model, root, input } = await connected();
    type(input, "/tmp");
    expect($(root, ".aiw-prompts").textContent).toContain("Asking the servers for their prompts…");
    answer(model, []);
    expect($(root, ".aiw-prompts").textContent).toContain("No MCP server of this chat offers prompts.");
    key(input, "Enter");
    expect(sentOf(model, "send").at(-1)).toMatchObject({ type: "send", text: "/tmp" });
  });

  it("Escape closes the list and keeps the text; Enter then sends it as a message; names are text", async () => {
    const { model, root, input } = await connected();
    type(input, "/x");
    answer(model, [{ name: HOSTILE, server: HOSTILE, description: HOSTILE, arguments: [] }]);
    expect(shown(root)).toEqual([`/${HOSTILE}`]);
    assertInert(root);
    type(input, "/etc/hosts");
    expect(shown(root)).toEqual([]);
    expect($(root, ".aiw-prompts").textContent).toContain("No prompt matches /etc/hosts.");
    const escape = key(input, "Escape");
    expect(escape.defaultPrevented).toBe(true);
    expect($(root, ".aiw-prompts").hidden).toBe(true);
    expect(input.value).toBe("/etc/hosts");
    key(input, "Enter");
    expect(sentOf(model, "send").at(-1)).toMatchObject({ type: "send", text: "/etc/hosts" });
    expect(sentOf(model, "prompt")).toHaveLength(0);
  });
});
