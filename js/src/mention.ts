// `@name` in the input box, pure logic (no DOM): the @token at the caret, the completion list's state machine, and
// the text after accepting a name (docs/protocol.md, "Attachments by name").

/** A word character of a variable name (Python identifiers: letters, digits, underscore, in any script). */
const WORD = /[\p{L}\p{N}_]/u;
/** A whole variable name (what the kernel accepts in `attach`). */
export const VARIABLE_NAME = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/** The `@token` the caret is in: `start` is the index of the `@`, `end` the end of the word, `prefix` the text
 * between the `@` and the caret. */
export interface MentionToken {
  start: number;
  end: number;
  prefix: string;
}

/** The `@token` at `caret`, or null: an `@` at the start of the text or after whitespace, then word characters up
 * to the caret (an e-mail address `a@b` is none). */
export function mentionAt(text: string, caret: number): MentionToken | null {
  if (caret < 0 || caret > text.length) return null;
  let at = caret;
  while (at > 0 && WORD.test(text[at - 1])) at--;
  if (at === 0 || text[at - 1] !== "@") return null;
  const start = at - 1;
  if (start > 0 && !/\s/.test(text[start - 1])) return null;
  let end = caret;
  while (end < text.length && WORD.test(text[end])) end++;
  const prefix = text.slice(at, caret);
  if (prefix && !WORD.test(prefix[0])) return null;
  return { start, end, prefix };
}

/** The name of a whole `@name` just ended by a space typed at `caret` (`"look at @df "` gives `df`), or null. */
export function mentionEndedAt(text: string, caret: number): string | null {
  if (caret < 2 || !/\s/.test(text[caret - 1])) return null;
  const token = mentionAt(text, caret - 1);
  if (!token || token.end !== caret - 1) return null;
  return VARIABLE_NAME.test(token.prefix) ? token.prefix : null;
}

/** The text with `token` replaced by `@name ` and where the caret goes (after the space). */
export function insertMention(text: string, token: MentionToken, name: string): { text: string; caret: number } {
  const after = text.slice(token.end);
  const inserted = `@${name}${after.startsWith(" ") ? "" : " "}`;
  return { text: text.slice(0, token.start) + inserted + after, caret: token.start + inserted.length + (after.startsWith(" ") ? 1 : 0) };
}

/** One variable the kernel offers. */
export interface CompletionItem {
  name: string;
  kind: string;
  attachable: boolean;
}

/** Items from a `completions` answer, shaped defensively (untrusted). */
export function completionItems(raw: unknown): CompletionItem[] {
  if (!Array.isArray(raw)) return [];
  const items: CompletionItem[] = [];
  for (const item of raw) {
    if (typeof item !== "object" || item === null) continue;
    const { name, kind, attachable } = item as Record<string, unknown>;
    if (typeof name !== "string" || !VARIABLE_NAME.test(name)) continue;
    items.push({ name, kind: typeof kind === "string" ? kind : "", attachable: attachable !== false });
  }
  return items.slice(0, 50);
}

/** What a key does to an open list. */
export type CompletionKey = "move" | "accept" | "close" | null;

/** The completion list: closed, waiting for the kernel's answer, or open with items and a selection. Only the
 * answer to the latest request is shown, so a slow answer to an earlier prefix never replaces a newer one. */
export class CompletionState {
  items: CompletionItem[] = [];
  selected = 0;
  token: MentionToken | null = null;
  /** Starts anywhere: two views of one widget share its answers, and each must know its own. */
  private request = Math.floor(Math.random() * 1e9);
  /** Closed by Escape for this token: stays closed until the caret leaves it. */
  private dismissedAt: number | null = null;

  /** Whether the list shows (open, with items). */
  get open(): boolean {
    return this.token !== null && this.items.length > 0;
  }

  /** The text or the caret changed: returns the request to send for the token at the caret, or null (none, or
   * the same prefix as the one asked for). */
  update(text: string, caret: number): { request: number; prefix: string } | null {
    const token = mentionAt(text, caret);
    if (!token || token.start === this.dismissedAt) {
      if (!token) this.dismissedAt = null;
      this.close(false);
      return null;
    }
    const same = this.token !== null && this.token.start === token.start && this.token.prefix === token.prefix;
    this.token = token;
    if (same) return null;
    this.request += 1;
    return { request: this.request, prefix: token.prefix };
  }

  /** The kernel's answer; whether it is shown (it answers the latest request, for the token still at the caret). */
  receive(request: unknown, prefix: unknown, items: CompletionItem[]): boolean {
    if (request !== this.request || this.token === null || prefix !== this.token.prefix) return false;
    this.items = items;
    this.selected = 0;
    return true;
  }

  /** A key pressed in the input while the list is open: what it did (null: not ours, the input handles it). */
  key(key: string): CompletionKey {
    if (!this.open) return null;
    switch (key) {
      case "ArrowDown":
        this.selected = (this.selected + 1) % this.items.length;
        return "move";
      case "ArrowUp":
        this.selected = (this.selected - 1 + this.items.length) % this.items.length;
        return "move";
      case "Enter":
      case "Tab":
        return "accept";
      case "Escape":
        this.close(true);
        return "close";
      default:
        return null;
    }
  }

  /** The selected item. */
  current(): CompletionItem | undefined {
    return this.open ? this.items[this.selected] : undefined;
  }

  /** Closes the list; `dismissed`: by the person (Escape), so this token does not reopen it. */
  close(dismissed = false): void {
    if (dismissed && this.token) this.dismissedAt = this.token.start;
    this.token = null;
    this.items = [];
    this.selected = 0;
  }
}
