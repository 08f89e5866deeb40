// Reads a synced trait, also from a notebook saved before the widget's own traits took a leading `_`: such a
// notebook's state has them under the names without it, and nothing under the new ones. Only read: what this code
// writes (nothing but in-place updates of the arrays it reads) goes under the new names.

import type { AnyModel } from "@anywidget/types";
import type { WidgetTraits } from "./types";

/** The traits that were public before they took a leading `_`, by their name now. */
const BEFORE_UNDERSCORE: Partial<Record<keyof WidgetTraits, string>> = {
  _history: "history",
  _older: "older",
  _live: "live",
  _tools: "tools",
  _usage: "usage",
  _busy: "busy",
  _allowed_always: "allowed_always",
  _kernel_mode: "kernel_mode",
  _scope: "scope",
  _bench: "bench",
  _bundle_model: "bundle_model",
  _transcript_id: "transcript_id",
  _context_cut: "context_cut",
  _apps: "apps",
};

/** The trait `key`'s value; when the state has none under that name, its value under the name it was saved with
 * before the leading `_` (a notebook saved by that version). */
export function readTrait<K extends keyof WidgetTraits>(model: AnyModel<WidgetTraits>, key: K): WidgetTraits[K] {
  const value = model.get(key);
  const before = BEFORE_UNDERSCORE[key];
  if (value !== undefined || before === undefined) return value;
  return (model as unknown as AnyModel<Record<string, unknown>>).get(before) as WidgetTraits[K];
}
