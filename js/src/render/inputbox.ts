// The question a running call's server asks the person, inside its card (MCP elicitation): the server's message as
// text; a form built from its flat schema (the project's EditForm, starting from the defaults; Enter accepts), or a
// link with its domain emphasised and Open behind a confirm step in the card; then Accept / Decline / Cancel. The
// kernel's refusal shows at the fields; nothing typed is lost on a refusal or on Escape.

import { ANSWER_LABELS, formDefaults, linkParts } from "../asking";
import { button, h, setDisabled, setHidden } from "../dom";
import { summarizeArgs } from "../format";
import type { InputAction, InputRequest, JsonObject, OutgoingMessage } from "../types";
import { EditForm } from "./editform";

export class InputBox {
  readonly el = h("div", "aiw-input-ask");
  private readonly message = h("p", "aiw-input-message");
  private readonly actions = h("div", "aiw-approval-actions aiw-input-actions");
  private readonly problem = h("p", "aiw-input-error");
  private readonly buttons: HTMLButtonElement[];
  private readonly form: EditForm | null = null;
  private readonly confirm = h("div", "aiw-input-confirm");
  private readonly openButton: HTMLButtonElement | null = null;
  private waiting = false; // an answer was sent; the kernel has not taken or refused it yet
  /** What the person answered last (shown once the call stops waiting). */
  answer: { action: InputAction; content?: JsonObject } | null = null;

  constructor(
    private readonly callId: string,
    private readonly send: (msg: OutgoingMessage) => void,
    request: InputRequest,
  ) {
    this.el.setAttribute("role", "group");
    this.el.setAttribute("aria-label", "Input requested");
    this.message.textContent = request.asker ? `${request.asker} asks: ${request.message}` : request.message;
    this.el.append(this.message);
    const accept = button("aiw-btn aiw-btn-primary aiw-input-accept", "Accept", () => this.answerWith("accept"));
    const decline = button("aiw-btn aiw-btn-danger aiw-input-decline", "Decline", () => this.answerWith("decline"));
    const cancel = button("aiw-btn aiw-input-cancel", "Cancel", () => this.answerWith("cancel"));
    decline.title = "Tell the server you do not want to answer";
    cancel.title = "Dismiss the question without answering (the tool goes on and decides what to do)";
    this.buttons = [accept, decline, cancel];
    if (request.mode === "form") {
      this.form = new EditForm(request.schema ?? {}, formDefaults(request.schema), {
        defaults: true,
        onSubmit: () => this.answerWith("accept"),
      });
      accept.title = "Send the form (Enter in a field)";
      this.form.el.querySelector(".aiw-edit-empty")?.remove(); // "takes no arguments" is a tool's words: no fields here
      this.el.append(this.form.el);
    } else {
      const link = linkParts(request.url);
      const shown = h("p", "aiw-input-link");
      if (link) {
        shown.append(h("span", "aiw-link-rest", link.before), h("strong", "aiw-link-domain", link.domain), h("span", "aiw-link-rest", link.after));
        shown.title = link.href;
        const open = button("aiw-btn aiw-input-open", "Open…", () => this.askToOpen());
        open.title = `Open this page on ${link.domain} in a new tab (asks first)`;
        this.openButton = open;
        this.buttons.push(open);
        const yes = button("aiw-btn aiw-btn-primary aiw-input-open-yes", `Open ${link.domain}`, () => {
          window.open(link.href, "_blank", "noopener,noreferrer");
          this.closeConfirm();
        });
        const no = button("aiw-btn aiw-input-open-no", "Not now", () => this.closeConfirm());
        this.confirm.append(h("span", "aiw-input-confirm-text", `Open a page on ${link.domain} in a new tab?`), yes, no);
        this.confirm.setAttribute("role", "alertdialog");
        this.confirm.setAttribute("aria-label", `Open a page on ${link.domain}?`);
        this.confirm.addEventListener("keydown", (ev) => {
          if (ev.key === "Escape") {
            ev.stopPropagation(); // closes this step, not the notebook's edit mode
            this.closeConfirm();
          }
        });
        this.confirm.hidden = true;
        this.el.append(shown, this.confirm);
      } else {
        shown.textContent = "The server asked to open a link that is not a plain web address; it is not shown.";
        this.el.append(shown);
      }
    }
    if (this.openButton) this.actions.append(this.openButton);
    this.actions.append(accept, decline, cancel);
    this.problem.setAttribute("role", "alert");
    this.problem.hidden = true;
    const offline = h(
      "p",
      "aiw-offline-note",
      "This call was waiting for your input when the notebook was saved; it was not answered. Run the chat's cell again to chat.",
    );
    this.el.append(this.actions, this.problem, offline);
  }

  private askToOpen(): void {
    if (!this.openButton || this.openButton.disabled) return;
    setHidden(this.confirm, false);
    this.confirm.querySelector<HTMLButtonElement>(".aiw-input-open-yes")?.focus();
  }

  private closeConfirm(): void {
    setHidden(this.confirm, true);
    this.openButton?.focus();
  }

  private answerWith(action: InputAction): void {
    if (this.waiting) return;
    const msg: OutgoingMessage = { type: "respond", tool_call_id: this.callId, action };
    if (action === "accept" && this.form) {
      const content = this.form.value();
      if (!content) return; // a field says what is wrong
      msg.content = content;
    }
    this.showProblem("");
    this.answer = { action, ...(msg.content ? { content: msg.content } : {}) };
    this.setWaiting(true);
    this.send(msg);
  }

  /** The kernel refused the answer: its problems at their fields (else its message under the form); the form stays
   * as it was typed. Whether this box had sent an answer (and so showed the refusal). */
  refused(message?: string, fields?: Record<string, string>): boolean {
    if (!this.waiting) return false;
    this.setWaiting(false);
    this.answer = null;
    const atFields = fields && this.form ? fields : {};
    this.form?.showFieldErrors(atFields);
    if (message && Object.keys(atFields).length === 0) this.showProblem(message);
    return true;
  }

  private showProblem(text: string): void {
    this.problem.textContent = text;
    setHidden(this.problem, !text);
  }

  private setWaiting(waiting: boolean): void {
    this.waiting = waiting;
    for (const b of this.buttons) setDisabled(b, waiting);
    this.form?.setDisabled(waiting);
    this.el.setAttribute("aria-busy", String(waiting));
  }

  focusFirst(): void {
    if (this.form) this.form.focusFirst();
    else this.buttons[0].focus();
  }
}

/** The compact line a card shows once the person answered (null: nothing was answered from this view). */
export function answeredText(answer: InputBox["answer"]): string | null {
  if (!answer) return null;
  const label = ANSWER_LABELS[answer.action];
  return answer.content && Object.keys(answer.content).length ? `${label}: ${summarizeArgs(answer.content, 120)}` : label;
}
