// Argument patches: mirrors `ai_widgets.arguments.apply_patches` exactly (docs/protocol.md, op "args").
//
// Each patch is `[op, path, value]`. "set" puts `value` at `path` (replacing what is there, or appending when the
// last step equals the length of the list it points into); "append" appends the string `value` to the string at
// `path`. A path that does not exist in the target throws, as the Python side raises KeyError / IndexError;
// patches before the failing one stay applied, as in Python.

import type { ArgPatch } from "./types";

export class PatchError extends Error {}

const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

function isObject(node: unknown): node is Record<string, unknown> {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}

/** One step down from `node`; throws where Python would raise. */
function child(node: unknown, step: string | number): unknown {
  if (Array.isArray(node)) {
    if (typeof step !== "number" || !Number.isInteger(step) || step < 0 || step >= node.length) {
      throw new PatchError(`no index ${JSON.stringify(step)} in a list of ${node.length}`);
    }
    return node[step];
  }
  if (isObject(node)) {
    if (typeof step !== "string" || !hasOwn(node, step)) {
      throw new PatchError(`no key ${JSON.stringify(step)}`);
    }
    return node[step];
  }
  throw new PatchError(`cannot step into ${node === null ? "null" : typeof node}`);
}

/** A fresh copy of a JSON container (never share one between mirrors); scalars as they are. */
function fresh(value: unknown): unknown {
  if (typeof value === "object" && value !== null) return JSON.parse(JSON.stringify(value));
  return value;
}

function put(node: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    // Assignment would set the prototype; a JSON key "__proto__" is an ordinary own property.
    Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    node[key] = value;
  }
}

/** Applies one patch to `target` in place. */
export function applyPatch(target: Record<string, unknown>, patch: ArgPatch): void {
  if (!Array.isArray(patch) || patch.length < 3 || !Array.isArray(patch[1]) || patch[1].length === 0) {
    throw new PatchError("malformed patch");
  }
  const [op, path, value] = patch;
  let node: unknown = target;
  for (let i = 0; i < path.length - 1; i++) node = child(node, path[i]);
  const last = path[path.length - 1];
  if (op === "append") {
    const current = child(node, last);
    if (typeof current !== "string" || typeof value !== "string") throw new PatchError("append needs two strings");
    if (Array.isArray(node)) node[last as number] = current + value;
    else put(node as Record<string, unknown>, last as string, current + value);
    return;
  }
  if (op !== "set") throw new PatchError(`unknown patch op ${JSON.stringify(op)}`);
  const copy = fresh(value);
  if (Array.isArray(node)) {
    if (typeof last !== "number" || !Number.isInteger(last) || last < 0 || last > node.length) {
      throw new PatchError(`no index ${JSON.stringify(last)} in a list of ${node.length}`);
    }
    if (last === node.length) node.push(copy);
    else node[last] = copy;
    return;
  }
  if (isObject(node)) {
    if (typeof last !== "string") throw new PatchError(`no key ${JSON.stringify(last)}`);
    put(node, last, copy);
    return;
  }
  throw new PatchError(`cannot set inside ${node === null ? "null" : typeof node}`);
}

/** Applies patches in order (like Python's `apply_patches`). */
export function applyPatches(target: Record<string, unknown>, patches: readonly ArgPatch[]): void {
  for (const patch of patches) applyPatch(target, patch);
}

/** A stable map key for a path (keys and indexes stay distinct: ["0"] is not [0]). */
export function pathKey(path: readonly (string | number)[]): string {
  return JSON.stringify(path);
}
