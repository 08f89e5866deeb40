// A message's branch controls: Edit on a person's message (an editor in the bubble: Enter sends, Shift+Enter is a
// new line, Escape cancels and puts the message back), Regenerate / Retry on the last reply, and the `< 1/2 >`
// switcher under a message whose place has alternatives. Every control is a real button with an aria-label; while
// a turn runs they are hidden (CSS: the list is aria-busy), and a click that races one is refused by the kernel.
// Their words are drawn by CSS from `data-label` (as the copy buttons' icons): they are never part of a message's
// text, which a person selects and copies.

import { branchLabel, branchOf, branchTarget, editable, editableText, editKey, replyAction } from "../branches";
import { button, h, setAttr, setHidden } from "../dom";
import type { Message, OutgoingMessage } from "../types";

export class BranchControls {
  /** The row under the message: the switcher, then Edit or Regenerate / Retry. */
  readonly el = h("div", "aiw-branch-row");
  private readonly switcher = h("span", "aiw-branch-switch");
  private readonly previous: HTMLButtonElement;
  private readonly next: HTMLButtonElement;
  private readonly label = h("span", "aiw-branch-label");
  private readonly editButton: HTMLButtonElement;
  private readonly againButton: HTMLButtonElement;
  private editor: InlineEditor | null = null;
  private message: Message;
  private last = false;

  constructor(
    message: Message,
    private readonly bubble: HTMLElement, // the message's parts: hidden while the editor shows
    private readonly send: (msg: OutgoingMessage) => void,
  ) {
    this.message = message;
    this.previous = labelled(button("aiw-btn aiw-btn-small aiw-branch-prev", "", () => this.step(-1)), "‹");
    this.next = labelled(button("aiw-btn aiw-btn-small aiw-branch-next", "", () => this.step(1)), "›");
    this.previous.setAttribute("aria-label", "Previous branch");
    this.next.setAttribute("aria-label", "Next branch");
    this.label.setAttribute("aria-live", "polite");
    this.switcher.append(this.previous, this.label, this.next);
    this.editButton = labelled(button("aiw-btn aiw-btn-small aiw-branch-turn aiw-edit-message", "", () => this.openEditor()), "Edit");
    this.editButton.setAttribute("aria-label", "Edit this message and run it again");
    this.againButton = button("aiw-btn aiw-btn-small aiw-branch-turn aiw-regenerate", "", () => {
      this.againButton.disabled = true;
      this.send({ type: "regenerate" });
    });
    this.el.append(this.switcher, this.editButton, this.againButton);
    this.update(message);
  }

  /** The kernel refused an action (a click that raced a turn): Regenerate / Retry can be clicked again. */
  refused(): void {
    this.againButton.disabled = false;
  }

  /** Whether the message is the last one shown (only the last reply offers Regenerate / Retry). */
  setLast(last: boolean): void {
    if (last === this.last) return;
    this.last = last;
    this.update(this.message);
  }

  update(message: Message): void {
    this.message = message;
    const branch = branchOf(message);
    setHidden(this.switcher, branch === null);
    if (branch) {
      setAttr(this.label, "data-label", branchLabel(branch));
      this.label.setAttribute("aria-label", `Branch ${branch.active + 1} of ${branch.count}`);
      this.previous.disabled = branchTarget(branch, -1) === null;
      this.next.disabled = branchTarget(branch, 1) === null;
    }
    setHidden(this.editButton, !editable(message) || this.editor !== null);
    const action = replyAction(message, this.last);
    setHidden(this.againButton, action === null);
    if (action !== null) {
      const retry = action === "retry";
      setAttr(this.againButton, "data-label", retry ? "Retry" : "Regenerate");
      this.againButton.setAttribute("aria-label", retry ? "Retry: answer the last message again" : "Regenerate this reply");
      this.againButton.disabled = false;
    }
    setAttr(this.el, "data-empty", branch === null && this.editButton.hidden && this.againButton.hidden ? "true" : null);
  }

  private step(by: -1 | 1): void {
    const branch = branchOf(this.message);
    const index = branch === null ? null : branchTarget(branch, by);
    if (index === null) return;
    this.send({ type: "switch_branch", message_id: this.message.id, index });
  }

  private openEditor(): void {
    if (this.editor) return;
    this.editor = new InlineEditor(
      editableText(this.message),
      (text) => {
        this.closeEditor(false);
        this.send({ type: "edit", message_id: this.message.id, text });
      },
      () => this.closeEditor(true),
    );
    this.bubble.hidden = true;
    this.bubble.after(this.editor.el);
    this.update(this.message);
    this.editor.focus();
  }

  private closeEditor(refocus: boolean): void {
    this.editor?.el.remove();
    this.editor = null;
    this.bubble.hidden = false;
    this.update(this.message);
    if (refocus) this.editButton.focus({ preventScroll: true });
  }

  destroy(): void {
    this.editor?.el.remove();
    this.editor = null;
  }
}

/** `b` with its word drawn from `data-label` (see the top of this file). */
function labelled(b: HTMLButtonElement, label: string): HTMLButtonElement {
  b.dataset.label = label;
  return b;
}

/** The editor in the bubble: a text box with the message's text, Send and Cancel. */
export class InlineEditor {
  readonly el = h("div", "aiw-inline-edit");
  readonly area = h("textarea", "aiw-input aiw-edit-input");

  constructor(
    private readonly original: string,
    private readonly submit: (text: string) => void,
    private readonly cancel: () => void,
  ) {
    this.area.value = original;
    this.area.rows = Math.min(8, Math.max(2, original.split("\n").length));
    this.area.setAttribute("aria-label", "Edit message");
    const send = button("aiw-btn aiw-btn-primary aiw-btn-small aiw-edit-send", "Send", () => this.trySubmit());
    send.setAttribute("aria-label", "Send the edited message");
    const cancelButton = button("aiw-btn aiw-btn-small aiw-edit-cancel", "Cancel", () => this.doCancel());
    cancelButton.setAttribute("aria-label", "Cancel the edit");
    this.area.addEventListener("keydown", (ev) => {
      const what = editKey(ev);
      if (what === null) return;
      ev.preventDefault();
      ev.stopPropagation(); // Escape here closes the editor, not the notebook's edit mode
      if (what === "submit") this.trySubmit();
      else this.doCancel();
    });
    const row = h("div", "aiw-inline-edit-buttons");
    row.append(cancelButton, send);
    this.el.append(this.area, row);
  }

  focus(): void {
    this.area.focus({ preventScroll: true });
    this.area.setSelectionRange(this.area.value.length, this.area.value.length);
  }

  private trySubmit(): void {
    const text = this.area.value;
    if (!text.trim()) return; // an empty message is no edit: the box stays open
    this.submit(text);
  }

  private doCancel(): void {
    this.area.value = this.original; // restored, should it open again
    this.cancel();
  }
}
