// An agent's plan (ACP): a checklist whose entries the agent replaces whole as it works.

import { h } from "../dom";
import type { Part, PlanEntry, PlanPart } from "../types";
import type { PartView } from "./parts";

const MARKS: Record<string, string> = { completed: "\u2611", in_progress: "\u25d0", pending: "\u2610" };

/** The plan as a list: each entry's mark (done, in progress, to do) and its text, the count done in the title. */
export class PlanPartView implements PartView {
  readonly kind = "plan" as const;
  readonly el = h("div", "aiw-part aiw-plan");
  private readonly title = h("div", "aiw-section-label");
  private readonly list = h("ul", "aiw-plan-entries");

  constructor(part: PlanPart) {
    this.el.append(this.title, this.list);
    this.update(part);
  }

  update(part: Part): void {
    const entries = ((part as PlanPart).entries ?? []).filter((e): e is PlanEntry => typeof e?.content === "string");
    const done = entries.filter((e) => e.status === "completed").length;
    this.title.textContent = `Plan \u00b7 ${done} of ${entries.length} done`;
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const item = h("li", "aiw-plan-entry");
        item.dataset.status = String(entry.status);
        item.append(h("span", "aiw-plan-mark", MARKS[entry.status] ?? MARKS.pending), ` ${entry.content}`);
        return item;
      }),
    );
  }
}
