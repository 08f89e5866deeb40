// Text and reasoning parts. Assistant text is markdown (re-rendered only for the part that changed, once per
// frame at most, by the view's flush); user text and reasoning are plain text that grows by appending.

import { h } from "../dom";
import { addCodeCopyButtons } from "./copy";
import { highlightCodeBlocks } from "./highlight";
import { StreamingMarkdown } from "./mdstream";
import type { Part, ReasoningPart, TextPart } from "../types";

export interface PartView {
  readonly el: HTMLElement;
  readonly kind: Part["kind"];
  /** Brings the element up to date with `part`; `appended` says only text was appended since last time. */
  update(part: Part, appended?: boolean): void;
  /** The message is no longer in progress; `cut`: this part's text was cut short (stopped mid-reply). */
  finish?(cut: boolean): void;
  destroy?(): void;
}

/** A reply's complete code blocks: coloured by their language, each with a copy button for its code. */
function decorateCode(fragment: DocumentFragment): void {
  highlightCodeBlocks(fragment);
  addCodeCopyButtons(fragment);
}

/** Assistant text: sanitised markdown; while it streams only its growing block is re-rendered. Text cut short
 * (streaming, or stopped) shows its open emphasis closed; code blocks get colour and a copy button once complete. */
export class MarkdownPartView implements PartView {
  readonly kind = "text" as const;
  readonly el = h("div", "aiw-part aiw-text aiw-md");
  private readonly md = new StreamingMarkdown(this.el, decorateCode);

  constructor(
    part: TextPart,
    private cut = false,
  ) {
    this.md.renderWhenNear(part.text, cut);
  }

  update(part: Part, appended = false): void {
    const text = (part as TextPart).text;
    if (appended) {
      if (text !== this.md.shown) this.md.append(text);
    } else {
      this.md.finish(text, this.cut);
    }
  }

  finish(cut: boolean): void {
    this.cut = cut;
    this.md.finish(this.md.shown, cut);
  }
}

/** Text shown as typed, growing by appends to one text node. */
class GrowingText {
  readonly node = document.createTextNode("");
  private shown = "";

  update(text: string, appended: boolean): void {
    if (text === this.shown) return;
    if (appended && text.length > this.shown.length) this.node.appendData(text.slice(this.shown.length));
    else this.node.data = text;
    this.shown = text;
  }
}

/** User text: plain, as typed. */
export class PlainTextPartView implements PartView {
  readonly kind = "text" as const;
  readonly el = h("div", "aiw-part aiw-text aiw-plain");
  private readonly text = new GrowingText();

  constructor(part: TextPart) {
    this.el.append(this.text.node);
    this.update(part);
  }

  update(part: Part, appended = false): void {
    this.text.update((part as TextPart).text, appended);
  }
}

/** Reasoning: collapsed by default in a <details>; the person can open it while it streams. */
export class ReasoningPartView implements PartView {
  readonly kind = "reasoning" as const;
  readonly el = h("details", "aiw-part aiw-reasoning");
  private readonly text = new GrowingText();

  constructor(part: ReasoningPart) {
    const summary = h("summary", "aiw-reasoning-summary", "Reasoning");
    const body = h("div", "aiw-reasoning-text");
    body.append(this.text.node);
    this.el.append(summary, body);
    this.update(part);
  }

  update(part: Part, appended = false): void {
    this.text.update((part as ReasoningPart).text, appended);
  }
}
