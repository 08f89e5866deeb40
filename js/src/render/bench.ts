// The bench: tools run by hand, below the chat ("Run again" on a finished card) or alone (run_tool). Each entry is
// a card: the tool's title, a form from its schema with Run, and the card of the latest run (progress, approval,
// Cancel, result), which the kernel updates from a session of the entry's own: the conversation never changes.

import { button, h, setHidden, setText } from "../dom";
import { normalizeBenchEntry } from "../normalize";
import type { BenchEntry, Json } from "../types";
import { RunForm } from "./runform";
import { type CardContext, ToolCardView } from "./toolcard";

export interface BenchContext extends CardContext {
  /** Entries can be closed (not run_tool's own form). */
  closable: boolean;
}

export class BenchView {
  readonly el = h("section", "aiw-bench");
  private readonly list = h("div", "aiw-bench-entries");
  private readonly views = new Map<string, BenchEntryView>();
  private awaited: string | null = null; // the call whose "Run again" was just clicked: its entry gets the focus

  constructor(private readonly ctx: BenchContext) {
    this.el.setAttribute("aria-label", "Tools run by hand");
    this.el.append(h("div", "aiw-bench-heading", "Run by hand"), this.list);
    this.el.hidden = true;
  }

  /** "Run again" was clicked for `callId`: the entry that comes for it is scrolled to and focused. */
  expect(callId: string): void {
    this.awaited = callId;
  }

  update(raw: unknown): void {
    const entries = (Array.isArray(raw) ? raw : []).map(normalizeBenchEntry).filter((e): e is BenchEntry => e !== null);
    const seen = new Set<string>();
    let focus: BenchEntryView | null = null;
    let previous: Element | null = null;
    for (const entry of entries) {
      if (seen.has(entry.id)) continue;
      seen.add(entry.id);
      let view = this.views.get(entry.id);
      if (!view) {
        view = new BenchEntryView(entry, this.ctx);
        this.views.set(entry.id, view);
        if (this.awaited !== null && entry.source === this.awaited) focus = view;
      } else {
        view.update(entry);
      }
      const at: Element | null = previous ? previous.nextElementSibling : this.list.firstElementChild;
      if (at !== view.el) this.list.insertBefore(view.el, at);
      previous = view.el;
    }
    for (const [id, view] of this.views) {
      if (seen.has(id)) continue;
      view.destroy();
      this.views.delete(id);
    }
    setHidden(this.el, this.views.size === 0);
    if (focus) {
      this.awaited = null;
      const view = focus;
      queueMicrotask(() => view.reveal());
    }
  }

  /** The tools trait changed: titles, icons, and the forms of tools whose schema changed. */
  updateInfo(): void {
    for (const view of this.views.values()) view.updateInfo();
  }

  /** The kernel refused an action: a Run that waits for its answer can be pressed again. */
  refused(): void {
    for (const view of this.views.values()) view.form?.refused();
  }

  destroy(): void {
    for (const view of this.views.values()) view.destroy();
    this.views.clear();
  }
}

class BenchEntryView {
  readonly el = h("div", "aiw-bench-entry");
  private readonly icon = h("span", "aiw-tool-icon");
  private readonly title = h("span", "aiw-tool-title");
  private readonly origin = h("span", "aiw-bench-origin");
  private readonly description = h("p", "aiw-bench-description");
  private readonly formSlot = h("div", "aiw-bench-form");
  private readonly runSlot = h("div", "aiw-bench-run");
  form: RunForm | null = null;
  private card: ToolCardView | null = null;
  private entry: BenchEntry;
  private schemaKey = "";
  private seed = "";
  private attempt: number;

