// A form from a tool's JSON Schema: one field per parameter (text, number, a checkbox, a choice for an enum, a list
// editor for a list of strings or numbers, JSON for objects and other lists), with its description as a hint and
// required ones marked. Used to edit a call's arguments before allowing it, and to run a tool by hand (with the
// schema's defaults filled in). The kernel validates the result like a model's arguments and its messages can be
// shown at the fields; here only what a field itself can tell is checked, as the person types. Text is set as text.

import { h, setDisabled } from "../dom";
import { isRecord } from "../normalize";
import type { Json, JsonObject } from "../types";
import { ListField } from "./listfield";
import { type FieldSpec, fieldSpec, jsonPlaceholder } from "./schema";

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

interface Field {
  name: string;
  spec: FieldSpec;
  required: boolean;
  input: Control | null;
  list: ListField | null;
  error: HTMLElement;
  /** The value the field was filled with (undefined: none). */
  initial: Json | undefined;
}

export interface FormOptions {
  /** Fill a field the values lack with its schema default (running by hand; not when editing a model's call). */
  defaults?: boolean;
  /** Enter in a one-line field, or Ctrl/Cmd+Enter anywhere: the form's main action. */
  onSubmit?: () => void;
  /** A field was changed by the person. */
  onEdit?: (name: string) => void;
}

const LONG_TEXT = 60;

export class EditForm {
  readonly el = h("div", "aiw-edit-form");
  private readonly fields: Field[] = [];
  private readonly schema: JsonObject;

  constructor(
    schema: Json | undefined,
    values: JsonObject,
    private readonly options: FormOptions = {},
  ) {
    this.schema = isRecord(schema) ? (schema as JsonObject) : {};
    const properties = isRecord(this.schema.properties) ? (this.schema.properties as Record<string, Json>) : {};
    const required = new Set(Array.isArray(this.schema.required) ? this.schema.required.map(String) : []);
    const names = [...Object.keys(properties), ...Object.keys(values).filter((k) => !(k in properties))];
    for (const name of names) {
      const spec = fieldSpec(properties[name], this.schema);
      const value = name in values ? values[name] : options.defaults && spec.hasDefault ? spec.default : undefined;
      this.fields.push(this.field(name, properties[name], spec, required.has(name), value ?? undefined));
    }
    if (this.fields.length === 0) this.el.append(h("p", "aiw-edit-empty", "This tool takes no arguments."));
    this.el.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  /** The arguments, or null when a field is invalid (its message is shown next to it). */
  value(): JsonObject | null {
    const out: JsonObject = {};
    let ok = true;
    for (const field of this.fields) {
      const result = this.read(field);
      this.mark(field, typeof result === "string" ? result : "");
      if (typeof result === "string") ok = false;
      else if (result !== undefined) out[field.name] = result.value;
    }
    return ok ? out : null;
  }

  /** Fills the fields with `values` (a field they lack: its default, when running by hand; else empty). */
  setValues(values: JsonObject): void {
    for (const field of this.fields) {
      const { spec } = field;
      const value = field.name in values ? values[field.name] : this.options.defaults && spec.hasDefault ? spec.default : undefined;
      field.initial = value ?? undefined;
      this.fill(field, field.initial);
      this.mark(field, "");
    }
  }

  /** The kernel's messages, each at its field (a field not named here is cleared). */
  showFieldErrors(errors: Record<string, string>): void {
    for (const field of this.fields) this.mark(field, errors[field.name] ?? "");
  }

  /** Shows the kernel's refusal under the form (it names the field, as the model would be told); "" hides it. */
  showError(message: string): void {
    showRefusal(this.el, message);
  }

  focusFirst(): void {
    const first = this.fields[0];
    if (first?.list) first.list.focus();
    else first?.input?.focus();
  }

  setDisabled(disabled: boolean): void {
    for (const field of this.fields) {
      if (field.input) setDisabled(field.input as HTMLInputElement, disabled);
      field.list?.setDisabled(disabled);
    }
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.key !== "Enter" || ev.isComposing || ev.keyCode === 229 || !this.options.onSubmit) return;
    const target = ev.target as HTMLElement;
    const oneLine = target instanceof HTMLInputElement && target.type !== "checkbox" && !ev.shiftKey;
    if (oneLine || ev.ctrlKey || ev.metaKey) {
      ev.preventDefault();
      this.options.onSubmit();
    }
  }

  private field(name: string, property: Json | undefined, spec: FieldSpec, required: boolean, value: Json | undefined): Field {
    // A list editor is a group of inputs: its row is no single label.
    const row: HTMLElement = spec.kind === "list" ? h("div", "aiw-edit-row") : h("label", "aiw-edit-row");
    const label = h("span", "aiw-edit-name", required ? `${name} *` : name);
    if (required) label.title = "Required";
    const error = h("span", "aiw-edit-error");
    error.setAttribute("aria-live", "polite");
    const field: Field = { name, spec, required, input: null, list: null, error, initial: value };
    const edited = (): void => {
      // As the person types: what the field itself can tell (a number, JSON), else nothing (the kernel's message
      // for the old value goes).
      const result = this.read(field);
      this.mark(field, typeof result === "string" && !this.blank(field) ? result : "");
      this.options.onEdit?.(name);
    };
    let control: HTMLElement;
    if (spec.kind === "list") {
      field.list = new ListField(name, spec.items ?? "string", value, edited);
      control = field.list.el;
    } else {
      field.input = this.control(spec, value, property);
      field.input.addEventListener(spec.kind === "boolean" || spec.kind === "enum" ? "change" : "input", edited);
      field.input.setAttribute("aria-label", name);
      field.input.dataset.field = name;
      control = field.input;
    }
    row.append(label, control);
    if (spec.description) row.append(h("span", "aiw-edit-hint", spec.description));
    row.append(error);
    this.el.append(row);
    return field;
  }

