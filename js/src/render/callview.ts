// What an agent tells about a call it runs (ACP): its title, the files it touches, text, diffs shown as diffs, and a
// terminal's command and output; and what the card's header shows of it (its title, kind and first file). Data only,
// shown as text.

import { lineDiff } from "../diff";
import { h, setHidden } from "../dom";
import type { CallView, CallViewItem } from "../types";

/** Icons for the kinds of call ACP names (`ToolKind`). */
const KIND_ICONS: Record<string, string> = {
  read: "📖",
  edit: "✏️",
  delete: "🗑️",
  move: "📦",
  search: "🔎",
  execute: "▶️",
  think: "💭",
  fetch: "🌐",
  switch_mode: "🔀",
  other: "🔧",
};

/** What a card's header shows of an agent's call: its title, its kind (a label, and an icon for a kind ACP names),
 * its first file (`path:line`, "+N" when there are more; left out when the title names it already) and all its files
 * (a tooltip). `null` when the view gives no title: the header keeps the tool's own. */
export interface CallHeading {
  title: string;
  kind: string | null;
  icon: string | null;
  location: string | null;
  locations: string | null;
}

export function callHeading(view: CallView | null | undefined): CallHeading | null {
  const title = typeof view?.title === "string" ? view.title.trim() : "";
  if (!view || !title) return null;
  const kind = typeof view.kind === "string" && view.kind ? view.kind : null;
  const files = (Array.isArray(view.locations) ? view.locations : []).filter((l) => typeof l?.path === "string" && l.path);
  const paths = files.map((l) => (typeof l.line === "number" ? `${l.path}:${l.line}` : l.path));
  let location: string | null = null;
  if (files.length) {
    const more = files.length > 1 ? `+${files.length - 1}` : "";
    // "Write /w/a.txt" names its file: the header does not say it twice (a line number still shows).
    const named = typeof files[0].line !== "number" && title.includes(files[0].path);
    location = named ? more || null : more ? `${paths[0]} ${more}` : paths[0];
  }
  return {
    title,
    kind,
    icon: kind ? (KIND_ICONS[kind] ?? null) : null,
    location,
    locations: paths.length ? paths.join("\n") : null,
  };
}

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
