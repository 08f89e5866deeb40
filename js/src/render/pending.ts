// Messages sent from the input box whose turn has not started yet: each shows at once at the end of the list as the
// person's bubble, marked "Queued" (a kernel busy running a cell starts the turn only when the cell ends, even where
// it answers "sent" at once: JupyterLab's subshells). Once the kernel's own copy of the message arrives the bubble
// goes; if the kernel refuses it, or the turn it took fails to start, the bubble goes and its text is handed back
// (the input box gets it again, with the reason in a banner): nothing typed is lost.

import { h } from "../dom";
import type { Message } from "../types";

interface Pending {
  el: HTMLElement;
  text: string;
}

export class PendingSends {
  /** Holds the bubbles; the message list inserts messages before it, so it stays after the last one. */
  readonly el = h("div", "aiw-pending-sends");
  private readonly items = new Map<string, Pending>();

  constructor(private readonly changed: () => void = () => {}) {}

  get size(): number {
    return this.items.size;
  }

  /** Shows the bubble of send `id`. */
  add(id: string, text: string): void {
    const el = h("div", "aiw-pending-send");
    el.dataset.id = id;
    el.dataset.state = "queued";
    const mark = h("span", "aiw-pending-mark", "Queued");
    mark.title = "Sent to the kernel, whose turn has not started yet (it may be running a cell)";
    el.append(h("div", "aiw-pending-text", text), mark);
    this.items.set(id, { el, text });
    this.el.append(el);
    this.changed();
  }

  /** The kernel took send `id` ("sent"): its turn starts once the kernel's loop is free (queued until then). */
  taken(id: string): void {
    const item = this.items.get(id);
    if (item) item.el.dataset.state = "taken";
  }

  /** An error not tied to a send: a turn the kernel took failed to start (a history file taken over, ...). The
   * bubbles it took go; their texts are returned, oldest first. */
  failed(): string[] {
    const texts: string[] = [];
    for (const [id, item] of this.items) {
      if (item.el.dataset.state !== "taken") continue;
      texts.push(item.text);
      this.drop(id);
    }
    return texts;
  }

  /** The kernel refused send `id`: its bubble goes; returns its text (null: not a send of this list). */
  refused(id: string): string | null {
    const item = this.items.get(id);
    if (!item) return null;
    this.drop(id);
    return item.text;
  }

  /** A message arrived from the kernel: a person's message with a bubble's text replaces that bubble. */
  arrived(message: Message | undefined): void {
    if (!this.items.size || message?.role !== "user") return;
    const texts = new Set(message.parts.flatMap((p) => (p.kind === "text" && typeof p.text === "string" ? [p.text.trim()] : [])));
    this.takenAs(texts);
  }

  /** The kernel shows messages with these texts itself (queued for the running turn's next step, or arrived): the
   * first bubble with one of them goes. */
  takenAs(texts: Set<string>): void {
    for (const [id, item] of this.items) {
      if (texts.has(item.text.trim())) {
        this.drop(id);
        return;
      }
    }
  }

  clear(): void {
    for (const id of [...this.items.keys()]) this.drop(id);
  }

  private drop(id: string): void {
    const item = this.items.get(id);
    if (!item) return;
    item.el.remove();
    this.items.delete(id);
    this.changed();
  }
}
