// Editing a call's arguments before allowing it: one field per parameter of the tool's JSON Schema (text, number,
// a checkbox, a choice for an enum, JSON for lists and objects), filled with what the model sent. The kernel
// validates the result like the model's arguments; here only what a field itself can tell is checked.

import { h } from "../dom";
import { isRecord } from "../normalize";
import type { Json, JsonObject } from "../types";

type Kind = "string" | "number" | "integer" | "boolean" | "enum" | "json";

interface Field {
  name: string;
  kind: Kind;
  required: boolean;
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  error: HTMLElement;
  options?: Json[];
  initial: Json | undefined;
}

/** The one JSON type a property takes (``["string", "null"]`` counts as string), or null. */
function typeOf(schema: JsonObject): string | null {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const kinds = t.filter((x) => x !== "null");
    return kinds.length === 1 && typeof kinds[0] === "string" ? kinds[0] : null;
  }
  return null;
}

function kindOf(schema: JsonObject): Kind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  const t = typeOf(schema);
  return t === "string" || t === "number" || t === "integer" || t === "boolean" ? t : "json";
}

export class EditForm {
  readonly el = h("div", "aiw-edit-form");
  private readonly fields: Field[] = [];

  constructor(schema: Json | undefined, values: JsonObject) {
    const parameters = isRecord(schema) ? (schema as JsonObject) : {};
    const properties = isRecord(parameters.properties) ? (parameters.properties as Record<string, Json>) : {};
    const required = new Set(Array.isArray(parameters.required) ? parameters.required.map(String) : []);
    const names = [...Object.keys(properties), ...Object.keys(values).filter((k) => !(k in properties))];
    for (const name of names) {
      const property = isRecord(properties[name]) ? (properties[name] as JsonObject) : {};
      this.fields.push(this.field(name, property, required.has(name), values[name]));
    }
    if (this.fields.length === 0) this.el.append(h("p", "aiw-edit-empty", "This tool takes no arguments."));
  }

  /** The edited arguments, or null when a field is invalid (its message is shown next to it). */
  value(): JsonObject | null {
    const out: JsonObject = {};
    let ok = true;
    for (const field of this.fields) {
      field.error.textContent = "";
      const result = this.read(field);
      if (typeof result === "string") {
        field.error.textContent = result;
        field.input.setAttribute("aria-invalid", "true");
        ok = false;
      } else {
        field.input.removeAttribute("aria-invalid");
        if (result !== undefined) out[field.name] = result.value;
      }
    }
    return ok ? out : null;
  }

  /** Shows the kernel's refusal under the form (it names the field, as the model would be told). */
  showError(message: string): void {
    let box = this.el.querySelector<HTMLElement>(":scope > .aiw-edit-refused");
    if (!box) {
      box = h("p", "aiw-edit-refused");
      box.setAttribute("role", "alert");
      this.el.append(box);
    }
    box.textContent = message;
  }

  focusFirst(): void {
    this.fields[0]?.input.focus();
  }

  private field(name: string, schema: JsonObject, required: boolean, value: Json | undefined): Field {
    const kind = kindOf(schema);
    const row = h("label", "aiw-edit-row");
    const label = h("span", "aiw-edit-name", required ? `${name} *` : name);
    let input: Field["input"];
    const options = kind === "enum" ? (schema.enum as Json[]) : undefined;
    if (kind === "enum" && options) {
      const select = h("select", "aiw-edit-input");
      if (!required) select.append(new Option("(none)", ""));
      options.forEach((option, i) => select.append(new Option(typeof option === "string" ? option : JSON.stringify(option), String(i))));
      const index = value === undefined ? -1 : options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
      select.value = index >= 0 ? String(index) : "";
      input = select;
    } else if (kind === "boolean") {
      const box = h("input", "aiw-edit-input");
      box.type = "checkbox";
      box.checked = value === true;
      input = box;
    } else if (kind === "string" && !(typeof value === "string" && (value.length > 60 || value.includes("\n")))) {
      const text = h("input", "aiw-edit-input");
      text.type = "text";
      text.value = typeof value === "string" ? value : "";
      input = text;
    } else if (kind === "number" || kind === "integer") {
      const number = h("input", "aiw-edit-input");
      number.type = "number";
      number.step = kind === "integer" ? "1" : "any";
      number.value = typeof value === "number" ? String(value) : "";
      input = number;
    } else {
      const area = h("textarea", "aiw-edit-input");
      area.rows = 3;
      area.value = kind === "string" ? (typeof value === "string" ? value : "") : value === undefined ? "" : JSON.stringify(value, null, 2);
      input = area;
    }
    input.setAttribute("aria-label", name);
    input.dataset.field = name;
    const error = h("span", "aiw-edit-error");
    row.append(label, input);
    if (typeof schema.description === "string" && schema.description) {
      row.append(h("span", "aiw-edit-hint", schema.description));
    }
    row.append(error);
    this.el.append(row);
    return { name, kind, required, input, error, options, initial: value };
  }

  /** A field's value: `{value}`, `undefined` when left empty and optional, or the problem as text. */
  private read(field: Field): { value: Json } | undefined | string {
    const { input, kind, required } = field;
    if (kind === "boolean") {
      const checked = (input as HTMLInputElement).checked;
      // An optional flag the model left out stays out unless the person ticks it.
      return field.initial === undefined && !checked && !required ? undefined : { value: checked };
    }
    const raw = input.value;
    if (raw.trim() === "" && kind !== "string") return required ? "Required." : undefined;
    if (kind === "string") return raw === "" && !required ? undefined : { value: raw };
    if (kind === "enum") return { value: field.options![Number(raw)] };
    if (kind === "number" || kind === "integer") {
      const n = Number(raw);
      if (!Number.isFinite(n)) return "A number.";
      if (kind === "integer" && !Number.isInteger(n)) return "A whole number.";
      return { value: n };
    }
    try {
      return { value: JSON.parse(raw) as Json };
    } catch {
      return "Not valid JSON.";
    }
  }
}