  constructor(
    entry: BenchEntry,
    private readonly ctx: BenchContext,
  ) {
    this.entry = entry;
    this.attempt = entry.attempt;
    this.el.dataset.benchId = entry.id;
    this.el.dataset.tool = entry.tool_name;
    const header = h("div", "aiw-bench-header");
    header.append(this.icon, this.title, this.origin);
    if (ctx.closable) {
      const close = button("aiw-btn aiw-btn-small aiw-bench-close", "×", () => ctx.send({ type: "bench_close", id: this.entry.id }));
      close.setAttribute("aria-label", "Close this form");
      close.title = "Close (a run that goes on is stopped)";
      header.append(close);
    }
    this.el.append(header, this.description, this.formSlot, this.runSlot);
    this.updateInfo();
    this.update(entry);
  }

  /** Title, icon, description; the form again if the tool's schema changed (its values kept). */
  updateInfo(): void {
    const info = this.ctx.toolInfo(this.entry.tool_name);
    setText(this.icon, (typeof info?.icon === "string" && info.icon) || "🔧");
    setText(this.title, (typeof info?.title === "string" && info.title) || this.entry.tool_name);
    const description = typeof info?.description === "string" ? info.description.trim() : "";
    setText(this.description, description);
    setHidden(this.description, !description);
    const schema: Json | undefined = info?.parameters;
    const key = JSON.stringify(schema ?? null);
    if (key === this.schemaKey && this.form) return;
    this.schemaKey = key;
    this.form = new RunForm(schema, this.entry.arguments, (args) =>
      this.ctx.send({ type: "bench_run", id: this.entry.id, arguments: args }),
    );
    this.seed = JSON.stringify(this.entry.arguments);
    this.formSlot.replaceChildren(this.form.el);
    this.form.setRunning(this.entry.running, asksApproval(this.entry));
    this.form.answered(this.entry.errors, this.entry.error);
  }

  update(entry: BenchEntry): void {
    const previous = this.entry;
    this.entry = entry;
    setText(this.origin, entry.by_app ? "asked for by the app in a card" : entry.source ? "from the model's call" : "");
    this.origin.title = entry.by_app
      ? `The MCP App in the card of call ${entry.source} calls this tool; the conversation is not changed`
      : entry.source
        ? `A run by hand of call ${entry.source}; the conversation is not changed`
        : "";
    const form = this.form!;
    // The kernel's arguments replace the fields only when they are new to this view (another view ran it, or the
    // page reopened); the person's typing is never overwritten by what this view itself sent.
    const seed = JSON.stringify(entry.arguments);
    if (seed !== this.seed) {
      this.seed = seed;
      if (seed !== form.sent) form.form.setValues(entry.arguments);
    }
    form.setRunning(entry.running, asksApproval(entry));
    if (entry.attempt !== this.attempt || previous.error !== entry.error || JSON.stringify(previous.errors) !== JSON.stringify(entry.errors)) {
      this.attempt = entry.attempt;
      form.answered(entry.errors, entry.error);
    }
    this.updateRun(entry);
  }

  private updateRun(entry: BenchEntry): void {
    const part = entry.message?.parts.find((p) => p.kind === "tool_call");
    if (!part || part.kind !== "tool_call") {
      this.card?.destroy();
      this.card = null;
      this.runSlot.replaceChildren();
      return;
    }
    if (this.card && this.card.el.dataset.callId === part.tool_call_id) {
      this.card.update(part);
      return;
    }
    this.card?.destroy();
    this.card = new ToolCardView(part, { ...this.ctx, collapseByDefault: () => false, runAgain: undefined, heading: "Latest run" });
    this.runSlot.replaceChildren(this.card.el);
  }

  /** Scrolled into view, its first field (or Run) focused: the entry a "Run again" click asked for. */
  reveal(): void {
    if (!this.el.isConnected) return;
    this.el.scrollIntoView?.({ block: "nearest", behavior: "smooth" });
    this.form?.form.focusFirst();
  }

  destroy(): void {
    this.card?.destroy();
    this.card = null;
    this.el.remove();
  }
}

/** Whether the entry's run waits for a person's approval. */
function asksApproval(entry: BenchEntry): boolean {
  return !!entry.message?.parts.some((p) => p.kind === "tool_call" && p.state === "awaiting_approval");
}
