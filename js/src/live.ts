// Live (in-progress) messages, built from the kernel's patch ops (docs/protocol.md). Pure logic, no DOM.
// Ops for unknown messages, parts or calls are ignored; a message whose finished copy has arrived (op "finish",
// handled by the store) takes no ops.

import { isAnswerPart } from "./answer";
import { isRecord, normalizeMessage, normalizePart } from "./normalize";
import { applyPatches } from "./patch";
import type { ArgPatch, Message, Part, PatchOp, ToolCallPart } from "./types";

export type StoreEvent =
  /** Everything was dropped (op "clear"). */
  | { kind: "reset" }
  /** The kernel answered for the first time: this model is connected to a live kernel. */
  | { kind: "connected" }
  /** Message `id` appeared, was replaced (live -> finished, duplicate start, snapshot) or disappeared. */
  | { kind: "message"; id: string }
  /** Finished messages from before every one held arrived (an `older` answer), oldest first. */
  | { kind: "older"; ids: string[] }
  /** status / status_text / finish_reason / usage / error of `id` changed. */
  | { kind: "fields"; id: string }
  /** The part at `index` was added or replaced. */
  | { kind: "part"; id: string; index: number }
  /** Text was appended to the text/reasoning part at `index`. */
  | { kind: "text"; id: string; index: number }
  /** Text was appended to the typed answer at `index`, and its parse changed by `patches` (null: re-render it). */
  | { kind: "answer"; id: string; index: number; patches: ArgPatch[] | null }
  /** The call's arguments changed by `patches` (null: re-render them from the value). */
  | { kind: "args"; id: string; index: number; patches: ArgPatch[] | null }
  /** Fields of the call at `index` changed. */
  | { kind: "call"; id: string; index: number }
  /** The kernel refused an action (`id`: the send it refuses, when that send had one). */
  | { kind: "error"; message: string; id?: string; callId?: string; fields?: Record<string, string> }
  /** The kernel answered the input box: `completions`, `attachment`, `prompts` or `sent` (docs/protocol.md). */
  | { kind: "reply"; message: Record<string, unknown> };

/** A message's fields that a `msg` op carries: the one list of them on this side (the kernel's is
 * `MESSAGE_FIELDS` in ai_widgets/widget/_serialize.py; a test checks the two agree). */
export const MESSAGE_FIELDS = ["status", "status_text", "finish_reason", "usage", "error", "error_kind", "error_help"] as const;
/** A tool call's fields that a `call` op carries (the kernel's `CALL_FIELDS`, same order). */
export const CALL_FIELDS = [
  "state",
  "progress",
  "log_lines",
  "outcome",
  "edited_arguments",
  "approval_reason",
  "decision",
  "decision_reason",
  "decision_remembered",
  "provider_executed",
  "approval_requested_at",
  "run_started_at",
  "finished_at",
  "input_request",
  "unasked_reason",
] as const;
/** What a `call` op may also carry about a sync call's thread after the call ended (the kernel's
 * `AFTER_STOP_FIELDS`): display only, never the call's record, so they apply to a finished message too. */
export const AFTER_STOP_FIELDS = ["stopping", "late"] as const;

/** Sets the after-stop fields that `fields` holds on `part`; whether any was there. */
export function setAfterStop(part: ToolCallPart, fields: Record<string, unknown>): boolean {
  const target = part as unknown as Record<string, unknown>;
  let changed = false;
  for (const key of AFTER_STOP_FIELDS) {
    if (key in fields) {
      target[key] = fields[key];
      changed = true;
    }
  }
  return changed;
}

interface Live {
  message: Message;
  calls: Map<string, number>; // tool_call_id -> part index
}

function callIndex(parts: Part[]): Map<string, number> {
  const calls = new Map<string, number>();
  parts.forEach((p, i) => p.kind === "tool_call" && calls.set(p.tool_call_id, i));
  return calls;
}

export class LiveMessages {
  private readonly live = new Map<string, Live>();

  /**
   * @param saved The model's `live` array, which this keeps holding the live messages themselves (updated in
   *   place by the ops, so as they stand): what a host saves of the model (a notebook saved mid-turn) shows them.
   */
  constructor(
    private readonly isFinished: (id: string) => boolean,
    private readonly emit: (event: StoreEvent) => void,
    private readonly saved: () => unknown[] = () => [],
  ) {}

  get(id: string): Message | undefined {
    return this.live.get(id)?.message;
  }

  ids(): IterableIterator<string> {
    return this.live.keys();
  }

  delete(id: string): void {
    if (this.live.delete(id)) this.unsave(id);
  }

  clear(): void {
    this.live.clear();
    this.saved().length = 0;
  }

  /** Shows the live messages of the model's saved state (a notebook saved mid-turn) until the kernel's come. */
  restore(): void {
    for (const raw of [...this.saved()]) {
      if (!isRecord(raw) || typeof raw.id !== "string") continue;
      if (this.isFinished(raw.id)) this.unsave(raw.id);
      else if (!this.live.has(raw.id)) this.start(JSON.parse(JSON.stringify(raw))); // a copy: never share one
    }
  }

  private save(message: Message): void {
    const saved = this.saved();
    const at = saved.findIndex((m) => isRecord(m) && m.id === message.id);
    if (at >= 0) saved[at] = message;
    else saved.push(message);
  }

  private unsave(id: string): void {
    const saved = this.saved();
    const at = saved.findIndex((m) => isRecord(m) && m.id === id);
    if (at >= 0) saved.splice(at, 1);
  }