  private control(spec: FieldSpec, value: Json | undefined, property: Json | undefined): Control {
    const { kind } = spec;
    if (kind === "enum") {
      const select = h("select", "aiw-edit-input");
      select.append(new Option("(none)", ""));
      (spec.options ?? []).forEach((o, i) => select.append(new Option(typeof o === "string" ? o : JSON.stringify(o), String(i))));
      this.fillSelect(select, spec, value);
      return select;
    }
    if (kind === "boolean") {
      const box = h("input", "aiw-edit-input");
      box.type = "checkbox";
      box.checked = value === true;
      return box;
    }
    if (kind === "number" || kind === "integer") {
      const number = h("input", "aiw-edit-input");
      number.type = "number";
      number.step = kind === "integer" ? "1" : "any";
      number.value = typeof value === "number" ? String(value) : "";
      return number;
    }
    if (kind === "string" && !(typeof value === "string" && (value.length > LONG_TEXT || value.includes("\n")))) {
      const text = h("input", "aiw-edit-input");
      text.type = "text";
      text.value = typeof value === "string" ? value : "";
      return text;
    }
    const area = h("textarea", "aiw-edit-input");
    area.rows = kind === "string" ? 4 : 3;
    area.spellcheck = kind === "string";
    if (kind !== "string") area.placeholder = jsonPlaceholder(property, this.schema);
    area.value = kind === "string" ? (typeof value === "string" ? value : "") : value === undefined ? "" : JSON.stringify(value, null, 2);
    return area;
  }

  private fillSelect(select: HTMLSelectElement, spec: FieldSpec, value: Json | undefined): void {
    const options = spec.options ?? [];
    const index = value === undefined ? -1 : options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
    select.value = index >= 0 ? String(index) : "";
  }

  private fill(field: Field, value: Json | undefined): void {
    const { input, spec } = field;
    if (field.list) return field.list.setValues(value);
    if (input instanceof HTMLSelectElement) return this.fillSelect(input, spec, value);
    if (input instanceof HTMLInputElement && input.type === "checkbox") {
      input.checked = value === true;
      return;
    }
    if (!input) return;
    if (spec.kind === "string") input.value = typeof value === "string" ? value : "";
    else if (spec.kind === "number" || spec.kind === "integer") input.value = typeof value === "number" ? String(value) : "";
    else input.value = value === undefined ? "" : JSON.stringify(value, null, 2);
  }

  private mark(field: Field, message: string): void {
    if (field.error.textContent !== message) field.error.textContent = message;
    if (field.list) field.list.setInvalid(!!message);
    else if (message) field.input?.setAttribute("aria-invalid", "true");
    else field.input?.removeAttribute("aria-invalid");
  }

  private blank(field: Field): boolean {
    return field.list ? field.list.empty : !!field.input && field.input.value.trim() === "" && field.spec.kind !== "boolean";
  }

  /** A field's value: `{value}`, `undefined` when left empty and optional, or the problem as text. */
  private read(field: Field): { value: Json } | undefined | string {
    const { input, spec, required } = field;
    const kind = spec.kind;
    if (field.list) {
      const items = field.list.read();
      if (typeof items === "string") return items;
      return items.value.length === 0 && !required && field.initial === undefined ? undefined : items;
    }
    if (!input) return undefined;
    if (kind === "boolean") {
      const checked = (input as HTMLInputElement).checked;
      // An optional flag the model left out stays out unless the person ticks it.
      return field.initial === undefined && !checked && !required ? undefined : { value: checked };
    }
    const raw = input.value;
    if ((kind === "number" || kind === "integer") && (input as HTMLInputElement).validity?.badInput) return "A number.";
    if (raw.trim() === "" && kind !== "string") return required ? "Required." : undefined;
    if (kind === "string") return raw === "" && !required ? undefined : { value: raw };
    if (kind === "enum") return { value: spec.options![Number(raw)] };
    if (kind === "number" || kind === "integer") {
      const n = Number(raw);
      if (!Number.isFinite(n)) return "A number.";
      if (kind === "integer" && !Number.isInteger(n)) return "A whole number.";
      return { value: n };
    }
    let parsed: Json;
    try {
      parsed = JSON.parse(raw) as Json;
    } catch {
      return "Not valid JSON.";
    }
    if (spec.json === "object" && !isRecord(parsed)) return "An object, in JSON: {\"key\": value}.";
    if (spec.json === "array" && !Array.isArray(parsed)) return "A list, in JSON: [ … ].";
    return { value: parsed };
  }
}

/** Shows the kernel's refusal of an edit at the end of ``form`` (an alert); "" hides it. */
export function showRefusal(form: HTMLElement, message: string): void {
  let box = form.querySelector<HTMLElement>(":scope > .aiw-edit-refused");
  if (!message) return box?.remove();
  if (!box) {
    box = h("p", "aiw-edit-refused");
    box.setAttribute("role", "alert");
    form.append(box);
  }
  box.textContent = message;
}
