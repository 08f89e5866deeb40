// Messages sent while a turn runs that wait for its next tool boundary (the `_queued` trait): each shows at the end
// of the conversation as the person's bubble, marked "Will be sent at the next step". Once delivered it leaves the
// trait and arrives as a message of the conversation, where it was delivered (after that round's tool results).
// The text is the person's own and is set as text, never markup.

import { h } from "../dom";

export interface QueuedMessage {
  id: string;
  text: string;
}

/** The queued messages as the trait holds them (anything malformed left out). */
export function queuedItems(raw: unknown): QueuedMessage[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((item) =>
    item && typeof item === "object" && typeof item.id === "string" && typeof item.text === "string" ? [{ id: item.id, text: item.text }] : [],
  );
}

export class QueuedList {
  /** Holds the bubbles; it stays after the last message of the list. */
  readonly el = h("div", "aiw-queued");
  private shown = "";

  constructor() {
    this.el.hidden = true;
    this.el.setAttribute("aria-live", "polite");
  }

  get size(): number {
    return this.el.childElementCount;
  }

  /** Shows `items` (the trait's value), oldest first. */
  set(raw: unknown): void {
    const items = queuedItems(raw);
    const key = JSON.stringify(items);
    if (key === this.shown) return;
    this.shown = key;
    this.el.replaceChildren(
      ...items.map((item) => {
        const bubble = h("div", "aiw-queued-message");
        bubble.dataset.id = item.id;
        const mark = h("span", "aiw-queued-mark", "Will be sent at the next step");
        mark.title = "The model gets it with the results of the tools it is running now; Stop puts it back in the box";
        bubble.append(h("div", "aiw-queued-text", item.text), mark);
        return bubble;
      }),
    );
    this.el.hidden = items.length === 0;
  }
}
