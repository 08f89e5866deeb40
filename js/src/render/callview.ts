// What an agent tells about a call it runs (ACP): its title, the files it touches, text, diffs shown as diffs, and a
// terminal's command and output. Data only, shown as text.

import { lineDiff } from "../diff";
import { h, setHidden } from "../dom";
import type { CallView, CallViewItem } from "../types";

/** The card's section for a call's view; hidden when the call has none. */
export class CallViewSection {
  readonly el = h("div", "aiw-call-view");
  private shown = "";

  constructor() {
    setHidden(this.el, true);
  }

  update(view: CallView | null | undefined): void {
    const key = view ? JSON.stringify(view) : "";
    if (key === this.shown) return;
    this.shown = key;
    setHidden(this.el, !view);
    if (!view) {
      this.el.replaceChildren();
      return;
    }
    const children: HTMLElement[] = [];
    if (view.title) children.push(h("div", "aiw-call-view-title", view.title));
    const paths = (view.locations ?? []).map((l) => (typeof l.line === "number" ? `${l.path}:${l.line}` : l.path));
    if (paths.length) children.push(h("div", "aiw-call-view-locations", paths.join("\n")));
    for (const item of view.content ?? []) children.push(renderItem(item));
    this.el.replaceChildren(...children);
  }
}

function renderItem(item: CallViewItem): HTMLElement {
  switch (item.type) {
    case "diff": {
      const box = h("div", "aiw-diff");
      box.append(h("div", "aiw-diff-path", item.old_text === null ? `${item.path} (new file)` : item.path));
      const body = h("pre", "aiw-diff-lines");
      for (const row of lineDiff(item.old_text, item.new_text)) {
        const mark = row.kind === "removed" ? "-" : row.kind === "added" ? "+" : row.kind === "skipped" ? "…" : " ";
        const line = h("div", "aiw-diff-line", `${mark} ${row.text}`);
        line.dataset.kind = row.kind;
        body.append(line);
      }
      box.append(body);
      return box;
    }
    case "terminal": {
      const box = h("div", "aiw-terminal");
      if (item.command) box.append(h("div", "aiw-terminal-command", `$ ${item.command}${item.cwd ? `   (in ${item.cwd})` : ""}`));
      box.append(h("pre", "aiw-terminal-output", item.output ?? ""));
      const exit = item.signal ? `killed by ${item.signal}` : typeof item.exit_code === "number" ? `exit code ${item.exit_code}` : "";
      if (exit) box.append(h("div", "aiw-terminal-exit", exit));
      return box;
    }
    default:
      return h("div", "aiw-call-view-text", String((item as { text?: unknown }).text ?? ""));
  }
}
