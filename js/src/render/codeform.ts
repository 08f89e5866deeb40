// Edit for a tool whose arguments include code (the tool info's `code_arguments`): each code argument in a code
// editor (render/codeedit), the other arguments as the usual fields (render/editform, from the schema without the
// code ones). Its value is the arguments the call is allowed with.

import { h } from "../dom";
import { isRecord } from "../normalize";
import type { Json, JsonObject } from "../types";
import { CodeEditor } from "./codeedit";
import { EditForm, showRefusal } from "./editform";

/** The tool info's `code_arguments` (argument name -> language), checked: only string to string entries. */
export function codeArguments(info: { code_arguments?: unknown } | undefined): Record<string, string> {
  const raw = info?.code_arguments;
  const out: Record<string, string> = {};
  if (!isRecord(raw)) return out;
  for (const [name, language] of Object.entries(raw)) if (typeof language === "string") out[name] = language;
  return out;
}

/** `schema` without the properties named in `names` (nor among its required ones). */
function withoutCode(schema: Json | undefined, names: Set<string>): JsonObject {
  const base = isRecord(schema) ? (schema as JsonObject) : {};
  const properties = isRecord(base.properties) ? (base.properties as JsonObject) : {};
  const kept: JsonObject = {};
  for (const [name, property] of Object.entries(properties)) if (!names.has(name)) kept[name] = property;
  const required = Array.isArray(base.required) ? base.required.filter((n) => typeof n === "string" && !names.has(n)) : [];
  return { ...base, properties: kept, required };
}

export interface CodeFormOptions {
  onSubmit?: () => void;
  onCancel?: () => void;
}

export class CodeEditForm {
  readonly el = h("div", "aiw-edit-form aiw-code-form");
  private readonly editors = new Map<string, CodeEditor>();
  private readonly rest: EditForm | null;
  private readonly values: JsonObject;

  constructor(schema: Json | undefined, values: JsonObject, code: Record<string, string>, options: CodeFormOptions = {}) {
    this.values = values;
    const names = new Set(Object.keys(code));
    for (const [name, language] of Object.entries(code)) {
      const value = values[name];
      if (value !== undefined && typeof value !== "string") continue; // not text: the fields edit it as JSON
      const row = h("div", "aiw-edit-row aiw-code-row");
      const label = h("span", "aiw-edit-name", `${name} (${language})`);
      const editor = new CodeEditor(typeof value === "string" ? value : "", { ...options, label: `${name}, ${language} code` });
      editor.area.dataset.field = name;
      row.append(label, editor.el);
      this.el.append(row);
      this.editors.set(name, editor);
    }
    for (const name of names) if (!this.editors.has(name)) names.delete(name);
    const restSchema = withoutCode(schema, names);
    const restValues: JsonObject = {};
    for (const [name, value] of Object.entries(values)) if (!names.has(name)) restValues[name] = value;
    const hasRest = Object.keys(restSchema.properties as JsonObject).length > 0 || Object.keys(restValues).length > 0;
    this.rest = hasRest ? new EditForm(restSchema, restValues, { onSubmit: options.onSubmit }) : null;
    if (this.rest) this.el.append(this.rest.el);
    // Escape again, after it left a code editor, anywhere else in the form (not in a field): the edit is cancelled.
    this.el.addEventListener("keydown", (ev) => {
      const target = ev.target as HTMLElement;
      if (ev.key !== "Escape" || !options.onCancel || target.matches("input, textarea, select")) return;
      ev.preventDefault();
      options.onCancel();
    });
  }

  /** The arguments, or null when a field is invalid (its message is shown next to it). */
  value(): JsonObject | null {
    const rest = this.rest ? this.rest.value() : {};
    if (rest === null) return null;
    const out: JsonObject = { ...rest };
    for (const [name, editor] of this.editors) {
      // Code the model did not give and the person left empty stays out.
      if (editor.value === "" && this.values[name] === undefined) continue;
      out[name] = editor.value;
    }
    return out;
  }

  showError(message: string): void {
    showRefusal(this.el, message);
  }

  focusFirst(): void {
    const first = this.editors.values().next();
    if (!first.done) first.value.focus();
    else this.rest?.focusFirst();
  }
}
