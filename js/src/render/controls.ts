// A card's parts beyond the approval prompt: the Cancel button of a call that waits or runs, and the arguments a
// person edited before allowing the call (what it ran with; the model's own stay shown above them).

import { button, h, setDisabled, setHidden } from "../dom";
import { isRecord } from "../normalize";
import type { JsonObject, OutgoingMessage } from "../types";
import { JsonView } from "./json";

const CANCELLABLE: ReadonlySet<string> = new Set(["awaiting_approval", "awaiting_input", "running"]);

export class CancelButton {
  readonly el: HTMLButtonElement;
  private state: string | null = null;

  constructor(
    private readonly callId: string,
    private readonly send: (msg: OutgoingMessage) => void,
  ) {
    this.el = button("aiw-btn aiw-btn-small aiw-cancel-call", "Cancel", () => this.cancel());
    this.el.title = "Cancel this call; the rest of the reply goes on";
    this.el.setAttribute("aria-label", "Cancel this tool call");
    this.el.hidden = true;
  }

  /** Shown while the call waits for approval or runs; clickable again whenever the state changes. */
  update(state: string): void {
    setHidden(this.el, !CANCELLABLE.has(state));
    if (state !== this.state) {
      this.state = state;
      setDisabled(this.el, false);
    }
  }

  get visible(): boolean {
    return !this.el.hidden;
  }

  /** Clickable again (the kernel refused the cancel). */
  enable(): void {
    setDisabled(this.el, false);
  }

  private cancel(): void {
    if (this.el.disabled || this.el.hidden) return;
    setDisabled(this.el, true);
    this.send({ type: "cancel", tool_call_id: this.callId });
  }
}

export class EditedArguments {
  /** The section in the card's body: the arguments the call ran with. */
  readonly el = h("div", "aiw-tool-edited");
  /** The header's mark, seen collapsed too. */
  readonly badge = h("span", "aiw-badge aiw-edited", "edited");
  private readonly view = new JsonView({});
  private shown: string | null = null;

  constructor() {
    this.badge.title = "A person edited the arguments before allowing this call";
    this.el.append(h("div", "aiw-section-label", "Ran with (edited by a person)"), this.view.el);
    this.el.hidden = true;
    this.badge.hidden = true;
  }

  /** The edited arguments, or null when the call runs with the model's. `listed`: which of them the section lists
   * (the card shows code arguments as code elsewhere); none left, the section hides and the badge stays. */
  update(edited: unknown, listed: (args: JsonObject) => JsonObject = (args) => args): JsonObject | null {
    const value = isRecord(edited) ? (edited as JsonObject) : null;
    const shown = value ? listed(value) : null;
    const key = value ? JSON.stringify([value, shown]) : null;
    if (key !== this.shown) {
      this.shown = key;
      setHidden(this.el, !shown || Object.keys(shown).length === 0);
      setHidden(this.badge, !value);
      if (shown) this.view.render(shown);
    }
    return value;
  }
}
