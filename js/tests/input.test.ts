import { describe, expect, it } from "vitest";
import { $, FakeModel, mount, user } from "./helpers";

function key(el: HTMLElement, init: KeyboardEventInit & { keyCode?: number }): KeyboardEvent {
  const ev = new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init });
  if (init.keyCode !== undefined) Object.defineProperty(ev, "keyCode", { value: init.keyCode });
  el.dispatchEvent(ev);
  return ev;
}

function type(input: HTMLTextAreaElement, text: string): void {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("input box", () => {
  it("Enter sends and clears; Shift+Enter does not send", async () => {
    const model = new FakeModel();
    const { root } = await mount(model);
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "hello\nworld");
    const shift = key(input, { key: "Enter", shiftKey: true });
    expect(shift.defaultPrevented).toBe(false);
    expect(model.sent.filter((m) => (m as { type: string }).type === "send")).toHaveLength(0);
    const enter = key(input, { key: "Enter" });
    expect(enter.defaultPrevented).toBe(true);
    expect(model.sent.at(-1)).toEqual({ type: "send", text: "hello\nworld", id: expect.any(String) });
    // No kernel has answered yet (a notebook restored from saved state): the text is kept, with a note.
    expect(input.value).toBe("hello\nworld");
    expect(root.querySelector(".aiw-banner-kernel")!.textContent).toContain("run its cell again");
    key(input, { key: "Enter" });
    expect(root.querySelectorAll(".aiw-banner-kernel")).toHaveLength(1); // one note however often it is pressed
    model.custom({ type: "snapshot", live: [] });
    key(input, { key: "Enter" });
    expect(input.value).toBe("");
  });

  it("a message sent before a busy kernel answered is cleared, and the note goes, once it answers", async () => {
    // The kernel gets the message after its answer to the widget's first sync (it was busy, or slow to start), so
    // it takes it: keeping the text would invite sending it twice.
    const model = new FakeModel();
    const { root } = await mount(model);
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "early");
    key(input, { key: "Enter" });
    expect(model.sent.at(-1)).toEqual({ type: "send", text: "early", id: expect.any(String) });
    expect(input.value).toBe("early");
    expect(root.querySelectorAll(".aiw-banner-kernel")).toHaveLength(1);
    model.custom({ type: "snapshot", live: [] });
    expect(input.value).toBe("");
    expect(root.querySelectorAll(".aiw-banner-kernel")).toHaveLength(0);
    // Text changed while waiting is the person's new text: kept.
    const other = new FakeModel();
    const second = (await mount(other)).root;
    const box = $<HTMLTextAreaElement>(second, ".aiw-input");
    type(box, "first");
    key(box, { key: "Enter" });
    type(box, "second thoughts");
    other.custom({ type: "snapshot", live: [] });
    expect(box.value).toBe("second thoughts");
  });

  it("does not send while an IME composes", async () => {
    const model = new FakeModel();
    const { root } = await mount(model);
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "にほん");
    key(input, { key: "Enter", isComposing: true });
    key(input, { key: "Enter", keyCode: 229 });
    expect(model.sent.filter((m) => (m as { type: string }).type === "send")).toHaveLength(0);
    expect(input.value).toBe("にほん");
  });

  it("Send is disabled while empty; while busy it steers, and Stop shows", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    const send = $<HTMLButtonElement>(root, ".aiw-send");
    const stop = $<HTMLButtonElement>(root, ".aiw-stop");
    expect(send.disabled).toBe(true);
    expect(stop.hidden).toBe(true);
    type(input, "   ");
    expect(send.disabled).toBe(true);
    type(input, "hi");
    expect(send.disabled).toBe(false);
    model.set("_busy", true);
    view.flush();
    // While a turn runs Send stays: the message steers the turn (sent at its next step); Stop shows beside it.
    expect(send.disabled).toBe(false);
    expect(send.title).toContain("next step");
    expect(stop.hidden).toBe(false);
    expect(stop.disabled).toBe(false);
    stop.click();
    expect(model.sent.at(-1)).toEqual({ type: "stop" });
    model.set("_busy", false);
    view.flush();
    expect(send.title).toBe("");
    send.click();
    expect(model.sent.at(-1)).toEqual({ type: "send", text: "hi", id: expect.any(String) });
  });

  it("shows suggestion chips, before and after the first message; a chip sends its text", async () => {
    const model = new FakeModel({ suggestions: ["What's the weather?", "Tell a joke"] });
    const { view, root } = await mount(model);
    const chips = root.querySelectorAll<HTMLButtonElement>(".aiw-suggestion");
    expect([...chips].map((c) => c.textContent)).toEqual(["What's the weather?", "Tell a joke"]);
    expect($(root, ".aiw-suggestions").hidden).toBe(false);
    chips[1].click();
    expect(model.sent.at(-1)).toEqual({ type: "send", text: "Tell a joke", id: expect.any(String) });
    model.set("_busy", true);
    model.finish(user("u1", 0, "Tell a joke"));
    await new Promise((r) => setTimeout(r, 0));
    view.flush();
    // Still offered after the first message (a menu of things to try), but not while a turn runs.
    expect($(root, ".aiw-suggestions").hidden).toBe(false);
    expect([...chips].every((c) => c.disabled)).toBe(true);
    model.set("_busy", false);
    view.flush();
    expect([...chips].some((c) => c.disabled)).toBe(false);
    chips[0].click();
    expect(model.sent.at(-1)).toEqual({ type: "send", text: "What's the weather?", id: expect.any(String) });
  });

  it("shows the usage of the last turn and of the conversation, and the placeholder", async () => {
    const model = new FakeModel({ _usage: { input_tokens: 1200, output_tokens: 30, requests: 2 }, placeholder: "Ask me" });
    const { view, root } = await mount(model);
    expect($<HTMLTextAreaElement>(root, ".aiw-input").placeholder).toBe("Ask me");
    expect($(root, ".aiw-usage").textContent).toBe("Session: 1,200 in · 30 out (2 requests)");
    model.patch(["start", { id: "a1", index: 0, role: "assistant", status: "in_progress", parts: [], usage: { input_tokens: 10, output_tokens: 5 } }]);
    view.flush();
    expect($(root, ".aiw-usage").textContent).toBe("Last turn: 10 in · 5 out · Session: 1,200 in · 30 out (2 requests)");
  });
});
