// Cheap syntax colour for Python: a one-pass tokenizer by line (keywords, builtins, strings, comments, numbers,
// decorators), with the state a triple-quoted string carries to the next line. It only colours: code it cannot read
// still shows whole, as plain text. Tokens are text; the view sets them with textContent.

export type TokenKind = "keyword" | "builtin" | "string" | "comment" | "number" | "decorator" | "plain";

export interface Token {
  kind: TokenKind;
  text: string;
}

/** What a line starts inside: null, or the closing quote of a triple-quoted string still open (`"""` or `'''`). */
export type LineState = string | null;

const KEYWORDS = new Set(
  (
    "False None True and as assert async await break case class continue def del elif else except finally for " +
    "from global if import in is lambda match nonlocal not or pass raise return try type while with yield"
  ).split(" "),
);
const BUILTINS = new Set(
  (
    "abs all any bool bytes callable dict dir display divmod enumerate filter float format frozenset getattr " +
    "hasattr hash id input int isinstance issubclass iter len list map max min next object open print range " +
    "repr reversed round set setattr slice sorted str sum super tuple type vars zip self cls"
  ).split(" "),
);
// `match`, `case` and `type` are soft keywords: coloured only where a statement starts with them and goes on.
const SOFT = new Set(["match", "case", "type"]);
/** What follows a soft keyword that starts a statement: a space, then a name, a literal or a bracket. */
const SOFT_FOLLOW = /^[ \t]+[\w"'([{\-]/;

const NAME = /[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*/y;
const NUMBER = /(?:0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)/y;
const PREFIX = /(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?(?:"""|'''|"|')/y;
const SPACE = /[ \t]+/y;

function match(re: RegExp, line: string, at: number): string | null {
  re.lastIndex = at;
  const m = re.exec(line);
  return m ? m[0] : null;
}

/** Where a string that opened with `quote` ends in `line` from `at` (the index after its closing quote), or -1. */
function stringEnd(line: string, at: number, quote: string, raw: boolean): number {
  for (let i = at; i < line.length; i++) {
    if (line[i] === "\\" && !raw) {
      i++;
      continue;
    }
    if (line.startsWith(quote, i)) return i + quote.length;
  }
  return -1;
}

/** The tokens of one line (without its newline), starting in `state`; and the state the next line starts in. */
export function tokenizeLine(line: string, state: LineState): { tokens: Token[]; state: LineState } {
  const tokens: Token[] = [];
  const push = (kind: TokenKind, text: string): void => {
    const last = tokens[tokens.length - 1];
    if (last && last.kind === kind) last.text += text;
    else if (text) tokens.push({ kind, text });
  };
  let at = 0;
  if (state) {
    const end = stringEnd(line, 0, state, false);
    if (end < 0) {
      push("string", line);
      return { tokens, state };
    }
    push("string", line.slice(0, end));
    at = end;
  }
  let statementStart = line.slice(0, at).trim() === "";
  while (at < line.length) {
    const c = line[at];
    const space = match(SPACE, line, at);
    if (space) {
      push("plain", space);
      at += space.length;
      continue;
    }
    if (c === "#") {
      push("comment", line.slice(at));
      break;
    }
    const opener = match(PREFIX, line, at);
    if (opener) {
      const quote = opener.replace(/^[rRbBfFuU]+/, "");
      const raw = /[rR]/.test(opener.slice(0, opener.length - quote.length));
      const end = stringEnd(line, at + opener.length, quote, raw);
      if (end < 0) {
        push("string", line.slice(at));
        // A one-quote string left open ends with its line (an error in Python; the next line starts fresh).
        return { tokens, state: quote.length === 3 ? quote : null };
      }
      push("string", line.slice(at, end));
      at = end;
      statementStart = false;
      continue;
    }
    if (c === "@" && statementStart) {
      const name = match(/@[\w.]*/y, line, at) ?? "@";
      push("decorator", name);
      at += name.length;
      statementStart = false;
      continue;
    }
    const name = match(NAME, line, at);
    if (name) {
      const soft = SOFT.has(name) && !(statementStart && SOFT_FOLLOW.test(line.slice(at + name.length)));
      const kind = KEYWORDS.has(name) && !soft ? "keyword" : BUILTINS.has(name) ? "builtin" : "plain";
      push(kind, name);
      at += name.length;
      statementStart = false;
      continue;
    }
    if (/[\d.]/.test(c)) {
      const number = match(NUMBER, line, at);
      if (number && number !== ".") {
        push("number", number);
        at += number.length;
        statementStart = false;
        continue;
      }
    }
    push("plain", c);
    at += 1;
    statementStart = false;
  }
  return { tokens, state: null };
}

/** The tokens of a whole text, one list per line (a language other than Python: each line one plain token). */
export function tokenize(text: string, language = "python"): Token[][] {
  const lines = text.split("\n");
  if (!isPython(language)) return lines.map((line) => (line ? [{ kind: "plain" as const, text: line }] : []));
  let state: LineState = null;
  return lines.map((line) => {
    const result = tokenizeLine(line, state);
    state = result.state;
    return result.tokens;
  });
}

export function isPython(language: string): boolean {
  return /^(python|py|ipython|python3)$/i.test(language);
}
