// Branches of the conversation, as the message controls show them (pure logic, no DOM): which action a message
// offers (Edit on a person's message; Regenerate on the last reply, Retry on a last reply that was stopped; a
// failed one's error offers Retry, a paused one's Continue), the `< 1/2 >` switcher's label and targets, and what a
// key does in the inline editor.

import type { Branch, Message } from "./types";

export type ReplyAction = "regenerate" | "retry" | null;

/** What the last reply offers under it: Retry when it was stopped, Regenerate when it finished otherwise; nothing
 * for a reply in progress, one that is not the last, or one that failed (its error offers Retry: see
 * `errorAction`). */
export function replyAction(message: Pick<Message, "role" | "status">, isLast: boolean): ReplyAction {
  if (message.role !== "assistant" || !isLast) return null;
  if (message.status === "cancelled") return "retry";
  if (message.status === "completed" || message.status === "limit_reached") return "regenerate";
  return null;
}

export type ErrorAction = "retry" | "continue" | null;

/** The one action the last reply's error offers, by its kind: Retry (answer the last message again) after a
 * failure, Continue (go on from where it stopped) only after a loop or budget limit; nothing for a reply that was
 * answered but not saved (asking again would not help), or one that is not the last. */
export function errorAction(message: Pick<Message, "role" | "status" | "error_kind">, isLast: boolean): ErrorAction {
  if (message.role !== "assistant" || !isLast) return null;
  if (message.status === "limit_reached") return "continue";
  if (message.status === "error") return message.error_kind === "history_unsaved" ? null : "retry";
  return null;
}

/** Whether a message offers Edit: a person's message, finished. */
export function editable(message: Pick<Message, "role" | "status">): boolean {
  return message.role === "user" && message.status !== "in_progress";
}

/** The branch a message shows, when its place has more than one; else null. Malformed values count as none. */
export function branchOf(message: Pick<Message, "branch">): Branch | null {
  const b = message.branch;
  if (!b || typeof b !== "object") return null;
  const { active, count } = b;
  if (!Number.isInteger(active) || !Number.isInteger(count) || count < 2 || active < 0 || active >= count) return null;
  return { active, count };
}

/** The switcher's label: "2/3" (counting from 1, as people do). */
export function branchLabel(branch: Branch): string {
  return `${branch.active + 1}/${branch.count}`;
}

/** The branch `step` away (-1: the previous, +1: the next), or null past either end. */
export function branchTarget(branch: Branch, step: -1 | 1): number | null {
  const index = branch.active + step;
  return index >= 0 && index < branch.count ? index : null;
}

export type EditKey = "submit" | "cancel" | null;

/** What a key does in the inline editor: Enter sends, Escape cancels; Shift+Enter (a new line), keys while an
 * IME composes, and every other key type as usual. */
export function editKey(ev: Pick<KeyboardEvent, "key" | "shiftKey" | "isComposing" | "keyCode" | "altKey" | "ctrlKey" | "metaKey">): EditKey {
  if (ev.isComposing || ev.keyCode === 229) return null;
  if (ev.key === "Escape") return "cancel";
  if (ev.key === "Enter" && !ev.shiftKey && !ev.altKey) return "submit";
  return null;
}

/** The text an edit starts from: the person's own typed text (the first text part; attachments stay as they are). */
export function editableText(message: Pick<Message, "parts">): string {
  const first = message.parts[0];
  return first && first.kind === "text" && first.attachment !== true ? first.text : "";
}
