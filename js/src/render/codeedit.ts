// A code editor for a code argument before Allow: a monospace textarea (no wrapping) with line numbers beside it.
// Tab inserts four spaces (indents the selected lines), Shift+Tab dedents them; Escape leaves the editor (the focus
// goes to its frame, so Tab moves on), and Escape again there cancels the edit; Ctrl/Cmd+Enter allows.

import { h, setText } from "../dom";

export const INDENT = "    ";
const MAX_ROWS = 30;

export interface CodeEditorOptions {
  /** Ctrl/Cmd+Enter. */
  onSubmit?: () => void;
  /** Escape pressed outside the textarea (after Escape left it). */
  onCancel?: () => void;
  label?: string;
}

/** Replaces `start`..`end` of the textarea with `text`, through the browser's editing (kept in its undo history)
 * where it can, else directly; then selects `select` (absolute offsets) if given. */
function replaceRange(area: HTMLTextAreaElement, start: number, end: number, text: string, select?: [number, number]): void {
  area.setSelectionRange(start, end);
  let done = false;
  try {
    done = typeof document.execCommand === "function" && document.execCommand("insertText", false, text);
  } catch {
    done = false;
  }
  if (!done || area.value.slice(start, start + text.length) !== text) {
    area.setRangeText(text, start, end, "end");
    area.dispatchEvent(new Event("input", { bubbles: true }));
  }
  if (select) area.setSelectionRange(select[0], select[1]);
}

/** The start of the line `at` is on. */
function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

export class CodeEditor {
  readonly el = h("div", "aiw-code-editor");
  readonly area = h("textarea", "aiw-edit-input aiw-code-input");
  private readonly gutter = h("pre", "aiw-code-gutter");
  private numbered = 0;

  constructor(
    value: string,
    private readonly options: CodeEditorOptions = {},
  ) {
    this.el.tabIndex = -1; // where Escape leaves the focus
    this.gutter.setAttribute("aria-hidden", "true");
    this.area.value = value;
    this.area.spellcheck = false;
    this.area.wrap = "off";
    this.area.setAttribute("autocapitalize", "off");
    this.area.setAttribute("autocomplete", "off");
    this.area.setAttribute("aria-label", options.label ?? "Code");
    this.area.setAttribute("aria-multiline", "true");
    this.area.title = "Tab indents, Shift+Tab dedents, Escape leaves the editor, Ctrl/Cmd+Enter allows";
    this.el.append(this.gutter, this.area);
    this.area.addEventListener("keydown", (ev) => this.onKey(ev));
    this.area.addEventListener("input", () => this.update());
    this.area.addEventListener("scroll", () => (this.gutter.scrollTop = this.area.scrollTop), { passive: true });
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && ev.target === this.el && this.options.onCancel) {
        ev.preventDefault();
        ev.stopPropagation();
        this.options.onCancel();
      }
    });
    this.update();
  }

  get value(): string {
    return this.area.value;
  }

  focus(): void {
    this.area.focus();
  }

  private update(): void {
    const count = this.area.value.split("\n").length;
    this.area.rows = Math.min(MAX_ROWS, Math.max(3, count));
    if (count === this.numbered) return;
    this.numbered = count;
    const numbers: string[] = [];
    for (let i = 1; i <= count; i++) numbers.push(String(i));
    setText(this.gutter, numbers.join("\n"));
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.isComposing || ev.keyCode === 229) return;
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      this.options.onSubmit?.();
    } else if (ev.key === "Escape") {
      ev.preventDefault();
      ev.stopPropagation();
      this.el.focus(); // out of the textarea: Tab moves on from here, Escape again cancels
    } else if (ev.key === "Tab" && !ev.altKey && !ev.ctrlKey && !ev.metaKey) {
      ev.preventDefault();
      if (ev.shiftKey) this.dedent();
      else this.indent();
    }
  }

  /** Tab: four spaces at the caret; with lines selected, each of them indented. */
  indent(): void {
    const { value, selectionStart: start, selectionEnd: end } = this.area;
    if (!value.slice(start, end).includes("\n")) {
      replaceRange(this.area, start, end, INDENT);
      return;
    }
    const from = lineStart(value, start);
    const block = value.slice(from, end);
    const indented = block.replace(/^/gm, INDENT);
    replaceRange(this.area, from, end, indented, [start + INDENT.length, from + indented.length]);
  }

  /** Shift+Tab: up to four spaces (or a tab) off the start of each line the selection touches. */
  dedent(): void {
    const { value, selectionStart: start, selectionEnd: end } = this.area;
    const from = lineStart(value, start);
    const to = value.indexOf("\n", Math.max(end - (end > start && value[end - 1] === "\n" ? 1 : 0), start));
    const stop = to < 0 ? value.length : to;
    const block = value.slice(from, stop);
    let firstCut = -1;
    const dedented = block
      .split("\n")
      .map((line) => {
        const cut = line.startsWith("\t") ? 1 : (/^ {0,4}/.exec(line)?.[0].length ?? 0);
        if (firstCut < 0) firstCut = cut;
        return line.slice(cut);
      })
      .join("\n");
    if (dedented === block) return;
    const removed = block.length - dedented.length;
    const caret = Math.max(from, start - firstCut);
    replaceRange(this.area, from, stop, dedented, [caret, Math.max(caret, end - removed)]);
  }
}
