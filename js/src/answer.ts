// Typed answers (`output_type=`): the shape check of a text part's `answer` mark and what its card shows, as pure
// logic (the card itself is render/answer.ts). The kernel parses the answer's JSON as it streams, with the same
// lenient parser as a tool call's arguments, and sends the parse's patches: the card fills in key by key.

import type { Json, JsonObject, TextPart, TypedAnswer } from "./types";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether `raw` has the shape of a typed answer's mark (then it is used as it is). */
export function isTypedAnswer(raw: unknown): raw is TypedAnswer {
  return (
    isObject(raw) &&
    typeof raw.type_name === "string" &&
    typeof raw.state === "string" &&
    isObject(raw.parsed) &&
    Array.isArray(raw.refused) &&
    raw.refused.every((r) => typeof r === "string") &&
    (raw.errors === null || typeof raw.errors === "string") &&
    (raw.parse_error === null || typeof raw.parse_error === "string")
  );
}

/** A well-formed copy of a malformed mark (never mutates its input). */
export function normalizeAnswer(raw: unknown): TypedAnswer {
  const r = isObject(raw) ? raw : {};
  return {
    type_name: typeof r.type_name === "string" ? r.type_name : "answer",
    state: typeof r.state === "string" ? r.state : "unchecked",
    parsed: isObject(r.parsed) ? (r.parsed as JsonObject) : {},
    value: r.value === undefined ? null : (r.value as Json),
    errors: typeof r.errors === "string" ? r.errors : null,
    refused: Array.isArray(r.refused) ? r.refused.filter((e): e is string => typeof e === "string") : [],
    parse_error: typeof r.parse_error === "string" ? r.parse_error : null,
  };
}

/** A text part that is a typed answer. */
export function isAnswerPart(part: unknown): part is TextPart & { answer: TypedAnswer } {
  return isObject(part) && part.kind === "text" && isObject(part.answer);
}

export type AnswerPhase = "streaming" | "valid" | "invalid" | "unchecked";

export interface AnswerDisplay {
  phase: AnswerPhase;
  /** The badge: where the answer is. */
  label: string;
  /** The object to show (the validated one once valid, else the parse so far), or null: show `text`. */
  value: Json | null;
  /** The text as the model wrote it, shown when it is not JSON. */
  text: string;
  /** Why this answer was refused (phase "invalid"). */
  errors: string | null;
  /** What each earlier answer was told, oldest first ("Answer 1 did not match City: …"). */
  refused: { title: string; errors: string }[];
}

/** What the card of a typed answer shows. `inProgress`: its message is still streaming. */
export function answerDisplay(part: TextPart & { answer: TypedAnswer }, inProgress: boolean): AnswerDisplay {
  const a = part.answer;
  const name = a.type_name;
  const phase: AnswerPhase =
    a.state === "valid" ? "valid" : a.state === "invalid" ? "invalid" : inProgress ? "streaming" : "unchecked";
  const label =
    phase === "valid"
      ? `✓ matches ${name}`
      : phase === "invalid"
        ? `✗ does not match ${name}`
        : phase === "streaming"
          ? a.refused.length
            ? `answering… (try ${a.refused.length + 1})`
            : "answering…"
          : "not checked";
  // The validated object once valid (it may differ from the text: defaults, coercions); the parse until then; the
  // text itself when it is not JSON.
  const value = phase === "valid" && a.value !== null ? a.value : a.parse_error === null ? a.parsed : null;
  return {
    phase,
    label,
    value,
    text: part.text,
    errors: phase === "invalid" ? a.errors : null,
    refused: a.refused.map((errors, i) => ({ title: `Answer ${i + 1} did not match ${name}`, errors })),
  };
}
