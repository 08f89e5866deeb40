// The approval prompt inside a card: the question and Allow once / Allow always / Decline (+ optional reason).

import { button, h, setDisabled } from "../dom";
import type { Decision, OutgoingMessage } from "../types";

export const DECISION_LABELS: Record<string, string> = {
  approved: "Allowed once",
  approved_always: "Allowed always",
  rejected: "Declined",
};

export class ApprovalBox {
  readonly el = h("div", "aiw-approval");
  private readonly question = h("p", "aiw-approval-question");
  private readonly reason = h("input", "aiw-decline-reason");
  private readonly buttons: HTMLButtonElement[];

  constructor(
    private readonly callId: string,
    private readonly send: (msg: OutgoingMessage) => void,
    question: string,
  ) {
    this.el.setAttribute("role", "group");
    this.el.setAttribute("aria-label", "Approval");
    this.question.textContent = question;
    this.reason.type = "text";
    this.reason.maxLength = 2000; // the kernel's limit
    this.reason.placeholder = "Reason (optional)";
    this.reason.setAttribute("aria-label", "Reason for declining (optional)");
    this.reason.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.isComposing) {
        ev.preventDefault();
        this.decide("rejected");
      }
    });
    this.buttons = [
      button("aiw-btn aiw-btn-primary aiw-approve-once", "Allow once", () => this.decide("approved")),
      button("aiw-btn aiw-approve-always", "Allow always", () => this.decide("approved_always")),
      button("aiw-btn aiw-btn-danger aiw-decline", "Decline", () => this.decide("rejected")),
    ];
    const actions = h("div", "aiw-approval-actions");
    const decline = h("span", "aiw-decline-group");
    decline.append(this.buttons[2], this.reason);
    actions.append(this.buttons[0], this.buttons[1], decline);
    this.el.append(this.question, actions);
  }

  setQuestion(text: string): void {
    if (this.question.textContent !== text) this.question.textContent = text;
  }

  private decide(decision: Decision): void {
    if (this.buttons[0].disabled) return;
    const msg: OutgoingMessage = { type: "approve", tool_call_id: this.callId, decision };
    const reason = this.reason.value.trim();
    if (decision === "rejected" && reason) msg.reason = reason;
    this.setEnabled(false);
    this.send(msg);
  }

  /** Disabled after a click until the call's state changes; enabled again if the kernel refuses. */
  setEnabled(enabled: boolean): void {
    for (const b of this.buttons) setDisabled(b, !enabled);
    setDisabled(this.reason, !enabled);
    this.el.setAttribute("aria-busy", String(!enabled));
  }

  focusFirst(): void {
    this.buttons[0].focus();
  }
}
