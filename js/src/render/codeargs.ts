// A card's code arguments (the tool info's `code_arguments`) shown as code (render/codeview) while they stream and
// after: the code the call runs with (the person's edit, where they edited it), and then the model's own version
// under a fold. The other arguments stay in the card's JSON view (`otherArguments`).

import { h, setHidden, setText } from "../dom";
import type { JsonObject } from "../types";
import { CodeView } from "./codeview";

interface Shown {
  row: HTMLElement;
  label: HTMLElement;
  view: CodeView;
  original: HTMLDetailsElement;
  originalView: CodeView;
}

/** The arguments that are not shown as code: `args` without the code arguments that are text. */
export function otherArguments(args: JsonObject, code: Record<string, string>): JsonObject {
  const out: JsonObject = {};
  for (const [name, value] of Object.entries(args)) if (!(name in code && typeof value === "string")) out[name] = value;
  return out;
}

export class CodeArguments {
  readonly el = h("div", "aiw-code-args");
  private readonly shown = new Map<string, Shown>();

  constructor() {
    this.el.hidden = true;
  }

  /** Whether any argument is shown as code. */
  get active(): boolean {
    return this.shown.size > 0;
  }

  /**
   * Shows the code arguments of `ranWith` (what the call runs with); where `edited`, the model's own text of each
   * one the person changed goes under a fold. `live`: the arguments still stream.
   */
  update(code: Record<string, string>, ranWith: JsonObject, model: JsonObject, edited: boolean, live: boolean): void {
    for (const [name, item] of this.shown) {
      if (!(name in code) || typeof ranWith[name] !== "string") {
        item.row.remove();
        this.shown.delete(name);
      }
    }
    for (const [name, language] of Object.entries(code)) {
      const value = ranWith[name];
      if (typeof value !== "string") continue;
      const item = this.shown.get(name) ?? this.add(name, language);
      item.view.setText(value);
      item.view.setLive(live);
      const changed = edited && typeof model[name] === "string" && model[name] !== value;
      setText(item.label, changed ? `${name} (edited by a person before it ran)` : name);
      setHidden(item.original, !changed);
      if (changed) item.originalView.setText(model[name] as string);
    }
    setHidden(this.el, this.shown.size === 0);
  }

  private add(name: string, language: string): Shown {
    const row = h("div", "aiw-code-arg");
    const label = h("div", "aiw-section-label", name);
    const view = new CodeView(language, `${name}, ${language} code`);
    const original = h("details", "aiw-code-original");
    const originalView = new CodeView(language, `${name} as the model wrote it`);
    original.append(h("summary", undefined, "The model's version"), originalView.el);
    original.hidden = true;
    row.append(label, view.el, original);
    this.el.append(row);
    const item = { row, label, view, original, originalView };
    this.shown.set(name, item);
    return item;
  }
}
