// Edit, Regenerate / Retry and the `< 1/2 >` switcher: the pure rules (src/branches.ts), the controls a message
// shows (render/branches.ts), and the store's "cut" op, which drops what left the active path.

import { describe, expect, it } from "vitest";
import { branchLabel, branchOf, branchTarget, editKey, editableText, errorAction, replyAction } from "../src/branches";
import { $, FakeModel, assistant, mount, user } from "./helpers";

const key = (k: string, extra: Partial<KeyboardEvent> = {}) =>
  ({ key: k, shiftKey: false, altKey: false, ctrlKey: false, metaKey: false, isComposing: false, keyCode: 0, ...extra }) as KeyboardEvent;

describe("the rules", () => {
  it("offers Regenerate on the last finished reply and Retry on one that was stopped", () => {
    expect(replyAction({ role: "assistant", status: "completed" }, true)).toBe("regenerate");
    expect(replyAction({ role: "assistant", status: "limit_reached" }, true)).toBe("regenerate");
    expect(replyAction({ role: "assistant", status: "error" }, true)).toBeNull(); // its error offers Retry
    expect(replyAction({ role: "assistant", status: "cancelled" }, true)).toBe("retry");
    expect(replyAction({ role: "assistant", status: "in_progress" }, true)).toBeNull();
    expect(replyAction({ role: "assistant", status: "completed" }, false)).toBeNull();
    expect(replyAction({ role: "user", status: "completed" }, true)).toBeNull();
  });

  it("gives the last reply's error the one action for its kind: Retry after a failure, Continue after a limit", () => {
    const last = (status: string, error_kind: string | null) => errorAction({ role: "assistant", status, error_kind } as never, true);
    expect(last("error", "request")).toBe("retry"); // a connection failure: never Continue
    expect(last("error", "context_too_long")).toBe("retry");
    expect(last("error", null)).toBe("retry"); // a reply saved before kinds were kept
    expect(last("error", "history_unsaved")).toBeNull(); // the reply was answered: asking again would not help
    expect(last("limit_reached", "max_iterations")).toBe("continue");
    expect(last("limit_reached", "max_cost")).toBe("continue");
    expect(last("limit_reached", null)).toBe("continue");
    expect(last("completed", null)).toBeNull();
    expect(last("cancelled", null)).toBeNull();
    expect(errorAction({ role: "assistant", status: "error", error_kind: "request" } as never, false)).toBeNull();
  });

  it("reads a branch mark strictly, and steps within it", () => {
    expect(branchOf({ branch: { active: 1, count: 3 } })).toEqual({ active: 1, count: 3 });
    for (const bad of [null, undefined, { active: 0, count: 1 }, { active: 3, count: 3 }, { active: -1, count: 2 }, { active: 0.5, count: 2 }]) {
      expect(branchOf({ branch: bad as never })).toBeNull();
    }
    expect(branchLabel({ active: 0, count: 2 })).toBe("1/2");
    expect(branchTarget({ active: 0, count: 2 }, -1)).toBeNull();
    expect(branchTarget({ active: 0, count: 2 }, 1)).toBe(1);
    expect(branchTarget({ active: 1, count: 2 }, 1)).toBeNull();
  });

  it("sends on Enter, cancels on Escape, and leaves Shift+Enter and an IME's keys alone", () => {
    expect(editKey(key("Enter"))).toBe("submit");
    expect(editKey(key("Escape"))).toBe("cancel");
    expect(editKey(key("Enter", { shiftKey: true }))).toBeNull();
    expect(editKey(key("Enter", { isComposing: true }))).toBeNull();
    expect(editKey(key("Enter", { keyCode: 229 }))).toBeNull();
    expect(editKey(key("a"))).toBeNull();
  });

  it("edits the typed text, not an attachment's", () => {
    expect(editableText(user("u", 0, "hello"))).toBe("hello");
    expect(editableText({ parts: [{ kind: "text", text: "Attached", attachment: true }] })).toBe("");
  });
});

async function chat() {
  const model = new FakeModel();
  const { view, root } = await mount(model);
  model.finish(user("u1", 0, "first question"));
  model.finish(assistant("a1", 1, [{ kind: "text", text: "an answer" }], { status: "completed", branch: { active: 1, count: 2 } }));
  view.flush();
  return { model, view, root };
}

