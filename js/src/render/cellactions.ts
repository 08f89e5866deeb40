// The buttons on a finished code call's card: Copy (the code as it ran), Insert as cell (the kernel puts it in a new
// cell below the cell that is running, where the host can; else it says so and the code is copied instead) and Undo
// (the kernel's KernelTools puts back what the run changed). The kernel answers each with a `cell_action` message
// (`deliverCellAction`), shown under the buttons as text; an undone call shows so (the `_undone` trait).

import { button, h, setAttr, setDisabled, setHidden, setText } from "../dom";
import type { CellRun, OutgoingMessage, ToolCallPart } from "../types";
import { undoable } from "./cellrun";
import { copyText } from "./copy";

const ENDED = new Set(["completed", "failed", "cancelled"]);
const SHOWN_MS = 1500;

/** The card waiting for each answer, by call id and action. */
const waiting = new Map<string, CellActions>();

export class CellActions {
  readonly el = h("div", "aiw-cell-actions");
  /** The header's mark of an undone call (seen collapsed too). */
  readonly badge = h("span", "aiw-badge aiw-undone", "undone");
  private readonly copy: HTMLButtonElement;
  private readonly insert: HTMLButtonElement;
  private readonly undo: HTMLButtonElement;
  private readonly status = h("div", "aiw-cell-action-status");
  private code = "";

  constructor(
    private readonly callId: string,
    private readonly send: (msg: OutgoingMessage) => void,
  ) {
    this.copy = button("aiw-btn aiw-btn-small aiw-cell-copy", "Copy", () => void this.copyCode());
    this.copy.title = "Copy the code as it ran";
    this.insert = button("aiw-btn aiw-btn-small aiw-cell-insert", "Insert as cell", () => this.ask("insert_cell"));
    this.insert.title = "Put the code as it ran into a new cell below the cell that is running (where the notebook allows it)";
    this.undo = button("aiw-btn aiw-btn-small aiw-cell-undo", "Undo", () => this.ask("undo_call"));
    this.status.setAttribute("role", "status");
    this.status.hidden = true;
    this.badge.hidden = true;
    this.badge.title = "What this run changed was put back";
    this.el.append(this.copy, this.insert, this.undo, this.status);
    this.el.hidden = true;
  }

  /**
   * Shown on a finished call that ran code (`code`: as it ran; null: none). `undone`: what Undo put back (the
   * kernel's line), when this call was undone.
   */
  update(part: ToolCallPart, cell: CellRun | null, code: string | null, undone: string | undefined): void {
    this.code = code ?? "";
    const shown = ENDED.has(part.state) && !part.provider_executed && !!code;
    setHidden(this.el, !shown);
    setHidden(this.badge, undone === undefined);
    const canUndo = !!cell && undoable(cell);
    const onlyInPlace = !!cell && !canUndo && Array.isArray(cell.mutated) && cell.mutated.length > 0;
    setHidden(this.undo, !(canUndo || onlyInPlace) || undone !== undefined);
    setDisabled(this.undo, onlyInPlace || waiting.get(this.key("undo_call")) === this);
    this.undo.title = onlyInPlace
      ? "This run only changed values in place: that cannot be undone"
      : "Put back what this run rebound or deleted, and remove what it created";
    if (undone !== undefined && !waiting.has(this.key("undo_call"))) this.show(undone, "undone");
  }

  private key(action: string): string {
    return `${this.callId}\n${action}`;
  }

  private async copyCode(): Promise<void> {
    const ok = await copyText(this.code);
    this.copy.dataset.copied = String(ok);
    setText(this.copy, ok ? "Copied" : "Could not copy");
    setTimeout(() => {
      delete this.copy.dataset.copied;
      setText(this.copy, "Copy");
    }, SHOWN_MS);
  }

  private ask(action: "undo_call" | "insert_cell"): void {
    const button = action === "undo_call" ? this.undo : this.insert;
    if (button.disabled) return;
    setDisabled(button, true);
    waiting.set(this.key(action), this);
    this.show(action === "undo_call" ? "Undoing…" : "Inserting…", "busy");
    this.send({ type: action, tool_call_id: this.callId });
  }

  /** The kernel's answer to this card's `action`. */
  async answered(action: string, ok: boolean, message: string, copy: boolean): Promise<void> {
    waiting.delete(this.key(action));
    if (action === "insert_cell") {
      setDisabled(this.insert, false);
      if (copy) {
        const copied = await copyText(this.code);
        message += copied ? " The code was copied instead." : " Copying failed too: select the code above and copy it.";
      }
      this.show(message, ok ? "done" : "refused");
      return;
    }
    setDisabled(this.undo, false);
    this.show(message, ok ? "undone" : "refused");
  }

  /** The kernel refused the message itself (an `error` naming the action): the buttons work again. */
  refused(message: string): void {
    for (const action of ["undo_call", "insert_cell"]) {
      if (waiting.get(this.key(action)) !== this || !message.includes(`'${action}'`)) continue;
      waiting.delete(this.key(action));
      setDisabled(action === "undo_call" ? this.undo : this.insert, false);
      setHidden(this.status, true);
    }
  }

  private show(message: string, kind: string): void {
    setText(this.status, message);
    setAttr(this.status, "data-kind", kind);
    setHidden(this.status, !message);
  }

  destroy(): void {
    for (const [key, card] of waiting) if (card === this) waiting.delete(key);
  }
}

/** The kernel refused a message (an `error`): the cards waiting for an answer to the action it names ask again. */
export function cellActionsRefused(message: string): void {
  for (const card of new Set(waiting.values())) card.refused(message);
}

/** A kernel `cell_action` message: the answer, in the card that asked. */
export function deliverCellAction(msg: Record<string, unknown>): void {
  const { tool_call_id: callId, action } = msg;
  if (typeof callId !== "string" || typeof action !== "string") return;
  const card = waiting.get(`${callId}\n${action}`);
  if (!card) return;
  const message = typeof msg.message === "string" ? msg.message : "";
  void card.answered(action, msg.ok === true, message, msg.copy === true);
}
