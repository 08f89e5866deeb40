// A reply that ended in an error or at a limit, said once, in the reply: what happened, the one action for its kind
// (Retry after a failed request, Continue after a loop or budget limit; only on the last reply), and a link to its
// entry on the troubleshooting page. The banners above the list are for what is not about one reply. The action's
// and the link's words are drawn by CSS from `data-label` (as the branch buttons'): never part of the message's text.

import { errorAction } from "../branches";
import { button, h, setAttr, setHidden, setText } from "../dom";
import { safeLinkUrl } from "../markdown";
import type { Message, OutgoingMessage } from "../types";

const LABELS = {
  retry: ["Retry", "Retry: answer the last message again"],
  continue: ["Continue", "Continue: let the model go on from where it stopped"],
} as const;

export class ReplyErrorView {
  readonly el = h("div", "aiw-reply-error");
  private readonly text = h("span", "aiw-error-text");
  private readonly action: HTMLButtonElement;
  private readonly help = h("a", "aiw-error-help");
  private message: Message;
  private last = false;
  /** The status the action was last set up for: a new ending (an error, then a limit) enables it again. */
  private shownStatus: string | null = null;

  constructor(
    message: Message,
    private readonly send: (msg: OutgoingMessage) => void,
  ) {
    this.message = message;
    this.action = button("aiw-btn aiw-btn-small aiw-error-action", "", () => {
      const what = errorAction(this.message, this.last);
      if (what === null) return;
      this.action.disabled = true; // one click, one request; a refusal enables it again
      this.send({ type: what === "retry" ? "regenerate" : "continue" });
    });
    this.help.dataset.label = "Troubleshooting";
    this.help.setAttribute("aria-label", "Troubleshooting: what this error means and what to do");
    this.help.target = "_blank";
    this.help.rel = "noopener noreferrer";
    this.el.setAttribute("role", "alert");
    this.el.append(this.text, this.action);
    this.update(message);
  }

  /** Whether the message is the last one shown (only the last reply's error offers its action). */
  setLast(last: boolean): void {
    if (last === this.last) return;
    this.last = last;
    this.update(this.message);
  }

  /** The kernel refused an action (a click that raced a turn): the action can be clicked again. */
  refused(): void {
    this.action.disabled = false;
  }

  update(message: Message): void {
    this.message = message;
    const shown = message.role === "assistant" && (message.status === "error" || message.status === "limit_reached");
    setHidden(this.el, !shown);
    setAttr(this.el, "data-kind", shown ? message.status : null);
    if (!shown) return;
    const error = typeof message.error === "string" ? message.error : "";
    setText(this.text, message.status === "error" ? (error ? `Error: ${error}` : "Error") : error || "Paused at the tool-call limit.");
    const what = errorAction(message, this.last);
    setHidden(this.action, what === null);
    if (what !== null) {
      const [label, aria] = LABELS[what];
      setAttr(this.action, "data-label", label);
      setAttr(this.action, "data-action", what);
      this.action.setAttribute("aria-label", aria);
      if (this.shownStatus !== message.status) this.action.disabled = false;
      this.shownStatus = message.status;
    }
    const link = safeLinkUrl(message.error_help) ? message.error_help : "";
    // In the page only with its address: an anchor without one is no link, and every anchor shown has a safe href.
    if (!link) this.help.remove();
    else {
      if (this.help.getAttribute("href") !== link) this.help.setAttribute("href", link);
      if (this.help.parentNode !== this.el) this.el.append(this.help);
    }
  }
}
