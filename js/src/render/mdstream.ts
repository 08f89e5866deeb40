// Markdown that grows by appends, rendered in O(what changed) per frame instead of O(the whole reply).
//
// The text is cut at "safe" block boundaries: a blank line outside a fenced code block. Blocks before the last
// boundary are rendered once and frozen; only the tail (the block still growing) is re-rendered on each update.
// Cutting can differ slightly from rendering the whole text at once (a loose list split into two lists, a
// reference link defined later), so the final text is rendered whole once (`finish`).

import { markdownFragment } from "../markdown";

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

  constructor(readonly el: HTMLElement) {}

  /** Shows `text` rendered whole (a first render, a replaced text, or the final one). */
  render(text: string): void {
    this.text = text;
    this.el.replaceChildren(markdownFragment(text));
    this.tail = [...this.el.childNodes];
    this.frozenEnd = 0;
    this.scanned = 0;
    this.fence = null;
    this.boundary = 0;
    this.whole = true;
  }

  /** Shows `text`, which extends what is shown; re-renders only the growing block. */
  append(text: string): void {
    if (text.length < this.text.length || !text.startsWith(this.text.slice(this.frozenEnd), this.frozenEnd)) {
      this.render(text);
      return;
    }
    this.text = text;
    this.scan();
    if (this.boundary > this.frozenEnd) {
      // Blocks complete since last time: render them once, for good.
      for (const node of this.tail) node.parentNode?.removeChild(node);
      this.el.append(markdownFragment(text.slice(this.frozenEnd, this.boundary)));
      this.frozenEnd = this.boundary;
      this.tail = [];
      this.whole = false;
    }
    const fragment = markdownFragment(text.slice(this.frozenEnd));
    const nodes = [...fragment.childNodes];
    const first = this.tail[0];
    if (first && first.parentNode === this.el) this.el.insertBefore(fragment, first);
    else this.el.append(fragment);
    for (const node of this.tail) node.parentNode?.removeChild(node);
    this.tail = nodes;
  }

  /** The final text: rendered whole if it was shown in pieces. */
  finish(text: string): void {
    if (!this.whole || text !== this.text) this.render(text);
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
