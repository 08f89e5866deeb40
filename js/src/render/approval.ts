// The approval prompt inside a card: the question and Allow once / Allow always / Decline (+ optional reason), and
// Edit: the arguments as fields from the tool's schema (code arguments in a code editor), allowed as the person
// changed them.

import { button, h, setDisabled, setHidden } from "../dom";
import type { Decision, Json, JsonObject, OutgoingMessage } from "../types";
import { CodeEditForm } from "./codeform";
import { EditForm } from "./editform";

/** What Edit needs: the tool's parameter schema and the arguments the model sent. */
export interface EditSource {
  schema(): Json | undefined;
  values(): JsonObject;
  /** The arguments that are code (name -> language): edited in a code editor. */
  code?(): Record<string, string>;
}

/** JSON with every object's keys sorted: equal for equal values, whatever order their keys came in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

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
  private readonly actions = h("div", "aiw-approval-actions");
  private readonly editActions = h("div", "aiw-approval-actions aiw-edit-actions");
  private form: EditForm | CodeEditForm | null = null;
  private editButton: HTMLButtonElement | null = null;

  constructor(
    private readonly callId: string,
    private readonly send: (msg: OutgoingMessage) => void,
    question: string,
    private readonly editing?: EditSource,
    withReason = true,
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
    const decline = h("span", "aiw-decline-group");
    decline.append(this.buttons[2]);
    if (withReason) decline.append(this.reason); // an agent's call (ACP) has nowhere to take a reason
    this.actions.append(this.buttons[0], this.buttons[1]);
    if (editing) {
      const code = Object.keys(editing.code?.() ?? {}).length > 0;
      const edit = button("aiw-btn aiw-edit-args", code ? "Edit code" : "Edit…", () => this.openEditor());
      edit.title = code ? "Change the code, then allow it to run as you changed it" : "Change the arguments, then allow the call with them";
      this.editButton = edit;
      this.buttons.push(edit);
      this.actions.append(edit);
      const label = code ? "Allow this code" : "Allow with these arguments";
      const allowEdited = button("aiw-btn aiw-btn-primary aiw-approve-edited", label, () => this.allowEdited());
      if (code) allowEdited.title = "Run the code as edited (Ctrl/Cmd+Enter in the editor)";
      const back = button("aiw-btn aiw-edit-cancel", "Back", () => this.closeEditor());
      this.buttons.push(allowEdited, back);
      this.editActions.append(allowEdited, back);
      this.editActions.hidden = true;
    }
    this.actions.append(decline);
    // Shown instead of the buttons while no kernel is connected (a notebook reopened from its saved state).
    const offline = h(
      "p",
      "aiw-offline-note",
      "This call was waiting for a decision when the notebook was saved; it has not run. Run the chat's cell again to chat.",
    );
    this.el.append(this.question, this.actions, this.editActions, offline);
  }

  private openEditor(): void {
    if (!this.editing) return;
    this.form?.el.remove();
    const code = this.editing.code?.() ?? {};
    this.form = Object.keys(code).length
      ? new CodeEditForm(this.editing.schema(), this.editing.values(), code, {
          onSubmit: () => this.allowEdited(),
          onCancel: () => {
            this.closeEditor();
            this.editButton?.focus();
          },
        })
      : new EditForm(this.editing.schema(), this.editing.values());
    this.el.insertBefore(this.form.el, this.editActions);
    setHidden(this.actions, true);
    setHidden(this.editActions, false);
    this.form.focusFirst();
  }

  private closeEditor(): void {
    this.form?.el.remove();
    this.form = null;
    setHidden(this.actions, false);
    setHidden(this.editActions, true);
  }

  private allowEdited(): void {
    const args = this.form?.value();
    if (!args || this.buttons[0].disabled) return;
    this.setEnabled(false);
    // Nothing changed: allowed as the model sent it (the card does not say "edited").
    const same = canonical(args) === canonical(this.editing?.values());
    this.send({ type: "approve", tool_call_id: this.callId, decision: "approved", ...(same ? {} : { arguments: args }) });
  }

  /** The kernel refused the action; with the editor open, its message goes under the fields. */
  refused(message?: string): void {
    if (message && this.form && this.buttons[0].disabled) this.form.showError(message); // it was this box that asked
    this.setEnabled(true);
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
    for (const input of this.form?.el.querySelectorAll<HTMLInputElement>(".aiw-edit-input") ?? []) {
      setDisabled(input, !enabled);
    }
    this.el.setAttribute("aria-busy", String(!enabled));
  }

  focusFirst(): void {
    this.buttons[0].focus();
  }
}
