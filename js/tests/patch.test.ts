import fixtures from "./fixtures/patches.json";
import { describe, expect, it } from "vitest";
import { PatchError, applyPatch, applyPatches } from "../src/patch";
import type { ArgPatch } from "../src/types";

describe("argument patches", () => {
  it("sets top-level and nested keys, and array items by index", () => {
    const t: Record<string, unknown> = {};
    applyPatches(t, [
      ["set", ["city"], "Pa"],
      ["append", ["city"], "ris"],
      ["set", ["days"], 3],
      ["set", ["opts"], {}],
      ["set", ["opts", "units"], "metric"],
      ["set", ["list"], []],
      ["set", ["list", 0], "a"],
      ["set", ["list", 1], { x: [] }],
      ["set", ["list", 1, "x", 0], true],
      ["append", ["list", 0], "b"],
      ["set", ["list", 0], null],
    ]);
    expect(t).toEqual({ city: "Paris", days: 3, opts: { units: "metric" }, list: [null, { x: [true] }] });
  });

  it("replaces an existing key in place (a duplicate key: the last wins)", () => {
    const t: Record<string, unknown> = { a: "first", b: 1 };
    applyPatch(t, ["set", ["a"], "second"]);
    expect(Object.keys(t)).toEqual(["a", "b"]);
    expect(t.a).toBe("second");
  });

  it("copies containers so mirrors never share them", () => {
    const value = { inner: [1] };
    const a: Record<string, unknown> = {};
    applyPatch(a, ["set", ["v"], value]);
    (value.inner as number[]).push(2);
    expect(a.v).toEqual({ inner: [1] });
  });

  it("throws where Python raises, keeping the patches before", () => {
    const t: Record<string, unknown> = { s: "x", l: [1] };
    expect(() => applyPatch(t, ["append", ["missing"], "y"])).toThrow(PatchError);
    expect(() => applyPatch(t, ["set", ["missing", "deeper"], 1])).toThrow(PatchError);
    expect(() => applyPatch(t, ["set", ["l", 5], 1])).toThrow(PatchError);
    expect(() => applyPatch(t, ["set", ["l", "0"], 1])).toThrow(PatchError);
    expect(() => applyPatch(t, ["append", ["l", 0], "y"])).toThrow(PatchError);
    expect(() => applyPatch(t, ["set", [], 1])).toThrow(PatchError);
    expect(() => applyPatches(t, [["set", ["ok"], 1], ["append", ["nope"], "z"]])).toThrow(PatchError);
    expect(t.ok).toBe(1);
  });

  it("treats __proto__ and prototype names as ordinary keys", () => {
    const t: Record<string, unknown> = {};
    applyPatches(t, [
      ["set", ["__proto__"], { polluted: "x" }],
      ["set", ["__proto__", "polluted"], "yes"],
      ["set", ["constructor"], "c"],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(t)).toBe(Object.prototype);
    expect(Object.keys(t)).toEqual(["__proto__", "constructor"]);
    expect(() => applyPatch({}, ["append", ["toString"], "x"])).toThrow(PatchError);
  });

  it("reproduces the Python parser's view after every feed (fixtures from ai_widgets.arguments)", () => {
    const cases = fixtures as unknown as {
      text: string;
      error: string | null;
      steps: { patches: ArgPatch[]; value: unknown }[];
    }[];
    expect(cases.length).toBeGreaterThan(10);
    let steps = 0;
    for (const c of cases) {
      const mirror: Record<string, unknown> = {};
      for (const step of c.steps) {
        applyPatches(mirror, step.patches);
        expect(mirror).toEqual(step.value);
        steps++;
      }
      // A text the parser refuses (a duplicate key) keeps the view as it was before the refusal.
      if (c.error === null) expect(mirror).toEqual(JSON.parse(c.text));
      else expect(c.error).toContain("duplicate key");
    }
    expect(cases.filter((c) => c.error !== null).length).toBeGreaterThan(0);
    expect(steps).toBeGreaterThan(500);
  });

  it("builds random values from streamed patches (property-style)", () => {
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    const gen = (depth: number): unknown => {
      const k = rnd(depth > 3 ? 3 : 6);
      if (k === 0) return "s".repeat(rnd(5)) + "é\n".repeat(rnd(2));
      if (k === 1) return rnd(1000) - 500;
      if (k === 2) return [true, false, null][rnd(3)];
      if (k === 3) return Object.fromEntries(Array.from({ length: rnd(4) }, (_, i) => [`k${i}`, gen(depth + 1)]));
      return Array.from({ length: rnd(4) }, () => gen(depth + 1));
    };
    // The patches a streaming parser would emit: containers open empty, strings grow by appends.
    const emit = (value: unknown, path: (string | number)[], out: ArgPatch[]): void => {
      if (typeof value === "string") {
        out.push(["set", path, value.slice(0, 1)]);
        for (let i = 1; i < value.length; i += 2) out.push(["append", path, value.slice(i, i + 2)]);
      } else if (Array.isArray(value)) {
        out.push(["set", path, []]);
        value.forEach((v, i) => emit(v, [...path, i], out));
      } else if (value && typeof value === "object") {
        out.push(["set", path, {}]);
        for (const [k, v] of Object.entries(value)) emit(v, [...path, k], out);
      } else {
        out.push(["set", path, value]);
      }
    };
    for (let round = 0; round < 300; round++) {
      const target = Object.fromEntries(Array.from({ length: 1 + rnd(4) }, (_, i) => [`a${i}`, gen(0)]));
      const patches: ArgPatch[] = [];
      for (const [k, v] of Object.entries(target)) emit(v, [k], patches);
      const mirror: Record<string, unknown> = {};
      applyPatches(mirror, patches);
      expect(mirror).toEqual(target);
    }
  });
});
