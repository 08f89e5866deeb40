// An agent's plan part: kept by the normaliser (the parts' indices stay the kernel's) and shown as a checklist that
// updates in place.

import { describe, expect, it } from "vitest";
import { normalizeMessage, normalizePart } from "../src/normalize";
import { PlanPartView } from "../src/render/plan";
import type { PlanPart } from "../src/types";
import { $, FakeModel, assistant, mount } from "./helpers";

const plan = (statuses: PlanPart["entries"][number]["status"][]): PlanPart => ({
  kind: "plan",
  entries: statuses.map((status, i) => ({ content: `step ${i + 1}`, status, priority: "medium" })),
});

describe("plan parts", () => {
  it("are kept where they are, so a later part keeps its index", () => {
    const message = normalizeMessage({ id: "m", index: 0, parts: [plan(["pending"]), { kind: "text", text: "hi" }] });
    expect(message?.parts.map((p) => p.kind)).toEqual(["plan", "text"]);
    expect(normalizePart({ kind: "plan", entries: "nope" })).toEqual({ kind: "plan", entries: [] });
  });

  it("show each entry's status and the count done, updated in place", () => {
    const view = new PlanPartView(plan(["completed", "in_progress", "pending"]));
    expect(view.el.textContent).toContain("1 of 3 done");
    const statuses = () => [...view.el.querySelectorAll("li")].map((li) => li.dataset.status);
    expect(statuses()).toEqual(["completed", "in_progress", "pending"]);
    const element = view.el;
    view.update(plan(["completed", "completed", "completed"]));
    expect(view.el).toBe(element);
    expect(view.el.textContent).toContain("3 of 3 done");
    expect(statuses()).toEqual(["completed", "completed", "completed"]);
  });
});

describe("the plan in the chat", () => {
  it("updates in place as the agent replaces it, each mark saying its status", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [plan(["in_progress", "pending", "pending"])])]);
    view.flush();
    const shown = $(root, ".aiw-plan");
    expect(shown.textContent).toContain("0 of 3 done");
    model.patch(["part", "a1", 0, plan(["completed", "in_progress", "pending"])]);
    view.flush();
    expect($(root, ".aiw-plan")).toBe(shown);
    expect(shown.textContent).toContain("1 of 3 done");
    const marks = [...shown.querySelectorAll<HTMLElement>(".aiw-plan-mark")];
    expect(marks.map((m) => [m.getAttribute("role"), m.getAttribute("aria-label"), m.title])).toEqual([
      ["img", "done", "done"],
      ["img", "in progress", "in progress"],
      ["img", "to do", "to do"],
    ]);
  });

  it("shows a status it does not know as to do, and leaves the list alone when nothing changed", () => {
    const odd = { kind: "plan", entries: [{ content: "x", status: "toString", priority: "low" }] } as unknown as PlanPart;
    const view = new PlanPartView(odd);
    const mark = view.el.querySelector<HTMLElement>(".aiw-plan-mark")!;
    expect(mark.textContent).toBe("\u2610");
    expect(mark.getAttribute("aria-label")).toBe("to do");
    view.update(odd);
    expect(view.el.querySelector(".aiw-plan-mark")).toBe(mark);
  });
});

const styles = import.meta.glob<string>("../src/styles/{agent,base}.css", { eager: true, query: "?raw", import: "default" });

describe("the plan's and the agent's styles", () => {
  it("take every color from the theme's variables, which follow JupyterLab's light and dark themes", () => {
    const css = styles["../src/styles/agent.css"];
    const colors = [...css.matchAll(/(?:^|[\s;{])(color|background(?:-color)?|border(?:-color)?)\s*:\s*([^;]+);/g)].map((m) => m[2]);
    expect(colors.length).toBeGreaterThan(5);
    for (const value of colors) expect(value).toMatch(/var\(--aiw-[a-z-]+\)/);
    expect(css).not.toMatch(/#[0-9a-f]{3,8}\b|rgb\(|hsl\(/i);
    const base = styles["../src/styles/base.css"];
    for (const name of new Set([...css.matchAll(/var\((--aiw-[a-z-]+)\)/g)].map((m) => m[1]))) {
      const defined = base.match(new RegExp(`${name}:\\s*([^;]+);`));
      expect(defined, name).not.toBeNull();
      if (/color|fg|bg|border|accent|success|error/.test(name)) expect(defined![1], name).toMatch(/var\(--jp-|var\(--aiw-/);
    }
  });
});
