// Markdown that grows by appends, rendered in O(what changed) per frame instead of O(the whole reply).
//
// The text is cut at "safe" block boundaries: a blank line outside a fenced code block. Blocks before the last
// boundary are rendered once and frozen; only the tail (the block still growing) is re-rendered on each update.
// Cutting can differ slightly from rendering the whole text at once (a loose list split into two lists, a
// reference link defined later), so the final text is rendered whole once (`finish`).
//
// Text cut short (the growing block, or a reply that was stopped) has its open emphasis, code span or link closed
// first (`closeMarkdown`), so `*What's the weath` shows in italics, not as a stray asterisk. `decorate` adds
// controls to blocks that are complete (copy buttons on code blocks); it never sees the growing block.

import { markdownFragment } from "../markdown";
import { closeMarkdown } from "./mdclose";

// Markdown out of view is rendered when it comes near: a long conversation's first render would otherwise parse
// and sanitise every message before the first paint. Until then the text shows as plain text (found by search).
const pending = new WeakMap<Element, () => void>();
let nearView: IntersectionObserver | null = null;

function whenNearView(el: HTMLElement, render: () => void): boolean {
  if (typeof IntersectionObserver !== "function") return false;
  nearView ??= new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        nearView?.unobserve(entry.target);
        const run = pending.get(entry.target);
        pending.delete(entry.target);
        run?.();
      }
    },
    { rootMargin: "1500px 0px" },
  );
  pending.set(el, render);
  nearView.observe(el);
  return true;
}

function cancelNearView(el: HTMLElement): void {
  if (pending.delete(el)) nearView?.unobserve(el);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const BLANK = /^[ \t]*\r?$/;

export class StreamingMarkdown {
  private text = ""; // what is shown
  private frozenEnd = 0; // text[0, frozenEnd) is rendered in frozen nodes
  private tail: Node[] = []; // the nodes of text[frozenEnd, end)
  private scanned = 0; // text[0, scanned) was scanned for boundaries (whole lines)
  private fence: { ch: string; len: number } | null = null;
  private boundary = 0; // the last safe cut found
  private whole = true; // whether what is shown is the text rendered whole
  private source = ""; // what was rendered whole (the text, closed if it was cut short)
  private lazy = false; // shown as plain text until it comes near the view

  constructor(
    readonly el: HTMLElement,
    private readonly decorate: (fragment: DocumentFragment) => void = () => {},
  ) {}

  /** Like `render`, but out of view the markdown waits (as plain text) until it comes near the view. */
  renderWhenNear(text: string, cut = false): void {
    this.text = text;
    this.source = cut ? closeMarkdown(text) : text;
    this.whole = true;
    if (!text || !whenNearView(this.el, () => this.render(this.text, this.source !== this.text))) {
      this.render(text, cut);
      return;
    }
    this.el.replaceChildren(document.createTextNode(text));
    this.el.classList.add("aiw-md-pending");
    this.lazy = true;
  }

  /** Shows `text` rendered whole (a first render, a replaced text, or the final one); `cut`: it was cut short. */
  render(text: string, cut = false): void {
    if (this.lazy) {
      this.lazy = false;
      cancelNearView(this.el);
      this.el.classList.remove("aiw-md-pending");
    }
    this.text = text;
    this.source = cut ? closeMarkdown(text) : text;
    const fragment = markdownFragment(this.source);
    this.decorate(fragment);
    this.el.replaceChildren(fragment);
    this.tail = [...this.el.childNodes];
    this.frozenEnd = 0;
    this.scanned = 0;
    this.fence = null;
    this.boundary = 0;
    this.whole = true;
  }

  /** Shows `text`, which extends what is shown; re-renders only the growing block. */
  append(text: string): void {
    if (this.lazy || text.length < this.text.length || !text.startsWith(this.text.slice(this.frozenEnd), this.frozenEnd)) {
      this.render(text, true);
      return;
    }
    this.text = text;
    this.scan();
    if (this.boundary > this.frozenEnd) {
      // Blocks complete since last time: render them once, for good.
      for (const node of this.tail) node.parentNode?.removeChild(node);
      const done = markdownFragment(text.slice(this.frozenEnd, this.boundary));
      this.decorate(done);
      this.el.append(done);
      this.frozenEnd = this.boundary;
      this.tail = [];
    }
    const fragment = markdownFragment(closeMarkdown(text.slice(this.frozenEnd)));
    const nodes = [...fragment.childNodes];
    const first = this.tail[0];
    if (first && first.parentNode === this.el) this.el.insertBefore(fragment, first);
    else this.el.append(fragment);
    for (const node of this.tail) node.parentNode?.removeChild(node);
    this.tail = nodes;
    this.whole = false; // the growing block is closed and undecorated: `finish` renders the text whole
  }

  /** The final text: rendered whole if it was shown in pieces; `cut`: it was cut short (a stopped reply). */
  finish(text: string, cut = false): void {
    if (!this.whole || text !== this.text || (cut ? closeMarkdown(text) : text) !== this.source) this.render(text, cut);
  }

  get shown(): string {
    return this.text;
  }

  /** Finds block boundaries in the lines completed since the last scan. */
  private scan(): void {
    const text = this.text;
    let pos = this.scanned;
    for (let nl = text.indexOf("\n", pos); nl !== -1; nl = text.indexOf("\n", pos)) {
      const line = text.slice(pos, nl);
      const fence = FENCE.exec(line);
      if (this.fence) {
        if (fence && fence[1][0] === this.fence.ch && fence[1].length >= this.fence.len && BLANK.test(line.slice(fence[0].length))) {
          this.fence = null;
        }
      } else if (fence) {
        this.fence = { ch: fence[1][0], len: fence[1].length };
      } else if (BLANK.test(line) && pos > 0) {
        this.boundary = nl + 1;
      }
      pos = nl + 1;
    }
    this.scanned = pos;
  }
}
