// An agent's plan part: kept by the normaliser (the parts' indices stay the kernel's) and shown as a checklist that
// updates in place.

import { describe, expect, it } from "vitest";
import { normalizeMessage, normalizePart } from "../src/normalize";
import { PlanPartView } from "../src/render/plan";
import type { PlanPart } from "../src/types";

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
