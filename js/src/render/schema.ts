// Reading a tool's JSON Schema for a form: what kind of field each parameter is, its choices, default and hint.
// Local `$ref`s are followed; `anyOf`/`oneOf` with a null branch and `type: [x, "null"]` are an optional x, and one
// whose every branch is a `const` a choice.

import { isRecord } from "../normalize";
import type { Json, JsonObject } from "../types";

export type Kind = "string" | "number" | "integer" | "boolean" | "enum" | "list" | "json";
/** The kinds a list editor holds (one input per item). */
export type ItemKind = "string" | "number" | "integer";

export interface FieldSpec {
  kind: Kind;
  /** For "list": the items' kind. */
  items?: ItemKind;
  /** For "enum": the choices. */
  options?: Json[];
  /** For "json": the JSON type the value must have ("object", "array"), if one. */
  json?: "object" | "array";
  description: string;
  hasDefault: boolean;
  default?: Json;
}

const MAX_REFS = 16;

/** `node` with a local `$ref` (`#/$defs/X`, `#/definitions/X`) followed, the node's own keys kept over it. */
export function resolveRef(node: Json | undefined, root: JsonObject): JsonObject {
  let current: JsonObject = isRecord(node) ? (node as JsonObject) : {};
  for (let i = 0; i < MAX_REFS && typeof current.$ref === "string"; i++) {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(current.$ref);
    const defs = match ? root[match[1]] : undefined;
    const target = match && isRecord(defs) ? (defs as JsonObject)[match[2]] : undefined;
    const { $ref: _ref, ...rest } = current;
    current = isRecord(target) ? { ...(target as JsonObject), ...rest } : rest;
  }
  return current;
}

/** The schema without its null alternative: `anyOf: [X, {type: null}]` is X (keeping the outer description and
 * default), `type: [x, "null"]` is x. */
function withoutNull(node: JsonObject, root: JsonObject): JsonObject {
  const alternatives = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null;
  if (alternatives) {
    const rest = alternatives.map((a) => resolveRef(a, root)).filter((a) => a.type !== "null");
    if (rest.length === 1) {
      const { anyOf: _a, oneOf: _o, ...outer } = node;
      return { ...rest[0], ...outer };
    }
  }
  if (Array.isArray(node.type)) {
    const kinds = node.type.filter((t) => t !== "null");
    if (kinds.length === 1) return { ...node, type: kinds[0] };
  }
  return node;
}

function scalarKind(node: JsonObject): ItemKind | "boolean" | null {
  const t = node.type;
  return t === "string" || t === "number" || t === "integer" || t === "boolean" ? t : null;
}

/** The choices of a `oneOf`/`anyOf` whose every alternative is one `const` (MCP's titled single-select), else null. */
function constChoices(node: JsonObject, root: JsonObject): Json[] | null {
  const alternatives = Array.isArray(node.oneOf) ? node.oneOf : Array.isArray(node.anyOf) ? node.anyOf : null;
  if (!alternatives || alternatives.length === 0) return null;
  const choices = alternatives.map((a) => resolveRef(a, root));
  if (!choices.every((c) => Object.prototype.hasOwnProperty.call(c, "const") && c.const !== null)) return null;
  return choices.map((c) => c.const as Json);
}

/** How a parameter is edited. */
export function fieldSpec(property: Json | undefined, root: JsonObject): FieldSpec {
  const node = withoutNull(resolveRef(property, root), root);
  const spec: FieldSpec = {
    kind: "json",
    description: typeof node.description === "string" ? node.description : "",
    hasDefault: Object.prototype.hasOwnProperty.call(node, "default"),
    default: node.default,
  };
  if (Array.isArray(node.enum) && node.enum.some((o) => o !== null)) {
    return { ...spec, kind: "enum", options: node.enum.filter((o) => o !== null) };
  }
  if (Object.prototype.hasOwnProperty.call(node, "const") && node.const !== null) {
    return { ...spec, kind: "enum", options: [node.const as Json] };
  }
  const consts = constChoices(node, root);
  if (consts) return { ...spec, kind: "enum", options: consts };
  const scalar = scalarKind(node);
  if (scalar) return { ...spec, kind: scalar };
  if (node.type === "array") {
    const items = withoutNull(resolveRef(node.items, root), root);
    const item = scalarKind(items);
    if (item && item !== "boolean" && !Array.isArray(items.enum)) return { ...spec, kind: "list", items: item };
    return { ...spec, json: "array" };
  }
  if (node.type === "object" || isRecord(node.properties)) return { ...spec, json: "object" };
  return spec;
}

/** A placeholder for a JSON field: the object's required keys, or an empty list. */
export function jsonPlaceholder(property: Json | undefined, root: JsonObject): string {
  const node = withoutNull(resolveRef(property, root), root);
  if (node.type === "array") return "[ ]";
  const keys = Array.isArray(node.required) ? node.required.filter((k): k is string => typeof k === "string") : [];
  return keys.length ? `{${keys.map((k) => `"${k}": …`).join(", ")}}` : "{ }";
}
