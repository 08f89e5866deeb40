// Defensive shaping of messages from the kernel: the renderers can then rely on the basic shape.
// Never mutates its input (finished messages belong to their models).

import type { JsonObject, Message, Part } from "./types";

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function normalizePart(part: unknown): Part | null {
  if (!isRecord(part)) return null;
  switch (part.kind) {
    case "text":
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
