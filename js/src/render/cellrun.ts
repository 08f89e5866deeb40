// A call's code run as a notebook cell (`outcome.cell`), shown as the notebook shows a cell's outputs, in order:
// printed text (stderr tinted), displays and the value through the display renderer (sanitised), the error with
// its traceback under a fold, where it was stopped; then what it changed, as chips. Every text is set as text.

import { h } from "../dom";
import { isRecord } from "../normalize";
import type { CellOutput, CellRun, Outcome } from "../types";
import type { WidgetHost } from "../widgets";
import { renderDisplay } from "./display";

const CHANGES: [keyof CellRun & ("created" | "rebound" | "deleted" | "mutated"), string, string][] = [
  ["created", "Created", "New names this run bound"],
  ["rebound", "Rebound", "Names this run bound to another value"],
  ["deleted", "Deleted", "Names this run removed"],
  ["mutated", "Changed in place", "Values this run changed in place: this cannot be undone"],
];

function names(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((n): n is string => typeof n === "string") : [];
}

/** The outcome's cell run, when it has a well-formed one (the code a string), else null. */
export function cellOf(outcome: Outcome | null | undefined): CellRun | null {
  const cell = outcome?.cell;
  return isRecord(cell) && typeof cell.code === "string" ? cell : null;
}

/** Whether the run changed names that Undo can put back (created, rebound or deleted ones). */
export function undoable(cell: CellRun): boolean {
  return names(cell.created).length + names(cell.rebound).length + names(cell.deleted).length > 0;
}

/** The last line of a traceback that says something: the exception's type and message. */
function errorLine(traceback: string): string {
  const lines = traceback.split("\n").map((line) => line.trimEnd()).filter(Boolean);
  return lines[lines.length - 1] ?? "Error";
}

function outputElement(output: CellOutput, widgets: WidgetHost | null): HTMLElement | null {
  const text = typeof output.text === "string" ? output.text : "";
  switch (output.kind) {
    case "stream": {
      const pre = h("pre", "aiw-cell-stream", text);
      pre.dataset.name = output.name === "stderr" ? "stderr" : "stdout";
      return text ? pre : null;
    }
    case "display":
    case "result": {
      const shown = isRecord(output.display) ? renderDisplay(output.display, widgets) : null;
      if (!shown) return null;
      shown.classList.add(output.kind === "result" ? "aiw-cell-result" : "aiw-cell-display");
      return shown;
    }
    case "error": {
      const details = h("details", "aiw-cell-error");
      details.append(h("summary", undefined, errorLine(text)), h("pre", "aiw-cell-traceback", text));
      return details;
    }
    default:
      return null;
  }
}

/** The cell's outputs in order, and where it was stopped; null when it showed nothing. */
export function renderCellOutputs(cell: CellRun, widgets: WidgetHost | null): HTMLElement | null {
  const el = h("div", "aiw-cell-outputs");
  let last: HTMLElement | null = null;
  for (const output of Array.isArray(cell.outputs) ? cell.outputs : []) {
    if (!isRecord(output)) continue;
    // Consecutive prints to one stream read as one block, as in the notebook.
    if (output.kind === "stream" && last?.classList.contains("aiw-cell-stream")) {
      const name = output.name === "stderr" ? "stderr" : "stdout";
      if (last.dataset.name === name && typeof output.text === "string") {
        last.textContent += output.text;
        continue;
      }
    }
    const shown = outputElement(output, widgets);
    if (shown) el.append(shown);
    last = shown;
  }
  if (typeof cell.stopped_at === "string" && cell.stopped_at) {
    el.append(h("div", "aiw-cell-stopped", `Stopped at ${cell.stopped_at}.`));
  }
  return el.childElementCount ? el : null;
}

/** Whether the cell's outputs include its error (then the card need not show the outcome's traceback again). */
export function hasErrorOutput(cell: CellRun): boolean {
  return Array.isArray(cell.outputs) && cell.outputs.some((o) => isRecord(o) && o.kind === "error");
}

/** What the run changed, as chips by kind (the in-place ones marked as what cannot be undone); null: nothing. */
export function renderCellChanges(cell: CellRun): HTMLElement | null {
  const el = h("div", "aiw-cell-changes");
  el.setAttribute("aria-label", "What this run changed");
  for (const [key, label, title] of CHANGES) {
    const list = names(cell[key]);
    if (!list.length) continue;
    const group = h("div", "aiw-cell-change-group");
    group.dataset.change = key;
    const heading = h("span", "aiw-cell-change-label", key === "mutated" ? `${label} (cannot be undone):` : `${label}:`);
    heading.title = title;
    group.append(heading);
    for (const name of list) {
      const chip = h("code", "aiw-cell-chip", name);
      chip.dataset.change = key;
      if (key === "mutated") chip.title = "Changed in place: cannot be undone";
      group.append(chip);
    }
    el.append(group);
  }
  return el.childElementCount ? el : null;
}
