// Syntax colour for the code blocks of a reply (highlight.js core with a few languages registered).
//
// It runs on markdown that is already sanitised, and it only adds colour: a code block's text is tokenised,
// and the block's content is rebuilt from the tokens as text nodes inside <span>s whose only attribute is a
// highlight class. Nothing from the highlighter's output goes into the page as HTML; a block whose rebuilt text
// would differ from its code (it never should) is left as it was. A block without a language, or in a language
// not registered, stays plain text: guessing the language costs a pass per language and often guesses wrong.

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import yaml from "highlight.js/lib/languages/yaml";

hljs.registerLanguage("python", python);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("json", json);
hljs.registerLanguage("bash", bash);
hljs.registerLanguage("shell", shell);
hljs.registerLanguage("sql", sql);
hljs.registerLanguage("yaml", yaml);

/** Code longer than this is shown plain: colour is not worth a long pause on a huge block. */
export const MAX_HIGHLIGHT_CHARS = 100_000;
const CACHE_SIZE = 64;
const LANGUAGE_CLASS = /(?:^|\s)language-([\w+-]+)/;
const TOKEN_CLASS = /^hljs-[\w-]+_*$/;

// The highlighter's output by language and code: a reply rendered whole again (its final text, a re-render)
// colours blocks already coloured, which then costs a lookup and a rebuild.
const cache = new Map<string, string>();

/** The registered language named by `name` (a name or an alias such as `py`, `ts`, `sh`, `yml`), or null. */
export function highlightLanguage(name: string): string | null {
  const lang = hljs.getLanguage(name.toLowerCase());
  if (!lang) return null;
  return hljs.listLanguages().find((id) => hljs.getLanguage(id) === lang) ?? null;
}

function highlighted(language: string, code: string): string | null {
  const key = `${language}\u0000${code}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let html: string;
  try {
    html = hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
  cache.set(key, html);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return html;
}

let inert: HTMLTemplateElement | null = null;

/** Copies `from` (parsed highlighter output) into `to` as text and class-only spans; false if it holds anything
 * else, so the caller keeps the plain text. */
function copyTokens(from: Node, to: Node): boolean {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      to.appendChild(document.createTextNode(node.nodeValue ?? ""));
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || node.nodeName !== "SPAN") return false;
    const span = document.createElement("span");
    const classes = ((node as Element).getAttribute("class") ?? "").split(/\s+/).filter((c) => TOKEN_CLASS.test(c));
    if (classes.length) span.className = classes.join(" ");
    if (!copyTokens(node, span)) return false;
    to.appendChild(span);
  }
  return true;
}

/** Colours one `<code>` element whose class names its language; returns whether it was coloured. */
export function highlightCode(code: Element): boolean {
  const name = LANGUAGE_CLASS.exec(code.getAttribute("class") ?? "")?.[1];
  const language = name ? highlightLanguage(name) : null;
  if (!language) return false;
  const text = code.textContent ?? "";
  if (!text || text.length > MAX_HIGHLIGHT_CHARS) return false;
  const html = highlighted(language, text);
  if (html === null) return false;
  inert ??= document.createElement("template");
  inert.innerHTML = html;
  const out = document.createDocumentFragment();
  const ok = copyTokens(inert.content, out);
  inert.innerHTML = "";
  if (!ok || out.textContent !== text) return false;
  code.replaceChildren(out);
  code.classList.add("aiw-hl");
  return true;
}

/** Colours every code block (`pre > code` with a language) in `root`, which holds sanitised markdown. */
export function highlightCodeBlocks(root: ParentNode): void {
  for (const code of root.querySelectorAll("pre > code[class*='language-']")) highlightCode(code);
}