describe("the controls", () => {
  it("are real buttons with names, and none of their words is part of the message's text", async () => {
    const { root } = await chat();
    const reply = $(root, '.aiw-message[data-id="a1"]');
    const buttons = [...reply.querySelectorAll<HTMLButtonElement>(".aiw-branch-row button:not([hidden])")];
    expect(buttons.map((b) => b.getAttribute("aria-label"))).toEqual(["Previous branch", "Next branch", "Regenerate this reply"]);
    expect(buttons.every((b) => b.tagName === "BUTTON" && b.type === "button" && b.textContent === "")).toBe(true);
    expect($(reply, ".aiw-branch-label").dataset.label).toBe("2/2");
    expect($(reply, ".aiw-branch-row").textContent).toBe("");
    const edit = $<HTMLButtonElement>(root, '.aiw-message[data-id="u1"] .aiw-edit-message');
    expect(edit.hidden).toBe(false);
    expect(edit.getAttribute("aria-label")).toBe("Edit this message and run it again");
  });

  it("switch branches and regenerate", async () => {
    const { model, root } = await chat();
    const reply = $(root, '.aiw-message[data-id="a1"]');
    expect($<HTMLButtonElement>(reply, ".aiw-branch-next").disabled).toBe(true);
    $<HTMLButtonElement>(reply, ".aiw-branch-prev").click();
    $<HTMLButtonElement>(reply, ".aiw-regenerate").click();
    expect(model.sent.slice(-2)).toEqual([{ type: "switch_branch", message_id: "a1", index: 0 }, { type: "regenerate" }]);
  });

  it("can be clicked again after the kernel refused", async () => {
    const { model, view, root } = await chat();
    const regenerate = $<HTMLButtonElement>(root, '.aiw-message[data-id="a1"] .aiw-regenerate');
    regenerate.click();
    expect(regenerate.disabled).toBe(true); // one click, one request
    model.custom({ type: "error", message: "A reply is still running: wait for it, or press Stop, then try again." });
    view.flush();
    expect(regenerate.disabled).toBe(false);
    expect($(root, ".aiw-banner-kernel").textContent).toContain("A reply is still running");
  });

  it("offer Retry on a last reply that failed (in its error, once), and Regenerate only on the last one", async () => {
    const { model, view, root } = await chat();
    model.finish(user("u2", 2, "again"));
    model.finish(assistant("a2", 3, [{ kind: "text", text: "half" }], { status: "error", error: "boom", error_kind: "request" }));
    view.flush();
    expect($(root, '.aiw-message[data-id="a1"] .aiw-regenerate').hidden).toBe(true);
    expect($(root, '.aiw-message[data-id="a2"] .aiw-regenerate').hidden).toBe(true); // the error has it
    const retry = $<HTMLButtonElement>(root, '.aiw-message[data-id="a2"] .aiw-error-action');
    expect(retry.hidden).toBe(false);
    expect(retry.dataset.label).toBe("Retry");
    expect(retry.getAttribute("aria-label")).toBe("Retry: answer the last message again");
    expect([...root.querySelectorAll("button")].some((b) => b.dataset.label === "Continue")).toBe(false);
    retry.click();
    expect(model.sent.at(-1)).toEqual({ type: "regenerate" });
    expect(retry.disabled).toBe(true);
  });

  it("edit in place: Enter sends the new text, Escape puts the message back", async () => {
    const { model, root } = await chat();
    const message = $(root, '.aiw-message[data-id="u1"]');
    const edit = $<HTMLButtonElement>(message, ".aiw-edit-message");
    edit.click();
    const area = $<HTMLTextAreaElement>(message, ".aiw-edit-input");
    expect(document.activeElement).toBe(area);
    expect(area.value).toBe("first question");
    expect($(message, ".aiw-parts").hidden).toBe(true);
    expect(edit.hidden).toBe(true);
    area.value = "a changed question";
    const escape = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    area.dispatchEvent(escape);
    expect(escape.defaultPrevented).toBe(true);
    expect(message.querySelector(".aiw-edit-input")).toBeNull();
    expect($(message, ".aiw-parts").hidden).toBe(false);
    expect($(message, ".aiw-text, .aiw-plain").textContent).toBe("first question");
    expect(document.activeElement).toBe(edit);
    expect(model.sent.some((m) => (m as { type: string }).type === "edit")).toBe(false);

    edit.click();
    const again = $<HTMLTextAreaElement>(message, ".aiw-edit-input");
    expect(again.value).toBe("first question"); // restored
    again.value = "line one";
    again.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true, cancelable: true }));
    expect(model.sent.some((m) => (m as { type: string }).type === "edit")).toBe(false); // Shift+Enter: a new line
    again.value = "line one\nline two";
    again.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    expect(model.sent.at(-1)).toEqual({ type: "edit", message_id: "u1", text: "line one\nline two" });
    expect(message.querySelector(".aiw-edit-input")).toBeNull();
  });

  it("an empty edit is not sent", async () => {
    const { model, root } = await chat();
    const message = $(root, '.aiw-message[data-id="u1"]');
    $<HTMLButtonElement>(message, ".aiw-edit-message").click();
    const area = $<HTMLTextAreaElement>(message, ".aiw-edit-input");
    area.value = "   ";
    $<HTMLButtonElement>(message, ".aiw-edit-send").click();
    expect(model.sent.some((m) => (m as { type: string }).type === "edit")).toBe(false);
    expect(message.querySelector(".aiw-edit-input")).not.toBeNull();
  });
});

