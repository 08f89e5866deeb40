// Code shown as code: monospace, line numbers in a gutter, Python's colours (render/pycolor), scrolled sideways
// rather than wrapped. Long code is collapsed to its first lines with "Show all"; while it streams the collapsed
// view follows its newest lines. Text that grows at its end re-renders from its last line only. Every token is set
// with textContent, never as markup.

import { button, h, setAttr, setHidden, setText } from "../dom";
import { type LineState, isPython, tokenizeLine } from "./pycolor";

/** Lines shown before "Show all". */
export const COLLAPSED_LINES = 24;

export class CodeView {
  readonly el = h("div", "aiw-code");
  private readonly gutter = h("pre", "aiw-code-gutter");
  private readonly lines = h("pre", "aiw-code-lines");
  private readonly body = h("div", "aiw-code-body");
  private readonly more: HTMLButtonElement;
  private text = "";
  /** Each line's text, its element, and the state it starts in. */
  private rows: { text: string; el: HTMLElement; state: LineState }[] = [];
  private expanded = false;
  private live = false;
  private numbered = 0;

  constructor(
    private readonly language = "python",
    label?: string,
  ) {
    this.gutter.setAttribute("aria-hidden", "true"); // the numbers are not part of the code a reader hears or copies
    this.lines.dataset.language = language;
    this.lines.tabIndex = 0; // scrollable sideways with the keyboard
    if (label) this.lines.setAttribute("aria-label", label);
    this.body.append(this.gutter, this.lines);
    this.more = button("aiw-btn aiw-btn-small aiw-code-more", "", () => this.setExpanded(!this.expanded));
    this.more.hidden = true;
    this.el.append(this.body, this.more);
  }

  /** The code shown. */
  get value(): string {
    return this.text;
  }

  /** Shows `text`; when it extends what is shown, only its last line and the new ones are rendered. */
  setText(text: string): void {
    if (text === this.text) return;
    let from = 0;
    if (this.rows.length && text.startsWith(this.text)) from = this.rows.length - 1;
    const start = from ? this.rows[from].state : null;
    for (const row of this.rows.splice(from)) row.el.remove();
    const rest = text.split("\n").slice(from);
    let state = start;
    for (const line of rest) {
      const el = this.renderLine(line, state, this.rows.length > 0);
      this.rows.push({ text: line, el, state });
      this.lines.append(el);
      state = isPython(this.language) ? tokenizeLine(line, state).state : null;
    }
    this.text = text;
    this.updateGutter();
    this.updateCollapse();
  }

  /** While the code streams, a collapsed view shows its newest lines. */
  setLive(live: boolean): void {
    this.live = live;
    this.updateCollapse();
  }

  private renderLine(line: string, state: LineState, afterAnother: boolean): HTMLElement {
    const el = h("span", "aiw-code-line");
    // The newline goes before each line but the first: a selection copies the code as it is.
    if (afterAnother) el.append("\n");
    if (!isPython(this.language)) {
      el.append(line);
      return el;
    }
    for (const token of tokenizeLine(line, state).tokens) {
      if (token.kind === "plain") el.append(token.text);
      else el.append(h("span", `aiw-tok-${token.kind}`, token.text));
    }
    return el;
  }

  private updateGutter(): void {
    const count = this.rows.length;
    if (this.numbered === count) return;
    this.numbered = count;
    const numbers: string[] = [];
    for (let i = 1; i <= count; i++) numbers.push(String(i));
    setText(this.gutter, numbers.join("\n"));
  }

  private setExpanded(expanded: boolean): void {
    this.expanded = expanded;
    this.updateCollapse();
  }

  private updateCollapse(): void {
    const long = this.rows.length > COLLAPSED_LINES;
    const collapsed = long && !this.expanded;
    setAttr(this.el, "data-collapsed", collapsed ? "true" : null);
    setHidden(this.more, !long);
    setText(this.more, collapsed ? `Show all ${this.rows.length} lines` : "Show fewer lines");
    this.more.setAttribute("aria-expanded", String(!collapsed));
    // Collapsed while it streams: the newest lines, as they arrive.
    if (collapsed && this.live) this.body.scrollTop = this.body.scrollHeight;
    else if (collapsed) this.body.scrollTop = 0;
  }
}
