// The footer's "Run code without asking" switch: shown only when a tool runs code (its info has `code_arguments`).
// Turning it on or off asks the kernel (`run_unasked`); what it shows is the kernel's `_run_unasked`, never the
// click alone, so a saved notebook or a refused click cannot show it on while the session asks.

import { h, setHidden } from "../dom";
import type { OutgoingMessage, ToolInfo } from "../types";

/** Whether any tool runs code (it has code arguments), so the switch means something. */
export function hasCodeTool(tools: Record<string, ToolInfo> | null | undefined): boolean {
  return Object.values(tools ?? {}).some(
    (info) => !!info && typeof info.code_arguments === "object" && info.code_arguments !== null && Object.keys(info.code_arguments).length > 0,
  );
}

export class UnaskedSwitch {
  readonly el = h("label", "aiw-unasked-switch");
  private readonly box = h("input", "aiw-unasked-input");
  private on = false;

  constructor(private readonly send: (msg: OutgoingMessage) => boolean) {
    this.box.type = "checkbox";
    this.box.setAttribute("role", "switch");
    this.el.title = "This session only: code the model writes runs without asking you first; each such card says so";
    this.el.append(this.box, h("span", "aiw-unasked-label", "Run code without asking"));
    this.box.addEventListener("change", () => {
      const wanted = this.box.checked;
      this.box.checked = this.on; // shows the kernel's state until it answers
      this.send({ type: "run_unasked", on: wanted });
    });
    this.set(false, false);
  }

  /** The kernel's state, and whether to show the switch at all. */
  set(on: boolean, available: boolean): void {
    this.on = on;
    this.box.checked = on;
    this.box.setAttribute("aria-checked", String(on));
    this.el.dataset.on = String(on);
    setHidden(this.el, !available && !on);
  }
}