describe("the cut op", () => {
  it("drops the finished messages from its position on, in the model's history too, and the next ones follow", async () => {
    const { model, view, root } = await chat();
    model.patch(["cut", 1]);
    model.finishedCount = 1;
    view.flush();
    expect(model.attrs._history.length).toBe(1);
    expect(root.querySelector('.aiw-message[data-id="a1"]')).toBeNull();
    model.finish(assistant("a9", 1, [{ kind: "text", text: "another" }], { status: "completed", branch: { active: 2, count: 3 } }));
    view.flush();
    expect($(root, '.aiw-message[data-id="a9"] .aiw-branch-label').dataset.label).toBe("3/3");
    expect(model.attrs._history.map((m) => (m as { id: string }).id)).toEqual(["u1", "a9"]);
  });

  it("is refused when malformed", async () => {
    const { model, view, root } = await chat();
    model.patch(["cut", "1"], ["cut"], ["cut", -1]);
    view.flush();
    expect(root.querySelectorAll(".aiw-message").length).toBe(2);
  });
});

const branchCss = import.meta.glob<string>("../src/styles/branches.css", { eager: true, query: "?raw", import: "default" })[
  "../src/styles/branches.css"
];

describe("the controls' size", () => {
  it("makes the branch arrows, Edit and Regenerate targets of at least 24 px each way", () => {
    const rule = (selector: string): string => {
      const at = branchCss.indexOf(`${selector} {`);
      expect(at, selector).toBeGreaterThan(-1);
      return branchCss.slice(at, branchCss.indexOf("}", at));
    };
    expect(rule(".aiw-branch-row button")).toMatch(/min-height:\s*24px/);
    const arrows = rule(".aiw-branch-next");
    expect(arrows).toMatch(/min-width:\s*24px/);
    expect(arrows).toMatch(/min-height:\s*24px/);
  });
});

describe("New chat", () => {
  it("asks the kernel for a fresh conversation, then says where the one before went", async () => {
    const { model, view, root } = await chat();
    const button = $<HTMLButtonElement>(root, ".aiw-new-chat");
    expect(button.hidden).toBe(false);
    expect(button.textContent).toBe("New chat");
    model.set("_busy", true);
    view.flush();
    expect(button.disabled).toBe(true); // a running turn: the kernel would refuse it
    model.set("_busy", false);
    view.flush();
    button.click();
    expect(model.sent.filter((m) => (m as { type: string }).type === "new_chat")).toEqual([{ type: "new_chat" }]);
    // The kernel: a cut at 0 (every message left the active path), then its answer.
    model.patch(["cut", 0]);
    model.finishedCount = 0;
    model.custom({ type: "new_chat", kept: 2 });
    view.flush();
    expect(root.querySelectorAll(".aiw-message").length).toBe(0);
    expect($(root, ".aiw-empty").hidden).toBe(false);
    const kept = $(root, ".aiw-empty-kept");
    expect(kept.hidden).toBe(false);
    expect(kept.textContent).toContain("The previous one is kept");
    expect(button.hidden).toBe(true); // nothing to set aside in an empty chat
    // The new chat's first message: the note goes and the button is back.
    model.finish(user("u2", 0, "hello"));
    view.flush();
    expect(kept.hidden).toBe(true);
    expect(button.hidden).toBe(false);
  });

  it("says nothing of a kept conversation when there was none", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    expect($(root, ".aiw-new-chat").hidden).toBe(true);
    model.custom({ type: "new_chat", kept: 0 });
    view.flush();
    expect($(root, ".aiw-empty-kept").hidden).toBe(true);
  });
});
