// The chat's keyboard order (render/keys.ts) and the queued bubble (render/pending.ts), on a mounted view.

import { describe, expect, it } from "vitest";
import { $, FakeModel, assistant, call, mount, settle, user } from "./helpers";

function key(el: Element, init: KeyboardEventInit): KeyboardEvent {
  const ev = new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init });
  el.dispatchEvent(ev);
  return ev;
}

function type(input: HTMLTextAreaElement, text: string): void {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

/** The elements of `root` in the tab order (tabindex 0 or a native tab stop not taken out with -1), shown. */
function tabStops(root: Element): Element[] {
  const all = root.querySelectorAll<HTMLElement>("button, a[href], input, select, textarea, summary, [tabindex]");
  return [...all].filter((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && !el.closest("[hidden]"));
}

async function conversation(extra: Partial<ConstructorParameters<typeof FakeModel>[0]> = {}) {
  const model = new FakeModel({ suggestions: ["One", "Two", "Three"], ...extra });
  const parts = [
    { kind: "text" as const, text: "Let me check." },
    call("c1", "weather", { state: "completed", outcome: { status: "success", value: 1, text: "1" } }),
    call("c2", "weather", { state: "completed", outcome: { status: "success", value: 2, text: "2" } }),
  ];
  model.finish(user("u1", 0, "hi"), { notify: false });
  model.finish(assistant("a1", 1, parts, { status: "completed" }), { notify: false });
  const mounted = await mount(model);
  model.custom({ type: "snapshot", live: [] }); // a kernel answered
  mounted.view.flush();
  // The earlier messages are built when idle (render/backfill.ts): until then the arrow keys skip them.
  for (let i = 0; i < 100 && mounted.root.querySelector(".aiw-unbuilt"); i++) await new Promise((r) => setTimeout(r, 20));
  return { model, ...mounted };
}

/** Two calls of one reply waiting for approval ("Delete a?", then "Delete b?"). */
function twoWaitingCalls(model: FakeModel, view: { flush(): void }): void {
  model.patch([
    "start",
    assistant("a2", 2, [
      call("c8", "delete", { state: "awaiting_approval", approval_reason: "Delete a?" }),
      call("c9", "delete", { state: "awaiting_approval", approval_reason: "Delete b?" }),
    ]),
  ]);
  view.flush();
}

function waitingCall(model: FakeModel, view: { flush(): void }, id = "c9", index = 2): void {
  model.patch(["start", assistant(`a${index}`, index, [call(id, "delete", { state: "awaiting_approval", approval_reason: "Delete notes.txt?" })])]);
  view.flush();
}

describe("the tab order", () => {
  it("is the conversation, the suggestions, the input box, Send, New chat: one stop each, whatever the cards hold", async () => {
    const { root } = await conversation();
    const stops = tabStops(root);
    expect(stops.map((el) => el.className)).toEqual(["aiw-message", "aiw-suggestion", "aiw-input", "aiw-btn aiw-btn-small aiw-new-chat"]);
    expect((stops[0] as HTMLElement).dataset.id).toBe("a1"); // the newest message
    expect(root.querySelectorAll(".aiw-messages button").length).toBeGreaterThan(2); // toggles and copy, not stops
  });

  it("arrow keys, Home and End move through the messages and every control in them; a new control joins", async () => {
    const { root } = await conversation();
    const list = $(root, ".aiw-messages");
    const newest = $(list, ".aiw-message[data-id='a1']");
    newest.focus();
    key(newest, { key: "ArrowDown" });
    const first = document.activeElement as HTMLElement;
    expect(first.classList.contains("aiw-tool-toggle")).toBe(true); // the first card's toggle
    expect(first.tabIndex).toBe(0); // the stop moved with the focus
    expect(newest.tabIndex).toBe(-1);
    key(first, { key: "ArrowUp" });
    expect(document.activeElement).toBe(newest);
    key(newest, { key: "Home" });
    expect((document.activeElement as HTMLElement).dataset.id).toBe("u1");
    key(document.activeElement!, { key: "End" });
    const last = document.activeElement as HTMLElement;
    expect(list.contains(last) && last !== newest).toBe(true);
    // A button added inside a message later (an Edit, a branch switcher) is reached the same way, not a tab stop.
    const extra = document.createElement("button");
    extra.className = "aiw-new-control";
    $(list, ".aiw-message[data-id='u1']").append(extra);
    await settle();
    expect(extra.tabIndex).toBe(-1);
    $(list, ".aiw-message[data-id='u1']").focus();
    key(document.activeElement!, { key: "ArrowDown" });
    // The message's own controls come first (its Edit), then the one added after them.
    expect((document.activeElement as HTMLElement).classList.contains("aiw-edit-message")).toBe(true);
    const visited: Element[] = [];
    for (let step = 0; step < 5 && document.activeElement !== extra; step++) {
      key(document.activeElement!, { key: "ArrowDown" });
      visited.push(document.activeElement!);
    }
    expect(document.activeElement).toBe(extra);
    expect(visited.every((el) => $(list, ".aiw-message[data-id='u1']").contains(el))).toBe(true);
  });

  it("the suggestions are one stop; arrows move between them; leaving makes the first the stop again", async () => {
    const { root } = await conversation();
    const chips = [...root.querySelectorAll<HTMLButtonElement>(".aiw-suggestion")];
    expect(chips.map((c) => c.tabIndex)).toEqual([0, -1, -1]);
    chips[0].focus();
    key(chips[0], { key: "ArrowRight" });
    expect(document.activeElement).toBe(chips[1]);
    expect(chips.map((c) => c.tabIndex)).toEqual([-1, 0, -1]);
    $(root, ".aiw-input").focus();
    expect(chips.map((c) => c.tabIndex)).toEqual([0, -1, -1]);
  });

  it("arrow keys in a text field move its caret, not the focus", async () => {
    const { root, model, view } = await conversation();
    waitingCall(model, view);
    const reason = $<HTMLInputElement>(root, ".aiw-decline-reason");
    reason.focus();
    const ev = key(reason, { key: "ArrowLeft" });
    expect(ev.defaultPrevented).toBe(false);
    expect(document.activeElement).toBe(reason);
  });
});

describe("approvals and the keyboard", () => {
  it("is announced, one Tab from the input box, and Tab past it comes back", async () => {
    const { root, model, view } = await conversation();
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    input.focus();
    waitingCall(model, view);
    await settle();
    expect(document.activeElement).toBe(input); // never taken from a person typing
    expect($(root, ".aiw-announce").textContent).toBe("Approval needed: Delete notes.txt? Press Tab in the message box to decide.");
    expect($(root, ".aiw-announce").getAttribute("aria-live")).toBe("polite");
    expect(key(input, { key: "Tab" }).defaultPrevented).toBe(true);
    const once = $(root, ".aiw-approve-once");
    expect(document.activeElement).toBe(once);
    key(once, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(input); // Shift+Tab before the first control: back
    key(input, { key: "Tab" });
    // Tab through the approval's controls; past the last one, back to the input box.
    const seen: string[] = [];
    for (let i = 0; i < 10 && document.activeElement !== input; i++) {
      seen.push((document.activeElement as HTMLElement).className);
      key(document.activeElement!, { key: "Tab" });
    }
    expect(document.activeElement).toBe(input);
    expect(seen.some((c) => c.includes("aiw-decline"))).toBe(true);
  });

  it("after a decision the focus goes to the next waiting approval, then to the input box", async () => {
    const { root, model, view } = await conversation();
    twoWaitingCalls(model, view);
    const [first, second] = root.querySelectorAll<HTMLButtonElement>(".aiw-approve-once");
    first.focus();
    first.click();
    expect(model.sent.at(-1)).toEqual({ type: "approve", tool_call_id: "c8", decision: "approved" });
    expect(document.activeElement).toBe(second);
    second.click();
    expect(document.activeElement).toBe($(root, ".aiw-input"));
  });

  // Before: "Approval needed: …" stayed in the live region after the decision, read again by a screen reader.
  it("the announcement is cleared once the approval is decided here", async () => {
    const { root, model, view } = await conversation();
    waitingCall(model, view);
    await settle();
    const announcer = $(root, ".aiw-announce");
    expect(announcer.textContent).toContain("Approval needed: Delete notes.txt?");
    $<HTMLButtonElement>(root, ".aiw-approve-once").click();
    await settle();
    expect(announcer.textContent).toBe("");
  });

  it("the announcement is cleared when the decision comes from elsewhere (another view, the kernel)", async () => {
    const { root, model, view } = await conversation();
    waitingCall(model, view);
    await settle();
    model.patch(["call", "a2", "c9", { state: "running", decision: "approved" }]);
    view.flush();
    await settle();
    expect($(root, ".aiw-announce").textContent).toBe("");
  });

  it("after one of two decisions, the one still waiting is announced", async () => {
    const { root, model, view } = await conversation();
    twoWaitingCalls(model, view);
    await settle();
    const [first, second] = root.querySelectorAll<HTMLButtonElement>(".aiw-approve-once");
    expect($(root, ".aiw-announce").textContent).toContain("Delete b?"); // the newest
    second.click();
    await settle();
    expect($(root, ".aiw-announce").textContent).toContain("Delete a?");
    first.click();
    await settle();
    expect($(root, ".aiw-announce").textContent).toBe("");
  });

  it("does not take the focus from the notebook when it appears", async () => {
    const { model, view } = await conversation();
    const cell = document.createElement("div");
    cell.tabIndex = -1;
    document.body.append(cell);
    cell.focus();
    waitingCall(model, view);
    await settle();
    expect(document.activeElement).toBe(cell);
    cell.remove();
  });

  it("Tab from the input box with no approval waiting is the browser's (on to Send)", async () => {
    const { root } = await conversation();
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    input.focus();
    expect(key(input, { key: "Tab" }).defaultPrevented).toBe(false);
  });
});

describe("Escape", () => {
  it("leaves the widget for the notebook's cell (command mode), and sends nothing", async () => {
    const model = new FakeModel();
    const cell = document.createElement("div");
    cell.className = "jp-Cell";
    cell.tabIndex = -1;
    document.body.append(cell);
    const el = document.createElement("div");
    cell.append(el);
    const { ChatView } = await import("../src/view");
    const view = new ChatView(model.asModel(), el);
    await settle();
    view.flush();
    const input = $<HTMLTextAreaElement>(el, ".aiw-input");
    input.focus();
    type(input, "b");
    const ev = key(input, { key: "Escape" });
    expect(document.activeElement).toBe(cell);
    expect(ev.defaultPrevented).toBe(false); // the notebook's Escape, too
    expect(model.sent.filter((m) => (m as { type: string }).type === "send")).toEqual([]);
    view.destroy();
    cell.remove();
  });

  it("closes an open completion list first, staying in the box", async () => {
    const { root, model, view } = await conversation();
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    input.focus();
    type(input, "@d");
    input.setSelectionRange(2, 2);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    const ask = model.sent.at(-1) as { request: number };
    model.custom({ type: "completions", request: ask.request, prefix: "d", items: [{ name: "df", kind: "DataFrame" }] });
    view.flush();
    key(input, { key: "Escape" });
    expect(document.activeElement).toBe(input);
  });
});

describe("a message sent from the box", () => {
  it("shows at once, queued, until the kernel's copy arrives", async () => {
    const { root, model, view } = await conversation();
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "are you there?");
    key(input, { key: "Enter" });
    expect(input.value).toBe("");
    const bubble = $(root, ".aiw-pending-send");
    expect(bubble.textContent).toBe("are you there?Queued");
    const { id } = model.sent.at(-1) as { id: string };
    model.custom({ type: "sent", id });
    expect(bubble.dataset.state).toBe("taken");
    model.patch(["finish", 2, user("u2", 2, "are you there?")]);
    view.flush();
    expect(root.querySelector(".aiw-pending-send")).toBeNull();
    expect(root.querySelectorAll(".aiw-message[data-role='user']")).toHaveLength(2);
  });

  it("refused by the kernel, goes back into the box, with the reason", async () => {
    const { root, model } = await conversation();
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "again");
    key(input, { key: "Enter" });
    const { id } = model.sent.at(-1) as { id: string };
    model.custom({ type: "error", message: "A reply is still running: wait for it, or press Stop.", id });
    expect(root.querySelector(".aiw-pending-send")).toBeNull();
    expect(input.value).toBe("again");
    expect($(root, ".aiw-banner-kernel").textContent).toContain("still running");
  });

  it("taken, but its turn failed to start (an error for no send): the text goes back into the box", async () => {
    const { root, model } = await conversation();
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "later");
    key(input, { key: "Enter" });
    const { id } = model.sent.at(-1) as { id: string };
    model.custom({ type: "sent", id });
    expect($(root, ".aiw-pending-mark").textContent).toBe("Queued"); // its turn waits for the kernel's loop
    model.custom({ type: "error", message: "This chat no longer saves its history file." });
    expect(root.querySelector(".aiw-pending-send")).toBeNull();
    expect(input.value).toBe("later");
  });

  it("an empty chat greets, until the first message (or a queued one)", async () => {
    const model = new FakeModel({ _tools: { weather: { title: "Weather" } as never } });
    const { root } = await mount(model);
    model.custom({ type: "snapshot", live: [] });
    const empty = $(root, ".aiw-empty");
    expect(empty.hidden).toBe(false);
    expect(empty.textContent).toContain("It can use: Weather.");
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "hello");
    key(input, { key: "Enter" });
    expect(empty.hidden).toBe(true);
  });
});
