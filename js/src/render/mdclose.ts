// Markdown cut short (a reply still streaming, or stopped mid-word) closed so that it renders as it was meant:
// `*What's the weath` shows in italics rather than with a stray asterisk. Only the last block can be open
// (emphasis and code spans never cross a blank line). Text that is complete is never passed here: a model's
// finished reply is rendered exactly as written.

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const BLANK = /^[ \t]*\r?$/;
const SPACE = /\s/;
const WORD = /[\p{L}\p{N}]/u;
// A link or image whose target is still arriving: shown as its text (a half URL must not become a link).
const OPEN_LINK = /(!?)\[([^\]\n]*)\]\([^)\s]*$/;

interface Opener {
  delim: string;
  at: number;
}

/** Where the last block starts, or -1 when the text ends inside a fenced code block (already shown as code). */
function lastBlock(text: string): number {
  let start = 0;
  let fence: { ch: string; len: number } | null = null;
  let pos = 0;
  while (pos <= text.length) {
    let nl = text.indexOf("\n", pos);
    if (nl === -1) nl = text.length;
    const line = text.slice(pos, nl);
    const m = FENCE.exec(line);
    if (fence) {
      if (m && m[1][0] === fence.ch && m[1].length >= fence.len && BLANK.test(line.slice(m[0].length))) {
        fence = null;
        start = nl + 1;
      }
    } else if (m) {
      fence = { ch: m[1][0], len: m[1].length };
    } else if (BLANK.test(line) && nl < text.length) {
      start = nl + 1;
    }
    pos = nl + 1;
  }
  return fence ? -1 : Math.min(start, text.length);
}

/** The inline delimiters left open in `text` from `start`: emphasis, strikethrough, a code span (last). */
function openers(text: string, start: number): Opener[] {
  const stack: Opener[] = [];
  let i = start;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c !== "`" && c !== "*" && c !== "_" && c !== "~") {
      i++;
      continue;
    }
    let k = 1;
    while (text[i + k] === c) k++;
    const run = text.slice(i, i + k);
    if (c === "`") {
      const close = text.indexOf(run, i + k);
      // A closing run of exactly the same length ends the span; none: the rest is code.
      let j = close;
      while (j !== -1 && (text[j - 1] === "`" || text[j + k] === "`")) j = text.indexOf(run, j + 1);
      if (j === -1) {
        stack.push({ delim: run, at: i });
        return stack;
      }
      i = j + k;
      continue;
    }
    const before = i > start ? text[i - 1] : " ";
    const after = i + k < text.length ? text[i + k] : "x"; // more may follow: at the very end it may open
    const opens = !SPACE.test(after);
    const closes = !SPACE.test(before);
    const intraword = WORD.test(before) && WORD.test(after);
    if ((c === "~" && k !== 2) || (c === "_" && intraword)) {
      i += k;
      continue;
    }
    let match = -1;
    if (closes) for (let s = stack.length - 1; s >= 0 && match < 0; s--) if (stack[s].delim === run) match = s;
    if (match >= 0) stack.length = match;
    else if (opens) stack.push({ delim: run, at: i });
    i += k;
  }
  return stack;
}

/** `text`, cut short, with its open link, code span, emphasis and strikethrough closed. */
export function closeMarkdown(text: string): string {
  const start = lastBlock(text);
  if (start < 0) return text;
  let out = text;
  const link = OPEN_LINK.exec(out.slice(start));
  if (link) out = out.slice(0, start + link.index) + (link[1] ? "" : link[2]);
  const stack = openers(out, start);
  // An opener with nothing after it yet is dropped, not closed (`**` alone would render as a stray `****`).
  while (stack.length && !out.slice(stack[stack.length - 1].at + stack[stack.length - 1].delim.length).trim()) {
    out = out.slice(0, stack.pop()!.at);
  }
  if (!stack.length) return out;
  // A closer must follow a non-space character; a code span (always the last opener) keeps its spaces.
  if (!stack[stack.length - 1].delim.startsWith("`")) out = out.replace(/\s+$/, "");
  return out + stack.map((o) => o.delim).reverse().join("");
}
