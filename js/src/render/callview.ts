// What an agent tells about a call it runs (ACP): its title, the files it touches, text, diffs shown as diffs, and a
// terminal's command and output; and what the card's header shows of it (its title, kind and first file). Data only,
// shown as text.

import { lineDiff } from "../diff";
import { h, setHidden } from "../dom";
import type { CallView, CallViewItem } from "../types";

/** The most characters of a terminal's output the card shows: its end (the kernel already bounds it). */
export const MAX_TERMINAL_CHARS = 50_000;
/** How close to the bottom (in pixels) a terminal's output counts as following its end. */
const AT_END_SLACK = 8;

type TerminalItem = Extract<CallViewItem, { type: "terminal" }>;

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

/** The last part of a path (`/w/src/a.py` → `a.py`; a directory's own name; the path itself when it has no other). */
function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : path;
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
    // The file's own name (and line): a whole path squeezed into a narrow header says nothing; the tooltip has it.
    const first = baseName(files[0].path) + (typeof files[0].line === "number" ? `:${files[0].line}` : "");
    location = named ? more || null : more ? `${first} ${more}` : first;
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
  private shape = "";
  private terminals: TerminalBox[] = [];

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
      this.shape = "";
      this.terminals = [];
      return;
    }
    const items = view.content ?? [];
    const shape = JSON.stringify({ ...view, content: items.map((i) => (i.type === "terminal" ? { t: i.terminal_id } : i)) });
    const live = items.filter((i): i is TerminalItem => i.type === "terminal");
    if (shape === this.shape) {
      // Only terminals changed (live output): update them in place, so their scroll and the diffs stay as they are.
      live.forEach((item, index) => this.terminals[index].update(item));
      return;
    }
    this.shape = shape;
    const kept = this.terminals;
    this.terminals = [];
    const children: HTMLElement[] = [];
    if (view.title) children.push(h("div", "aiw-call-view-title", view.title));
    // A file its diff shows already (under its path), or a terminal's directory, is not listed again.
    const diffed = new Set(items.flatMap((i) => (i.type === "diff" ? [i.path] : i.type === "terminal" && i.cwd ? [i.cwd] : [])));
    const paths = (view.locations ?? [])
      .filter((l) => typeof l.line === "number" || !diffed.has(l.path))
      .map((l) => (typeof l.line === "number" ? `${l.path}:${l.line}` : l.path));
    if (paths.length) children.push(h("div", "aiw-call-view-locations", paths.join("\n")));
    for (const item of items) {
      if (item.type === "terminal") {
        const box = kept.find((b) => b.id === item.terminal_id && !this.terminals.includes(b)) ?? new TerminalBox();
        this.terminals.push(box);
        children.push(box.el);
      } else {
        children.push(renderItem(item));
      }
    }
    this.el.replaceChildren(...children);
    live.forEach((item, index) => this.terminals[index].update(item));
  }
}

/** A terminal in a card: its command, where it runs, its output (the end, following it as it grows unless the
 * person scrolled up to read) and how it ended. Updated in place as its output streams. */
class TerminalBox {
  readonly el = h("div", "aiw-terminal");
  id = "";
  private readonly command = h("div", "aiw-terminal-command");
  private readonly cwd = h("div", "aiw-terminal-cwd");
  private readonly cut = h("div", "aiw-terminal-cut", "… earlier output not shown");
  private readonly output = h("pre", "aiw-terminal-output");
  private readonly exit = h("div", "aiw-terminal-exit");
  private following = true;
  private readAt = 0; // where the person scrolled to, when not following the end

  constructor() {
    this.el.append(this.command, this.cwd, this.cut, this.output, this.exit);
    this.output.addEventListener("scroll", () => {
      const out = this.output;
      this.following = out.scrollHeight - out.scrollTop - out.clientHeight <= AT_END_SLACK;
      this.readAt = out.scrollTop;
    });
  }

  update(item: TerminalItem): void {
    this.id = item.terminal_id;
    setText(this.command, item.command ? `$ ${item.command}` : "");
    setHidden(this.command, !item.command);
    setText(this.cwd, item.cwd ? `in ${item.cwd}` : "");
    setHidden(this.cwd, !item.cwd);
    const text = item.output ?? "";
    const capped = text.length > MAX_TERMINAL_CHARS;
    setHidden(this.cut, !capped);
    setText(this.output, capped ? text.slice(text.length - MAX_TERMINAL_CHARS) : text);
    setHidden(this.output, !text && !item.terminal_id);
    const ended = item.signal ? `killed by ${item.signal}` : typeof item.exit_code === "number" ? `exit code ${item.exit_code}` : "";
    const state = ended || (!item.command ? "" : item.terminal_id ? "running…" : "not run yet");
    setText(this.exit, state);
    setHidden(this.exit, !state);
    this.exit.dataset.state = ended ? "ended" : item.terminal_id ? "running" : "waiting";
    // Set again each time: a box moved by a re-render starts at the top.
    this.output.scrollTop = this.following ? this.output.scrollHeight : this.readAt;
  }
}

function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
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
    default:
      return h("div", "aiw-call-view-text", String((item as { text?: unknown }).text ?? ""));
  }
}
