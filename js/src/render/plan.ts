// An agent's plan (ACP): a checklist whose entries the agent replaces whole as it works.

import { h } from "../dom";
import type { Part, PlanEntry, PlanPart } from "../types";
import type { PartView } from "./parts";

const MARKS: Record<string, string> = { completed: "\u2611", in_progress: "\u25d0", pending: "\u2610" };
/** What each mark says, for a screen reader and a tooltip (the glyphs alone name no status). */
const SAID: Record<string, string> = { completed: "done", in_progress: "in progress", pending: "to do" };

/** The plan as a list: each entry's mark (done, in progress, to do) and its text, the count done in the title. */
export class PlanPartView implements PartView {
  readonly kind = "plan" as const;
  readonly el = h("div", "aiw-part aiw-plan");
  private readonly title = h("div", "aiw-section-label");
  private readonly list = h("ul", "aiw-plan-entries");
  private shown = ""; // the entries shown: an update that changes none touches nothing

  constructor(part: PlanPart) {
    this.el.append(this.title, this.list);
    this.update(part);
  }

  update(part: Part): void {
    const entries = ((part as PlanPart).entries ?? []).filter((e): e is PlanEntry => typeof e?.content === "string");
    const key = JSON.stringify(entries.map((e) => [e.content, e.status]));
    if (key === this.shown) return;
    this.shown = key;
    const done = entries.filter((e) => e.status === "completed").length;
    this.title.textContent = `Plan \u00b7 ${done} of ${entries.length} done`;
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const item = h("li", "aiw-plan-entry");
        item.dataset.status = String(entry.status);
        const status = Object.prototype.hasOwnProperty.call(MARKS, entry.status) ? entry.status : "pending";
        const mark = h("span", "aiw-plan-mark", MARKS[status]);
        mark.setAttribute("role", "img");
        mark.setAttribute("aria-label", SAID[status]);
        mark.title = SAID[status];
        item.append(mark, ` ${entry.content}`);
        return item;
      }),
    );
  }
}
