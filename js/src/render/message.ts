// One message: its parts, the status line while the model decides, its error when the turn failed or paused at a
// limit (render/replyerror.ts), and a note when it was stopped.

import { h, setAttr, setHidden, setText, toggleClass } from "../dom";
import type { ArgPatch, Message, Part } from "../types";
import { AnswerPartView } from "./answer";
import { AttachmentTextView, FileChipView } from "./attachments";
import { BranchControls } from "./branches";
import { builtinToolInfo } from "./builtin";
import { copyButton } from "./copy";
import { MarkdownPartView, type PartView, PlainTextPartView, ReasoningPartView } from "./parts";
import { PlanPartView } from "./plan";
import { ReplyErrorView } from "./replyerror";
import { type CardContext, ToolCardView } from "./toolcard";

/** What changed in a part since the last flush (built by the view). */
export interface PartDirty {
  full: boolean; // added or replaced
  text: boolean; // text appended
  call: boolean; // call fields
  patches: ArgPatch[] | null; // queued argument patches
  argsReset: boolean; // arguments must be re-rendered from the value
}

export class MessageView {
  readonly el = h("div", "aiw-message");
  private readonly partsEl = h("div", "aiw-parts");
  private readonly statusLine = h("div", "aiw-status-line");
  private readonly statusText = document.createTextNode("");
  private readonly note = h("div", "aiw-note");
  private readonly actions = h("div", "aiw-message-actions");
  private parts: PartView[] = [];
  /** Edit, Regenerate / Retry and the branch switcher (render/branches.ts). */
  private readonly branches: BranchControls;
  /** The error, with Retry or Continue and its troubleshooting link. */
  private readonly error: ReplyErrorView;
  private role: string;
  private message: Message;

  constructor(
    message: Message,
    private readonly ctx: CardContext,
  ) {
    this.role = message.role;
    this.message = message;
    this.el.dataset.role = message.role;
    this.el.dataset.id = message.id;
    this.statusLine.setAttribute("aria-live", "polite");
    const label = h("span", "aiw-status-text");
    label.append(this.statusText);
    this.statusLine.append(label);
    // Copy the reply: its text parts' markdown, as the model wrote it.
    this.actions.append(copyButton("aiw-copy-message", "Copy message", () => textOf(this.message)));
    this.branches = new BranchControls(message, this.partsEl, (msg) => ctx.send(msg));
    this.error = new ReplyErrorView(message, (msg) => ctx.send(msg));
    const footer = h("div", "aiw-message-footer"); // Copy, then the branch controls, on one line
    footer.append(this.actions, this.branches.el);
    this.el.append(this.partsEl, this.statusLine, this.error.el, this.note, footer);
    this.sync(message);
  }

  /** Brings everything up to date with `message` (first render, or a replaced copy), touching only differences. */
  sync(message: Message, stale?: ReadonlySet<number>): void {
    this.updateFields(message);
    message.parts.forEach((part, i) => this.setPart(part, i, stale?.has(i) ?? false));
    while (this.parts.length > message.parts.length) this.removePart(this.parts.length - 1);
  }

  updateFields(message: Message): void {
    this.message = message;
    const wasInProgress = this.el.dataset.status === "in_progress";
    setAttr(this.el, "data-status", message.status);
    if (wasInProgress && message.status !== "in_progress") this.parts.forEach((p, i) => p.finish?.(this.cutAt(i)));
    setHidden(this.actions, this.role !== "assistant" || message.status === "in_progress" || !textOf(message).trim());
    this.branches?.update(message); // (not yet there during the first sync's fields: it updates itself)
    this.error?.update(message);
    const inProgress = message.status === "in_progress" && this.role === "assistant";
    const status = typeof message.status_text === "string" ? message.status_text : "";
    // While the reply is in progress the line keeps its space, so text below it does not jump.
    setHidden(this.statusLine, !inProgress);
    toggleClass(this.statusLine, "aiw-status-active", inProgress && !!status);
    if (this.statusText.data !== status) this.statusText.data = status;

    // An error or a limit is said by the reply's error (with its action); the calls it left show "not run".
    const note = message.status === "cancelled" ? "Stopped" : "";
    setText(this.note, note);
    setAttr(this.note, "data-kind", note ? message.status : null);
    setHidden(this.note, !note);
  }

