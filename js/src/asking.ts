// What a call waiting for the person's input needs besides the DOM (pure logic): the form's starting values from its
// flat schema's defaults, a link checked (http(s) only) and split so its domain can be shown emphasised, and the
// compact words for what the person answered.

import { isRecord } from "./normalize";
import type { InputAction, InputRequest, Json, JsonObject } from "./types";

/** The form's starting values: each field's `default`, where the schema gives one. */
export function formDefaults(schema: Json | null | undefined): JsonObject {
  const properties = isRecord(schema) && isRecord((schema as JsonObject).properties) ? ((schema as JsonObject).properties as JsonObject) : {};
  const out: JsonObject = {};
  for (const [name, spec] of Object.entries(properties)) {
    if (isRecord(spec) && Object.prototype.hasOwnProperty.call(spec, "default")) out[name] = (spec as JsonObject).default;
  }
  return out;
}

/** A link split for showing: what comes before its host, the host, and the rest. */
export interface LinkParts {
  href: string;
  before: string;
  domain: string;
  after: string;
}

/** `url` split around its host when it is a plain http(s) URL, else null (javascript:, data:, a relative path, a
 * URL with credentials or characters a browser would read otherwise are refused). */
export function linkParts(url: unknown): LinkParts | null {
  if (typeof url !== "string" || url.length > 4000 || /[\u0000-\u0020"'<>`\\\u007f]/.test(url)) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || !parsed.hostname) return null;
  if (parsed.username || parsed.password) return null; // "https://bank.com@evil.example" hides its real host
  if (!/^https?:\/\//i.test(url)) return null; // "https:evil.example" is parsed, but is not what it shows
  const domain = parsed.hostname;
  const start = url.toLowerCase().indexOf(domain.toLowerCase(), url.indexOf("//") + 2);
  if (start < 0) return { href: parsed.href, before: `${parsed.protocol}//`, domain, after: parsed.href.slice(parsed.origin.length) };
  return { href: parsed.href, before: url.slice(0, start), domain: url.slice(start, start + domain.length), after: url.slice(start + domain.length) };
}

/** What the card says once the person answered (compact, in the header's words). */
export const ANSWER_LABELS: Record<InputAction, string> = {
  accept: "You answered",
  decline: "You declined to answer",
  cancel: "You cancelled the question",
};

/** A request from the wire, or null when it is not one this card can show. */
export function inputRequestOf(value: unknown): InputRequest | null {
  if (!isRecord(value)) return null;
  const v = value as Record<string, unknown>;
  const mode = v.mode === "url" ? "url" : v.mode === "form" ? "form" : null;
  if (!mode) return null;
  return {
    message: typeof v.message === "string" ? v.message : "",
    mode,
    schema: isRecord(v.schema) ? (v.schema as JsonObject) : null,
    url: typeof v.url === "string" ? v.url : null,
    domain: typeof v.domain === "string" ? v.domain : null,
    asker: typeof v.asker === "string" ? v.asker : null,
  };
}