  /** Applies a message op; false if `op` is not one of them. */
  apply(op: PatchOp): boolean {
    switch (op[0]) {
      case "start":
        this.start(op[1]);
        return true;
      case "msg":
        this.setFields(op[1], op[2]);
        return true;
      case "part":
        this.addPart(op[1], op[2], op[3]);
        return true;
      case "text":
        this.appendText(op[1], op[2], op[3]);
        return true;
      case "answer":
        this.appendAnswer(op[1], op[2], op[3], op[4]);
        return true;
      case "args":
        this.patchArgs(op[1], op[2], op[3]);
        return true;
      case "call":
        this.setCall(op[1], op[2], op[3]);
        return true;
      default:
        return false;
    }
  }

  private liveEntry(id: unknown): Live | undefined {
    if (typeof id !== "string" || this.isFinished(id)) return undefined;
    return this.live.get(id);
  }

  private start(raw: unknown): void {
    const message = normalizeMessage(raw);
    if (!message || this.isFinished(message.id)) return;
    if (message === raw) message.parts = [...message.parts]; // ours to mutate from here on
    this.live.set(message.id, { message, calls: callIndex(message.parts) });
    this.save(message);
    this.emit({ kind: "message", id: message.id });
  }

  private setFields(id: unknown, fields: unknown): void {
    const entry = this.liveEntry(id);
    if (!entry || !isRecord(fields)) return;
    const target = entry.message as unknown as Record<string, unknown>;
    let changed = false;
    for (const key of MESSAGE_FIELDS) {
      if (key in fields) {
        target[key] = fields[key];
        changed = true;
      }
    }
    if (changed) this.emit({ kind: "fields", id: entry.message.id });
  }

  private addPart(id: unknown, index: unknown, raw: unknown): void {
    const entry = this.liveEntry(id);
    const part = normalizePart(raw);
    if (!entry || !part || typeof index !== "number") return;
    const parts = entry.message.parts;
    if (!Number.isInteger(index) || index < 0 || index > parts.length) return;
    const old = parts[index];
    if (old?.kind === "tool_call") entry.calls.delete(old.tool_call_id);
    parts[index] = part; // at the end: added; before it (a repeat): replaced
    if (part.kind === "tool_call") entry.calls.set(part.tool_call_id, index);
    this.emit({ kind: "part", id: entry.message.id, index });
  }

  private appendText(id: unknown, index: unknown, text: unknown): void {
    const entry = this.liveEntry(id);
    if (!entry || typeof index !== "number" || typeof text !== "string") return;
    const part = entry.message.parts[index];
    if (!part || (part.kind !== "text" && part.kind !== "reasoning")) return;
    part.text += text;
    this.emit({ kind: "text", id: entry.message.id, index });
  }

  private appendAnswer(id: unknown, index: unknown, text: unknown, patches: unknown): void {
    const entry = this.liveEntry(id);
    if (!entry || typeof index !== "number" || typeof text !== "string" || !Array.isArray(patches)) return;
    const part = entry.message.parts[index];
    if (!isAnswerPart(part)) return;
    part.text += text;
    let applied: ArgPatch[] | null = patches as ArgPatch[];
    try {
      applyPatches(part.answer.parsed, applied);
    } catch (err) {
      console.warn("ai_widgets: answer patch does not apply", err);
      applied = null; // the card re-renders from the parse
    }
    this.emit({ kind: "answer", id: entry.message.id, index, patches: applied });
  }

  private call(entry: Live, callId: unknown): [ToolCallPart, number] | undefined {
    if (typeof callId !== "string") return undefined;
    const index = entry.calls.get(callId);
    if (index === undefined) return undefined;
    const part = entry.message.parts[index];
    return part?.kind === "tool_call" ? [part, index] : undefined;
  }

  private patchArgs(id: unknown, callId: unknown, patches: unknown): void {
    const entry = this.liveEntry(id);
    const found = entry && this.call(entry, callId);
    if (!entry || !found || !Array.isArray(patches)) return;
    const [part, index] = found;
    let applied: ArgPatch[] | null = patches as ArgPatch[];
    try {
      applyPatches(part.parsed_arguments, applied);
    } catch (err) {
      console.warn("ai_widgets: argument patch does not apply", err);
      applied = null; // the view re-renders from the value
    }
    this.emit({ kind: "args", id: entry.message.id, index, patches: applied });
  }

  private setCall(id: unknown, callId: unknown, fields: unknown): void {
    const entry = this.liveEntry(id);
    const found = entry && this.call(entry, callId);
    if (!entry || !found || !isRecord(fields)) return;
    const [part, index] = found;
    const target = part as unknown as Record<string, unknown>;
    for (const key of CALL_FIELDS) if (key in fields) target[key] = fields[key];
    setAfterStop(part, fields);
    this.emit({ kind: "call", id: entry.message.id, index });
  }

  /** Replaces the live state with the kernel's (answer to "sync"). */
  snapshot(list: unknown[]): void {
    const incoming = new Set<string>();
    for (const raw of list) if (isRecord(raw) && typeof raw.id === "string") incoming.add(raw.id);
    for (const id of this.live.keys()) {
      if (!incoming.has(id)) {
        this.delete(id);
        if (!this.isFinished(id)) this.emit({ kind: "message", id });
      }
    }
    for (const raw of list) this.start(raw);
  }
}
