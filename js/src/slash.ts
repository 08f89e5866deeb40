// `/` at the start of the input box, pure logic (no DOM): the MCP servers' prompts as the kernel lists them
// (shaped defensively: untrusted), the `/query` at the caret, the list's filter and keys, and a prompt's arguments as
// the JSON Schema of its form (docs/protocol.md, "Prompts").

import type { JsonObject } from "./types";

/** One argument of a prompt (MCP prompt arguments are strings). */
export interface PromptArgument {
  name: string;
  title: string;
  description: string;
  required: boolean;
}

/** One prompt the kernel offers: `name` is what to send back (namespaced by server, like its tools). */
export interface PromptItem {
  name: string;
  server: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
}

/** A server that could not list its prompts. */
export interface PromptListError {
  server: string;
  message: string;
}

/** The most prompts shown at once (the filter narrows them). */
export const MAX_SHOWN = 50;

const text = (value: unknown, limit = 500): string => (typeof value === "string" ? value.slice(0, limit) : "");

/** The query of a `/` at the start of the text with the caret in its first word (`"/rev|"` gives `"rev"`), or null:
 * a slash elsewhere, or whitespace between it and the caret, is text. */
export function slashQuery(value: string, caret: number): string | null {
  if (!value.startsWith("/") || caret < 1 || caret > value.length) return null;
  const query = value.slice(1, caret);
  return /\s/.test(query) ? null : query;
}

/** Prompts from a `prompts` answer (untrusted): well-formed ones only, names unique, at most 500. */
export function promptItems(raw: unknown): PromptItem[] {
  if (!Array.isArray(raw)) return [];
  const items: PromptItem[] = [];
  const seen = new Set<string>();
  for (const entry of raw) {
    if (typeof entry !== "object" || entry === null) continue;
    const item = entry as Record<string, unknown>;
    const name = text(item.name, 300);
    if (!name || seen.has(name)) continue;
    seen.add(name);
    const args: PromptArgument[] = [];
    const argNames = new Set<string>();
    for (const a of Array.isArray(item.arguments) ? item.arguments : []) {
      if (typeof a !== "object" || a === null) continue;
      const arg = a as Record<string, unknown>;
      const argName = text(arg.name, 300);
      if (!argName || argNames.has(argName)) continue;
      argNames.add(argName);
      args.push({ name: argName, title: text(arg.title), description: text(arg.description, 2000), required: arg.required === true });
    }
    items.push({ name, server: text(item.server, 300), title: text(item.title), description: text(item.description, 2000), arguments: args });
    if (items.length >= 500) break;
  }
  return items;
}

/** The servers that could not list (untrusted), at most 20. */
export function promptErrors(raw: unknown): PromptListError[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null && typeof e.message === "string")
    .slice(0, 20)
    .map((e) => ({ server: text(e.server, 300), message: text(e.message, 1000) }));
}

/** The prompts that match `query` (case ignored): names that start with it first, then names that hold it, then
 * those whose title or description holds it; each group in the kernel's order. */
export function filterPrompts(items: PromptItem[], query: string): PromptItem[] {
  const q = query.toLowerCase();
  if (!q) return items.slice(0, MAX_SHOWN);
  const starts: PromptItem[] = [];
  const holds: PromptItem[] = [];
  const says: PromptItem[] = [];
  for (const item of items) {
    const name = item.name.toLowerCase();
    if (name.startsWith(q)) starts.push(item);
    else if (name.includes(q)) holds.push(item);
    else if (`${item.title}\n${item.description}`.toLowerCase().includes(q)) says.push(item);
  }
  return [...starts, ...holds, ...says].slice(0, MAX_SHOWN);
}

/** A prompt's arguments as the flat JSON Schema its form is built from: one string field each, its title and
 * description, the required ones required. */
export function promptSchema(item: PromptItem): JsonObject {
  const properties: JsonObject = {};
  for (const arg of item.arguments) {
    const field: JsonObject = { type: "string" };
    if (arg.title) field.title = arg.title;
    if (arg.description) field.description = arg.description;
    properties[arg.name] = field;
  }
  return { type: "object", properties, required: item.arguments.filter((a) => a.required).map((a) => a.name) };
}

/** The form's values as a prompt's arguments: strings only (a blank one left out: not given). */
export function promptArguments(values: JsonObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    if (typeof value === "string" && value.trim()) out[key] = value;
  }
  return out;
}

/** What a key does to the open list. */
export type SlashKey = "move" | "accept" | "close" | null;

/** The `/` list: closed, or open for a query, showing the prompts that match it. Each opening asks the kernel
 * again (servers change), showing the last answer meanwhile; only the answer to the latest request is taken. */
export class SlashState {
  /** Every prompt of the last answer, and the servers that failed in it. */
  all: PromptItem[] = [];
  errors: PromptListError[] = [];
  /** Whether an answer has come since the list opened (until then it says it is loading, over the old answer). */
  loaded = false;
  /** The prompts shown (the filter of `all`), and the selected one. */
  items: PromptItem[] = [];
  selected = 0;
  query: string | null = null;
  private request = Math.floor(Math.random() * 1e9);
  /** Closed by Escape: stays closed until the text no longer starts with `/`. */
  private dismissed = false;

  get open(): boolean {
    return this.query !== null;
  }

  /** The text or the caret changed: the request to send when the list has just opened, else null. */
  update(value: string, caret: number): { request: number } | null {
    const query = slashQuery(value, caret);
    if (!value.startsWith("/")) this.dismissed = false;
    if (query === null || this.dismissed) {
      this.close();
      return null;
    }
    const opening = this.query === null;
    if (query !== this.query) {
      this.query = query;
      this.refilter();
    }
    if (!opening) return null;
    this.loaded = false;
    this.request += 1;
    return { request: this.request };
  }

  /** The kernel's `prompts` answer; whether it is shown (it answers the latest request, and the list is open). */
  receive(request: unknown, items: PromptItem[], errors: PromptListError[]): boolean {
    if (request !== this.request) return false;
    this.all = items;
    this.errors = errors;
    this.loaded = true;
    if (this.query === null) return false;
    this.refilter();
    return true;
  }

  /** A key pressed in the input while the list is open: what it did (null: not ours, the input handles it). */
  key(key: string): SlashKey {
    if (!this.open) return null;
    const count = this.items.length;
    switch (key) {
      case "ArrowDown":
        if (!count) return null;
        this.selected = (this.selected + 1) % count;
        return "move";
      case "ArrowUp":
        if (!count) return null;
        this.selected = (this.selected - 1 + count) % count;
        return "move";
      case "Enter":
      case "Tab":
        return count ? "accept" : null; // nothing to choose: Enter sends the text as it is
      case "Escape":
        this.close(true);
        return "close";
      default:
        return null;
    }
  }

  current(): PromptItem | undefined {
    return this.open ? this.items[this.selected] : undefined;
  }

  /** Closes the list; `dismissed`: by the person (Escape), so typing on after the `/` does not reopen it. */
  close(dismissed = false): void {
    if (dismissed) this.dismissed = true;
    this.query = null;
    this.items = [];
    this.selected = 0;
  }

  private refilter(): void {
    const current = this.items[this.selected]?.name;
    this.items = filterPrompts(this.all, this.query ?? "");
    const at = this.items.findIndex((item) => item.name === current);
    this.selected = at >= 0 ? at : 0;
  }
}
