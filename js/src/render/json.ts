// A JSON view keyed by path. It grows by argument patches without re-rendering: a new key adds one row, a string
// that grows gets the text appended to its existing text node. Everything is set as text, never as HTML.
// While the call streams ("live"), a long string shows its newest lines and its size, so a person can watch it
// arrive; a string that looks like code is shown as a code block.

import { h } from "../dom";
import { formatSize } from "../format";
import { pathKey } from "../patch";
import type { ArgPatch } from "../types";

const LONG = 300; // characters; a longer (or multiline) string is clipped with an expand toggle
const CODE_KEYS = /^(code|source|src|script|sql|query|program|snippet|patch|diff|html|css|js|python|shell|command|cmd|content|body|file_content|text)$/i;
const CODE_WORDS = /(^|\n)\s*(def |class |import |from \S+ import|function |const |let |var |return\b|#include|SELECT |INSERT |UPDATE |CREATE |<\w+[ >])/;

/** Whether a multi-line string reads as code (a key that names code, or code's words and indentation). */
export function looksLikeCode(key: string | number | undefined, text: string): boolean {
  const lines = text.indexOf("\n");
  if (lines < 0) return false;
  if (typeof key === "string" && CODE_KEYS.test(key) && /(^|\n)( {2,}|\t)\S/.test(text)) return true;
  return CODE_WORDS.test(text.slice(0, 2000));
}

type Path = (string | number)[];

interface Entry {
  kind: "object" | "array" | "string" | "scalar";
  el: HTMLElement; // the value's element
  row: HTMLElement | null; // the row holding key + value (null at the root)
  children?: string[]; // path keys of the members (containers)
  text?: Text; // strings
  len?: number;
  long?: boolean;
  size?: Text; // a long string's size, kept current as it grows
  key?: string | number;
}

export class JsonView {
  readonly el: HTMLElement;
  private entries = new Map<string, Entry>();

  constructor(value: unknown = {}) {
    this.el = h("div", "aiw-json");
    this.render(value);
  }

  /** Whether the value is still streaming: long strings then show their newest lines. */
  setLive(live: boolean): void {
    this.el.classList.toggle("aiw-json-live", live);
  }

  /** Renders `value` from scratch. */
  render(value: unknown): void {
    this.entries.clear();
    const root = this.build(value, []);
    this.el.replaceChildren(root.el);
    if (root.long) this.el.append(this.moreButton(root));
    this.entries.set(pathKey([]), root);
  }

  /** Applies patches to the DOM; false if they do not fit (then call `render`). */
  apply(patches: readonly ArgPatch[]): boolean {
    try {
      for (let i = 0; i < patches.length; i++) {
        const [op, path, value] = patches[i];
        if (op === "append") {
          let text = String(value);
          const key = pathKey(path);
          // Consecutive appends to one string: one DOM write.
          while (i + 1 < patches.length && patches[i + 1][0] === "append" && pathKey(patches[i + 1][1]) === key) {
            text += String(patches[++i][2]);
          }
          this.append(key, text);
        } else {
          this.set(path, value);
        }
      }
      return true;
    } catch {
      return false;
    }
  }

  private append(key: string, text: string): void {
    const entry = this.entries.get(key);
    if (!entry || entry.kind !== "string" || !entry.text) throw new Error("append to a missing string");
    entry.text.appendData(text);
    entry.len = (entry.len ?? 0) + text.length;
    if (!entry.long && (entry.len > LONG || text.includes("\n"))) this.makeLong(entry);
    if (entry.size) entry.size.data = formatSize(entry.len);
    if (!entry.el.classList.contains("aiw-json-code") && entry.long && looksLikeCode(entry.key, entry.text.data)) {
      entry.el.classList.add("aiw-json-code");
    }
  }

  private set(path: Path, value: unknown): void {
    if (path.length === 0) throw new Error("empty path");
    const key = pathKey(path);
    const existing = this.entries.get(key);
    const entry = this.build(value, path);
    if (existing?.row) {
      this.forget(existing);
      entry.row = existing.row;
      existing.row.replaceChild(entry.el, existing.el);
      existing.row.querySelector(":scope > .aiw-json-tools")?.remove();
      if (entry.long) entry.row.append(this.moreButton(entry));
      entry.row.classList.toggle("aiw-json-block", entry.kind === "object" || entry.kind === "array" || !!entry.long);
      this.entries.set(key, entry);
      return;
    }
    const parent = this.entries.get(pathKey(path.slice(0, -1)));
    if (!parent || !parent.children) throw new Error("no parent container");
    const last = path[path.length - 1];
    if (parent.kind === "array" && last !== parent.children.length) throw new Error("index out of order");
    if (parent.children.length === 0) parent.el.replaceChildren();
    parent.el.append(this.row(last, entry));
    parent.children.push(key);
    this.entries.set(key, entry);
  }

  /** Drops the path keys below `entry`. */
  private forget(entry: Entry): void {
    for (const child of entry.children ?? []) {
      const c = this.entries.get(child);
      if (c) this.forget(c);
      this.entries.delete(child);
    }
  }

  private row(key: string | number, entry: Entry): HTMLElement {
    const row = h("div", "aiw-json-row");
    entry.key = key;
    if (entry.long && entry.text && looksLikeCode(key, entry.text.data)) entry.el.classList.add("aiw-json-code");
    row.append(h("span", typeof key === "number" ? "aiw-json-key aiw-json-idx" : "aiw-json-key", String(key)), entry.el);
    if (entry.kind === "object" || entry.kind === "array" || entry.long) row.classList.add("aiw-json-block");
    if (entry.long) row.append(this.moreButton(entry));
    entry.row = row;
    return row;
  }

  /** Builds the element for `value` at `path`, registering the members' entries. */
  private build(value: unknown, path: Path): Entry {
    if (typeof value === "string") {
      const el = h("span", "aiw-json-str");
      const text = document.createTextNode(value);
      el.append(text);
      const entry: Entry = { kind: "string", el, row: null, text, len: value.length };
      if (value.length > LONG || value.includes("\n")) {
        entry.long = true;
        el.classList.add("aiw-json-clip");
      }
      return entry;
    }
    if (typeof value === "object" && value !== null) {
      const isArray = Array.isArray(value);
      const el = h("div", isArray ? "aiw-json-arr" : "aiw-json-obj");
      const entry: Entry = { kind: isArray ? "array" : "object", el, row: null, children: [] };
      const keys: (string | number)[] = isArray ? (value as unknown[]).map((_, i) => i) : Object.keys(value);
      for (const k of keys) {
        const childPath = [...path, k];
        const child = this.build((value as Record<string | number, unknown>)[k], childPath);
        const childKey = pathKey(childPath);
        el.append(this.row(k, child));
        entry.children!.push(childKey);
        this.entries.set(childKey, child);
      }
      if (keys.length === 0) el.append(h("span", "aiw-json-empty", isArray ? "[]" : "{}"));
      return entry;
    }
    const kind = value === null || value === undefined ? "null" : typeof value === "boolean" ? "bool" : "num";
    const el = h("span", `aiw-json-${kind}`, value === undefined ? "null" : String(value));
    return { kind: "scalar", el, row: null };
  }

  private makeLong(entry: Entry): void {
    entry.long = true;
    entry.el.classList.add("aiw-json-clip");
    if (entry.row) {
      entry.row.classList.add("aiw-json-block");
      entry.row.append(this.moreButton(entry));
    }
  }

  private moreButton(entry: Entry): HTMLElement {
    const tools = h("span", "aiw-json-tools");
    if (entry.kind === "string") {
      entry.size = document.createTextNode(formatSize(entry.len ?? 0));
      const size = h("span", "aiw-json-size");
      size.append(entry.size);
      tools.append(size);
    }
    tools.append(this.toggleButton(entry));
    return tools;
  }

  private toggleButton(entry: Entry): HTMLButtonElement {
    const b = h("button", "aiw-json-more", "Show all");
    b.type = "button";
    b.setAttribute("aria-expanded", "false");
    b.addEventListener("click", () => {
      const open = entry.el.classList.toggle("aiw-open");
      b.setAttribute("aria-expanded", String(open));
      b.textContent = open ? "Show less" : "Show all";
    });
    return b;
  }
}
