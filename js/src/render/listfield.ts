// A small list editor for a parameter that is a list of strings or numbers: one input per item, a remove button
// on each, and Add. Empty items are left out.

import { button, h, setDisabled } from "../dom";
import type { Json } from "../types";
import type { ItemKind } from "./schema";

export class ListField {
  readonly el = h("div", "aiw-list-field");
  private readonly items = h("div", "aiw-list-items");
  private readonly addButton: HTMLButtonElement;
  private inputs: HTMLInputElement[] = [];

  constructor(
    private readonly name: string,
    private readonly kind: ItemKind,
    values: Json | undefined,
    private readonly onChange: () => void,
  ) {
    this.el.setAttribute("role", "group");
    this.el.setAttribute("aria-label", name);
    this.el.dataset.field = name;
    this.addButton = button("aiw-btn aiw-btn-small aiw-list-add", "+ Add", () => {
      this.addItem("").focus();
      this.onChange();
    });
    this.addButton.setAttribute("aria-label", `Add an item to ${name}`);
    this.el.append(this.items, this.addButton);
    this.setValues(values);
  }

  setValues(values: Json | undefined): void {
    this.items.replaceChildren();
    this.inputs = [];
    for (const v of Array.isArray(values) ? values : []) this.addItem(typeof v === "string" ? v : JSON.stringify(v));
  }

  private addItem(text: string): HTMLInputElement {
    const row = h("div", "aiw-list-item");
    const input = h("input", "aiw-edit-input aiw-list-input");
    input.type = this.kind === "string" ? "text" : "number";
    if (this.kind !== "string") input.step = this.kind === "integer" ? "1" : "any";
    input.value = text;
    input.addEventListener("input", () => this.onChange());
    const remove = button("aiw-btn aiw-btn-small aiw-list-remove", "×", () => {
      const at = this.inputs.indexOf(input);
      row.remove();
      this.inputs.splice(at, 1);
      this.relabel();
      (this.inputs[Math.min(at, this.inputs.length - 1)] ?? this.addButton).focus();
      this.onChange();
    });
    row.append(input, remove);
    this.items.append(row);
    this.inputs.push(input);
    this.relabel();
    return input;
  }

  private relabel(): void {
    this.inputs.forEach((input, i) => {
      input.setAttribute("aria-label", `${this.name} item ${i + 1}`);
      input.nextElementSibling?.setAttribute("aria-label", `Remove ${this.name} item ${i + 1}`);
    });
  }

  /** The items, or the first problem as text. */
  read(): { value: Json[] } | string {
    const out: Json[] = [];
    for (const [i, input] of this.inputs.entries()) {
      const raw = input.value;
      if (raw.trim() === "") {
        if (input.validity?.badInput) return `Item ${i + 1}: a number.`;
        continue;
      }
      if (this.kind === "string") {
        out.push(raw);
        continue;
      }
      const n = Number(raw);
      if (!Number.isFinite(n)) return `Item ${i + 1}: a number.`;
      if (this.kind === "integer" && !Number.isInteger(n)) return `Item ${i + 1}: a whole number.`;
      out.push(n);
    }
    return { value: out };
  }

  get empty(): boolean {
    return this.inputs.every((input) => input.value.trim() === "");
  }

  focus(): void {
    (this.inputs[0] ?? this.addButton).focus();
  }

  setDisabled(disabled: boolean): void {
    for (const input of this.inputs) setDisabled(input, disabled);
    for (const b of this.el.querySelectorAll("button")) setDisabled(b, disabled);
  }

  setInvalid(invalid: boolean): void {
    for (const input of this.inputs) {
      if (invalid) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
    if (invalid) this.el.setAttribute("aria-invalid", "true");
    else this.el.removeAttribute("aria-invalid");
  }
}
