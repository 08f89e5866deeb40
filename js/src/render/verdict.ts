// How a call went, in words, for its card: the decision and how long the person took to make it, who let it run
// (you, a remembered "allow always", or nobody asked), the run time (the wait for a decision is not part of it), and the line shown under the header
// (collapsed too) for a call that failed.

import { formatElapsed } from "../format";
import type { ToolCallPart } from "../types";
import { DECISION_LABELS } from "./approval";
import { cellOf, hasErrorOutput } from "./cellrun";

const num = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);

/** How long the call ran: from `run_started_at` to `finished_at` (or `now` while it runs); "" if it never ran. */
export function runTime(p: ToolCallPart, now: number): string {
  const start = num(p.run_started_at);
  if (start === null) return "";
  const end = num(p.finished_at) ?? (p.state === "running" ? now : null);
  if (end === null) return "";
  // A call its agent ran is timed by when its news arrived: "0.0s" would only say that it came in one piece.
  if (p.provider_executed && end - start < 0.05) return "";
  return formatElapsed(end - start);
}

/** How long the call waited for a decision: from `approval_requested_at` to the decision (the run's start, or the
 * end of a call declined or stopped while it waited); null if it never waited or still does. */
export function waitSeconds(p: ToolCallPart): number | null {
  const asked = num(p.approval_requested_at);
  if (asked === null) return null;
  const decided = num(p.run_started_at) ?? num(p.finished_at);
  return decided === null ? null : Math.max(0, decided - asked);
}

/** The decision line: "Allowed once after 3.2s", "Declined after 12s: reason", "Allowed always earlier: not asked
 * again"; "" when nobody decided. */
export function decisionText(p: ToolCallPart): string {
  if (typeof p.unasked_reason === "string" && p.unasked_reason) return `Ran without asking: ${p.unasked_reason}`;
  if (p.decision_remembered && p.decision === "approved_always") {
    return "Allowed always earlier in this conversation: not asked again";
  }
  if (!p.decision) {
    const waited = waitSeconds(p);
    return waited === null || p.state === "awaiting_approval" ? "" : `Waited ${formatElapsed(waited)} for a decision`;
  }
  const label = DECISION_LABELS[p.decision] ?? p.decision;
  const waited = waitSeconds(p);
  const after = waited === null ? "" : ` after ${formatElapsed(waited)}`;
  const reason = p.decision === "rejected" && p.decision_reason ? `: ${p.decision_reason}` : "";
  return label + after + reason;
}

/** Who let a call run, for the badge its card shows collapsed too: "allowed by you" (a decision made for this
 * call), "allowed always" (an earlier Allow always, remembered) or "ran without asking" (its tool or the session's
 * switch spared it: `unasked_reason`); null for a call nobody had to allow, or one declined or still waiting. */
export function whoAllowed(p: ToolCallPart): { kind: "you" | "always" | "unasked"; title: string } | null {
  if (typeof p.unasked_reason === "string" && p.unasked_reason) {
    return { kind: "unasked", title: `Ran without asking: ${p.unasked_reason}` };
  }
  if (p.decision === "approved_always" && p.decision_remembered) {
    return { kind: "always", title: "Ran without asking: a person chose Allow always for this tool earlier" };
  }
  if (p.decision === "approved" || p.decision === "approved_always") {
    return { kind: "you", title: decisionText(p) };
  }
  return null;
}

/** The line under the header, shown collapsed too: a failure's message. (A call that did not run says so in its
 * badge; why, in its body: under a turn banner that already says it, a line per card would repeat it. Code that
 * ended in an error shows it among its outputs, shown collapsed too.) */
export function outcomeLine(p: ToolCallPart): { text: string; kind: "failed" } | null {
  const o = p.outcome;
  if (!o || o.status !== "failure" || p.state !== "failed") return null;
  const cell = cellOf(o);
  if (cell && hasErrorOutput(cell)) return null;
  const err = o.error;
  return { text: err ? `${err.type || "Error"}: ${err.message ?? ""}` : o.message || "Failed", kind: "failed" };
}
