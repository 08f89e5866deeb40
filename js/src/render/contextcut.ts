// The marker where the last request stopped sending: a thin divider before the first message it carried, when the
// conversation was longer than the model's context window (the kernel's `context_cut` trait; the session's
// ContextCut). The messages above it were not sent (or their tool results went shortened); the history keeps them.

import { h, setText } from "../dom";
import type { ContextCut } from "../types";

const count = (n: number): string => n.toLocaleString("en");

/** What the marker says (the kernel's static transcript words it the same way: widget/_transcript.py). */
export function contextCutText(cut: ContextCut): string {
  const window = `the ${count(cut.window)}-token window`;
  const tokens = `~${count(cut.left_out_tokens)} tokens over ${window}`;
  const results = cut.shortened_results;
  if (cut.left_out_messages) {
    const messages = `${count(cut.left_out_messages)} message${cut.left_out_messages === 1 ? "" : "s"}`;
    const shortened = results ? `; ${count(results)} older tool result${results === 1 ? "" : "s"} sent shortened` : "";
    return `Earlier messages were not sent to the model: ${messages}, ${tokens}${shortened}.`;
  }
  return `${count(results)} older tool result${results === 1 ? " was" : "s were"} sent to the model shortened, ${tokens}.`;
}

/** A cut as the trait carries it, or null (none, or not one: an empty dict means the last request sent everything). */
export function readContextCut(raw: unknown): ContextCut | null {
  if (!raw || typeof raw !== "object") return null;
  const r = raw as Record<string, unknown>;
  const n = (key: string): number => (typeof r[key] === "number" && Number.isFinite(r[key]) ? (r[key] as number) : 0);
  if (typeof r.first_sent_id !== "string" || !(n("left_out_messages") || n("shortened_results"))) return null;
  return {
    first_sent_id: r.first_sent_id,
    left_out_messages: n("left_out_messages"),
    left_out_turns: n("left_out_turns"),
    shortened_results: n("shortened_results"),
    left_out_tokens: n("left_out_tokens"),
    sent_tokens: n("sent_tokens"),
    window: n("window"),
  };
}

export class ContextMarker {
  readonly el = h("div", "aiw-context-cut");
  private cut: ContextCut | null = null;

  constructor() {
    this.el.setAttribute("role", "note");
    this.el.append(h("span", "aiw-context-cut-text"));
  }

  set(raw: unknown): void {
    this.cut = readContextCut(raw);
    if (this.cut) setText(this.el.firstChild as HTMLElement, contextCutText(this.cut));
  }

  /** Puts the marker before the element of the first message sent (`at` finds it), or takes it out when there is
   * no cut or that message is not shown. Called after the list changed: a message put in above moves it. */
  place(at: (id: string) => HTMLElement | undefined): void {
    const target = this.cut ? at(this.cut.first_sent_id) : undefined;
    if (!target?.parentNode) {
      this.el.remove();
      return;
    }
    if (target.previousSibling !== this.el) target.parentNode.insertBefore(this.el, target);
  }
}
