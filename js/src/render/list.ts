// The message elements in index order. Each is inserted once at its place and never re-appended, so streaming
// into the last message leaves the list and the other messages untouched.

import type { Message } from "../types";
import { MessageView } from "./message";
import type { CardContext } from "./toolcard";

interface Item {
  index: number;
  id: string;
  view: MessageView;
}

export class MessageList {
  private order: Item[] = []; // sorted by index, as in the DOM
  private readonly views = new Map<string, MessageView>();

  constructor(
    private readonly container: HTMLElement,
    private readonly end: Node, // stays the last child
    private readonly ctx: CardContext,
  ) {}

  get size(): number {
    return this.order.length;
  }

  get(id: string): MessageView | undefined {
    return this.views.get(id);
  }

  /** The id of the last message, by index. */
  lastId(offset = 0): string | undefined {
    return this.order[this.order.length - 1 - offset]?.id;
  }

  all(): MessageView[] {
    return this.order.map((o) => o.view);
  }

  add(message: Message): MessageView {
    const view = new MessageView(message, this.ctx);
    this.views.set(message.id, view);
    this.insert({ index: message.index, id: message.id, view });
    return view;
  }

  remove(id: string): void {
    const view = this.views.get(id);
    if (!view) return;
    view.destroy();
    view.el.remove();
    this.views.delete(id);
    const i = this.order.findIndex((o) => o.id === id);
    if (i >= 0) this.order.splice(i, 1);
  }

  /** Moves a message whose index changed (not expected, but kept correct). */
  reposition(message: Message): void {
    const i = this.order.findIndex((o) => o.id === message.id);
    if (i < 0 || this.order[i].index === message.index) return;
    const [item] = this.order.splice(i, 1);
    item.index = message.index;
    this.insert(item);
  }

  clear(): void {
    for (const { view } of this.order) {
      view.destroy();
      view.el.remove();
    }
    this.views.clear();
    this.order = [];
  }

  private insert(item: Item): void {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.order[mid].index <= item.index) lo = mid + 1;
      else hi = mid;
    }
    const next = this.order[lo];
    this.container.insertBefore(item.view.el, next ? next.view.el : this.end);
    this.order.splice(lo, 0, item);
  }
}
