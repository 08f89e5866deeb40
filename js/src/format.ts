// Text formatting for the cards and the usage line.

import type { JsonObject, ToolCallState, Usage } from "./types";

export const STATE_LABELS: Record<ToolCallState, string> = {
  streaming: "streaming",
  pending: "pending",
  awaiting_approval: "awaiting approval",
  awaiting_input: "waiting for your input", // its MCP server asked (elicitation); answered with session.respond
  running: "running",
  completed: "completed",
  failed: "failed",
  rejected: "rejected",
  cancelled: "cancelled",
  skipped: "not run", // never ran, and nobody cancelled it (a limit, a failed turn, the conversation went on)
};

export const stateLabel = (state: string): string => STATE_LABELS[state as ToolCallState] ?? state;

export const RISK_LABELS: Record<string, string> = {
  read_only: "read-only",
  normal: "normal",
  destructive: "destructive",
};

/** "0.4s", "12s", "1m 05s", "1h 02m". */
export function formatElapsed(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) seconds = 0;
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  if (seconds < 60) return `${Math.floor(seconds)}s`;
  const s = Math.floor(seconds);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

const n = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0);
// One formatter: `toLocaleString` builds a new one on every call, which a long conversation's first render felt.
const numbers = new Intl.NumberFormat("en-US");
const fmt = (x: number): string => numbers.format(x);

const cents = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * A cost in USD as the kernel sends it (the decimal's text, or null when its price is unknown): "$1.23" from a
 * dollar up, "$0.0042" or "$0.50" below it (four decimals at most, two at least), "<$0.0001" for less but more than
 * nothing, "$0" for nothing; "" when unknown or unreadable. The same rules as `ai_widgets.messages._usage.format_usd`.
 */
export function formatCost(cost: string | null | undefined): string {
  if (typeof cost !== "string" || !/^\d+(\.\d+)?(E[+-]?\d+)?$/i.test(cost.trim())) return "";
  const value = Number(cost);
  if (!Number.isFinite(value)) return "";
  if (value === 0) return "$0";
  if (value < 0.0001) return "<$0.0001";
  if (value < 1) {
    let text = value.toFixed(4);
    while (text.endsWith("0") && text.length > 4) text = text.slice(0, -1); // "0.50" keeps its cents
    return `$${text}`;
  }
  return `$${cents.format(value)}`;
}

/** "1,200 in · 30 out", then " · $0.0042" when the cost is known. */
export function formatUsage(usage: Usage | null | undefined): string {
  const u = usage ?? {};
  const cost = formatCost(u.cost);
  return `${fmt(n(u.input_tokens))} in · ${fmt(n(u.output_tokens))} out${cost ? ` · ${cost}` : ""}`;
}

/** Whether some request of `usage` has no known price (its tokens counted, its cost not). */
export function priceUnknown(usage: Usage | null | undefined): boolean {
  return hasUsage(usage) && formatCost(usage?.cost) === "";
}

export function hasUsage(usage: Usage | null | undefined): boolean {
  return !!usage && (n(usage.input_tokens) > 0 || n(usage.output_tokens) > 0);
}

/** "512 B", "2.4 KB", "1.3 MB": the size of a text as it grows (characters, close enough to bytes to read). */
export function formatSize(chars: number): string {
  if (chars < 1000) return `${chars} B`;
  if (chars < 1_000_000) return `${(chars / 1000).toFixed(1)} KB`;
  return `${(chars / 1_000_000).toFixed(1)} MB`;
}

/** A string on one line, as a person reads it: decoded (no JSON escapes), line breaks shown as ⏎. */
const oneLine = (text: string): string => text.replace(/\r?\n/g, " ⏎ ").replace(/[\t\f\v]/g, " ");

/**
 * A one-line summary of arguments: `city: "Paris", days: 3`, with strings decoded; clipped, with cost bounded by
 * `max`, not by size. With `live` (the call is still streaming), a long last string shows its tail and size, so
 * the summary moves as the text arrives.
 */
export function summarizeArgs(args: JsonObject | null | undefined, max = 80, live = false): string {
  if (!args) return "";
  const keys = Object.keys(args);
  let out = "";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const v = args[key];
    let shown: string;
    if (typeof v === "string") {
      if (live && i === keys.length - 1 && v.length > max / 2) {
        // The growing end, then its size: a head cut off on the left keeps what is new in view.
        const whole = `${out ? out + ", " : ""}${key}: “…${oneLine(v.slice(-max))}” (${formatSize(v.length)})`;
        return whole.length > max ? "…" + whole.slice(-(max - 1)) : whole;
      }
      shown = `“${oneLine(v.length > max ? v.slice(0, max) : v)}”`;
    } else if (Array.isArray(v)) shown = `[${v.length}]`;
    else if (v !== null && typeof v === "object") shown = "{…}";
    else shown = String(v);
    out += (out ? ", " : "") + `${key}: ${shown}`;
    if (out.length >= max) return out.slice(0, max - 1) + "…";
  }
  return out;
}
