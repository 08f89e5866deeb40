// A tool call's log: the last lines its MCP server logged while it ran (`log_lines`), as a small monospace block
// in the card. The lines are the server's text: set as text only (never HTML), one line each, the newest last.

import { h, setHidden } from "../dom";

export class CallLog {
  readonly el = h("div", "aiw-call-log");
  private shown = "";

  constructor(lines: readonly unknown[] | null | undefined) {
    this.el.setAttribute("role", "log");
    this.el.setAttribute("aria-label", "What the server logged");
    this.update(lines);
  }

  /** Shows `lines` (only the strings among them); hidden while there are none. */
  update(lines: readonly unknown[] | null | undefined): void {
    const text = Array.isArray(lines) ? lines.filter((line): line is string => typeof line === "string") : [];
    const key = JSON.stringify(text);
    if (key === this.shown) return;
    this.shown = key;
    this.el.replaceChildren(...text.map((line) => h("div", "aiw-call-log-line", line)));
    setHidden(this.el, text.length === 0);
    this.el.scrollTop = this.el.scrollHeight;
  }
}
