// Defensive shaping of messages from the kernel: the renderers can then rely on the basic shape.
// Never mutates its input (finished messages belong to their models).

import { isTypedAnswer, normalizeAnswer } from "./answer";
import type { BenchEntry, JsonObject, Message, Part, PatchOp } from "./types";

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function normalizePart(part: unknown): Part | null {
  if (!isRecord(part)) return null;
  switch (part.kind) {
    case "text":
      if (part.answer !== undefined && part.answer !== null && !isTypedAnswer(part.answer)) {
        return { ...part, text: String(part.text ?? ""), answer: normalizeAnswer(part.answer) } as Part;
      }
      return typeof part.text === "string" ? (part as unknown as Part) : ({ ...part, text: String(part.text ?? "") } as Part);
    case "reasoning":
      return typeof part.text === "string" ? (part as unknown as Part) : ({ ...part, text: String(part.text ?? "") } as Part);
    case "tool_call": {
      if (typeof part.tool_call_id !== "string") return null;
      const ok = isRecord(part.parsed_arguments) && typeof part.tool_name === "string" && typeof part.state === "string";
      if (ok) return part as unknown as Part;
      return {
        ...part,
        tool_name: String(part.tool_name ?? ""),
        state: typeof part.state === "string" ? part.state : "pending",
        parsed_arguments: isRecord(part.parsed_arguments) ? (part.parsed_arguments as JsonObject) : {},
      } as Part;
    }
    case "plan":
      // An agent's checklist: kept (so the parts' indices stay the kernel's), its entries shaped for the view.
      return Array.isArray(part.entries) ? (part as unknown as Part) : { kind: "plan", entries: [] };
    case "file":
      // A file of a user message: a chip. Its fields are shown as text (or a raster thumbnail) by the renderer.
      return typeof part.media_type === "string" ? (part as unknown as Part) : ({ ...part, media_type: "application/octet-stream" } as Part);
    default:
      return null;
  }
}

export function normalizeMessage(message: unknown): Message | null {
  if (!isRecord(message) || typeof message.id !== "string") return null;
  const raw = Array.isArray(message.parts) ? message.parts : [];
  let changed = raw !== message.parts || typeof message.index !== "number";
  const parts: Part[] = [];
  for (const p of raw) {
    const n = normalizePart(p);
    if (n !== p) changed = true;
    if (n) parts.push(n);
  }
  if (!changed) return message as unknown as Message;
  return {
    ...(message as unknown as Message),
    index: typeof message.index === "number" ? message.index : Number.MAX_SAFE_INTEGER,
    parts,
  };
}

/** How many elements each op has: a tuple of another length is not that op. */
export const OP_LENGTHS: Record<PatchOp[0], number> = { start: 2, msg: 3, part: 4, text: 4, answer: 5, args: 4, call: 4, finish: 3, clear: 1, cut: 2 };

/** `raw` as a patch op, or null when it is not one (checked once, where ops arrive). */
export function asPatchOp(raw: unknown): PatchOp | null {
  if (!Array.isArray(raw) || typeof raw[0] !== "string") return null;
  const length = OP_LENGTHS[raw[0] as PatchOp[0]];
  if (length === undefined || raw.length !== length) return null;
  const [kind] = raw;
  if (kind === "answer") {
    const ok = typeof raw[1] === "string" && typeof raw[2] === "number" && typeof raw[3] === "string" && Array.isArray(raw[4]);
    return ok ? (raw as PatchOp) : null;
  }
  const ok =
    kind === "start" || kind === "clear"
      ? true
      : kind === "finish" || kind === "cut"
        ? typeof raw[1] === "number"
        : typeof raw[1] === "string" &&
          (kind === "msg"
            ? typeof raw[2] === "object" && raw[2] !== null
            : kind === "part" || kind === "text"
              ? typeof raw[2] === "number" && (kind === "part" || typeof raw[3] === "string")
              : typeof raw[2] === "string" && (kind === "args" ? Array.isArray(raw[3]) : typeof raw[3] === "object" && raw[3] !== null));
  return ok ? (raw as PatchOp) : null;
}

/** A bench entry as the renderers expect it, or null when it has no id or tool. */
export function normalizeBenchEntry(raw: unknown): BenchEntry | null {
  if (!isRecord(raw) || typeof raw.id !== "string" || !raw.id || typeof raw.tool_name !== "string") return null;
  const errors: Record<string, string> = {};
  if (isRecord(raw.errors)) for (const [k, v] of Object.entries(raw.errors)) if (typeof v === "string") errors[k] = v;
  const message = raw.message === null || raw.message === undefined ? null : normalizeMessage(raw.message);
  return {
    id: raw.id,
    tool_name: raw.tool_name,
    arguments: isRecord(raw.arguments) ? (raw.arguments as JsonObject) : {},
    source: typeof raw.source === "string" ? raw.source : null,
    by_app: raw.by_app === true,
    message,
    running: raw.running === true,
    errors,
    error: typeof raw.error === "string" && raw.error ? raw.error : null,
    attempt: typeof raw.attempt === "number" ? raw.attempt : 0,
  };
}
