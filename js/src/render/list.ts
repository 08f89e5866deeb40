// The message elements in index order. Each is inserted once at its place and never re-appended, so streaming
// into the last message leaves the list and the other messages untouched.
//
// A message can also be put in unbuilt: an empty element of its own (`aiw-unbuilt`, with its id and role) holds
// its place until `build` (or the first `get`) makes its view and swaps it in. Opening a long conversation puts
// the earlier messages in that way (render/backfill.ts).

import { h } from "../dom";
import type { Message } from "../types";
import { MessageView } from "./message";
import type { CardContext } from "./toolcard";

interface Item {
  index: number;
  id: string;
  el: HTMLElement; // the view's element, or the placeholder's while unbuilt
  view: MessageView | null; // null: not built yet
}

/** The node a message goes in before, to come before `el`: the marker of where sending stopped goes with the
 * message after it (render/contextcut.ts), so a message put in above that one goes above the marker too. */
function leading(el: HTMLElement): Node {
  const previous = el.previousElementSibling;
  return previous?.classList.contains("aiw-context-cut") ? previous : el;
}

export class MessageList {
  private order: Item[] = []; // sorted by index, as in the DOM
  private readonly items = new Map<string, Item>();
  private unbuiltCount = 0;

  constructor(
    private readonly container: HTMLElement,
    private readonly end: Node, // stays the last child
    private readonly ctx: CardContext,
    /** The message of an unbuilt item, when it is built. */
    private readonly source: (id: string) => Message | undefined = () => undefined,
  ) {}

  get size(): number {
    return this.order.length;
  }

  /** How many messages are in unbuilt. */
  get unbuilt(): number {
    return this.unbuiltCount;
  }

  /** The view of message `id`, built now if it was put in unbuilt. */
  get(id: string): MessageView | undefined {
    const item = this.items.get(id);
    if (!item) return undefined;
    return item.view ?? this.build(id);
  }

  /** Whether message `id` is in the list (built or not). */
  has(id: string): boolean {
    return this.items.has(id);
  }

  /** Whether message `id` is in the list unbuilt. */
  isUnbuilt(id: string): boolean {
    return this.items.get(id)?.view === null;
  }

  /** The element that holds message `id`'s place (its view's, or the placeholder). */
  element(id: string): HTMLElement | undefined {
    return this.items.get(id)?.el;
  }

  /** The index of the first message, if any. */
  firstIndex(): number | undefined {
    return this.order[0]?.index;
  }

  /** The id of the last message, by index. */
  lastId(offset = 0): string | undefined {
    return this.order[this.order.length - 1 - offset]?.id;
  }

  /** The built views (an unbuilt message takes what is current when it is built). */
  all(): MessageView[] {
    const views: MessageView[] = [];
    for (const o of this.order) if (o.view) views.push(o.view);
    return views;
  }

  add(message: Message): MessageView {
    const view = new MessageView(message, this.ctx);
    const item = { index: message.index, id: message.id, el: view.el, view };
    this.items.set(message.id, item);
    this.insert(item);
    return view;
  }

  /** Puts `message` in unbuilt: its place is held by an empty element until it is built. */
  addUnbuilt(message: Message): void {
    const el = h("div", "aiw-message aiw-unbuilt");
    el.dataset.role = message.role;
    el.dataset.id = message.id;
    const item = { index: message.index, id: message.id, el, view: null };
    this.items.set(message.id, item);
    this.unbuiltCount++;
    this.insert(item);
  }

  /** Builds an unbuilt message's view and swaps it in for its placeholder. */
  build(id: string): MessageView | undefined {
    const item = this.items.get(id);
    if (!item || item.view) return item?.view ?? undefined;
    const message = this.source(id);
    if (!message) return undefined;
    const view = new MessageView(message, this.ctx);
    this.container.replaceChild(view.el, item.el);
    item.el = view.el;
    item.view = view;
    this.unbuiltCount--;
    return view;
  }

  remove(id: string): void {
    const item = this.items.get(id);
    if (!item) return;
    if (item.view) item.view.destroy();
    else this.unbuiltCount--;
    item.el.remove();
    this.items.delete(id);
    const i = this.order.indexOf(item);
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
    for (const item of this.order) {
      item.view?.destroy();
      item.el.remove();
    }
    this.items.clear();
    this.order = [];
    this.unbuiltCount = 0;
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
    this.container.insertBefore(item.el, next ? leading(next.el) : this.end);
    this.order.splice(lo, 0, item);
  }
}