  /** Applies what changed in the part at `index`. */
  updatePart(message: Message, index: number, dirty: PartDirty): void {
    this.message = message;
    const part = message.parts[index];
    if (!part) return;
    if (index > this.parts.length) return this.sync(message); // a gap: cannot happen, but stay correct
    const view = this.parts[index];
    if (dirty.full || !view || !fits(view, part)) {
      this.setPart(part, index, dirty.argsReset || dirty.patches !== null);
      return;
    }
    if (view instanceof AnswerPartView && AnswerPartView.shows(part)) {
      if (dirty.text) view.grow(part, dirty.argsReset ? null : dirty.patches, message.status === "in_progress");
    } else if (view instanceof ToolCardView && part.kind === "tool_call") {
      if (dirty.argsReset) view.updateArgs(part, null);
      else if (dirty.patches) view.updateArgs(part, dirty.patches);
      if (dirty.call) view.update(part);
    } else if (dirty.text) {
      // Appended text streams; once the message is over, the text is rendered whole.
      view.update(part, message.status === "in_progress");
    }
  }

  private setPart(part: Part, index: number, argsStale: boolean): void {
    const view = this.parts[index];
    if (view && fits(view, part)) {
      view.update(part);
      if (argsStale && view instanceof ToolCardView && part.kind === "tool_call") view.updateArgs(part, null);
      return;
    }
    const next = this.createPart(part, index);
    if (view) {
      view.destroy?.();
      this.partsEl.replaceChild(next.el, view.el);
      this.parts[index] = next;
    } else {
      this.partsEl.append(next.el);
      this.parts[index] = next;
    }
  }

  private removePart(index: number): void {
    const view = this.parts[index];
    view.destroy?.();
    view.el.remove();
    this.parts.splice(index, 1);
  }

  private createPart(part: Part, index: number): PartView {
    switch (part.kind) {
      case "tool_call":
        return new ToolCardView(part, this.cardContext(index));
      case "reasoning":
        return new ReasoningPartView(part);
      case "file":
        return new FileChipView(part, this.message.thumbnails?.[String(index)]);
      case "plan":
        return new PlanPartView(part);
      default:
        if (this.role !== "user" && AnswerPartView.shows(part)) return new AnswerPartView(part, this.message.status === "in_progress");
        if (this.role !== "user") return new MarkdownPartView(part, this.cutAt(index));
        return part.attachment === true ? new AttachmentTextView(part) : new PlainTextPartView(part);
    }
  }

  /** Whether the text of part `index` is cut short: streaming, or the last part of a reply that did not finish. */
  private cutAt(index: number): boolean {
    const m = this.message;
    if (m.status === "in_progress") return true;
    const stopped = m.status === "cancelled" || m.status === "error" || m.finish_reason === "length";
    return stopped && index === m.parts.length - 1;
  }

  /** A provider-run call of a known built-in tool (web search...) gets its title and icon. */
  private cardContext(index: number): CardContext {
    const ctx = this.ctx;
    return {
      ...ctx,
      toolInfo: (name) => {
        const part = this.message.parts[index];
        return ctx.toolInfo(name) ?? (part?.kind === "tool_call" && part.provider_executed ? builtinToolInfo(name) : undefined);
      },
    };
  }

  /** Whether this is the last message shown (its reply offers Regenerate / Retry). */
  setLast(last: boolean): void {
    this.branches.setLast(last);
    this.error.setLast(last);
  }

  /** The kernel refused an action: its controls can be clicked again. */
  refused(): void {
    this.branches.refused();
    this.error.refused();
  }

  /** Every tool card (for trait-wide refreshes such as `tools`). */
  cards(): ToolCardView[] {
    return this.parts.filter((p): p is ToolCardView => p instanceof ToolCardView);
  }

  destroy(): void {
    this.branches.destroy();
    for (const p of this.parts) p.destroy?.();
    this.parts = [];
  }
}

/** Whether `view` can show `part`: the same kind, a typed answer's card only for a typed answer, and an attachment's
 * text view only for an attachment's text. */
function fits(view: PartView, part: Part): boolean {
  if (view.kind !== part.kind) return false;
  if (view instanceof AnswerPartView !== AnswerPartView.shows(part)) return false;
  return part.kind !== "text" || view instanceof AttachmentTextView === (part.attachment === true);
}

/** The text of a message's text parts (markdown), as copied. */
function textOf(message: Message): string {
  return message.parts
    .filter((p) => p.kind === "text")
    .map((p) => (p as { text: string }).text)
    .join("\n\n");
}
