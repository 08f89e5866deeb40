// Markdown -> sanitised HTML. The ONLY place untrusted text becomes HTML; everything else uses textContent.
// Links: http(s)/mailto only, opened in a new tab without an opener. Images: data:image/ only: a remote image in
// a model's text would load as soon as it renders, and a prompt-injected URL could carry data out in its query.
// No script, no event handlers, no styles, no forms or frames, no classes except code languages.

import { Marked } from "marked";
import createDOMPurify, { type DOMPurify } from "dompurify";

const LINK_URL = /^(?:https?:|mailto:)/i;
const IMAGE_URL = /^(?:https?:|data:image\/)/i;
const MARKDOWN_IMAGE_URL = /^data:image\//i;

/** Whether `url` may be a link target. */
export const safeLinkUrl = (url: unknown): url is string => typeof url === "string" && LINK_URL.test(url);
/** Whether `url` may be an image source. */
export const safeImageUrl = (url: unknown): url is string => typeof url === "string" && IMAGE_URL.test(url);

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  // Task-list boxes as characters: form controls are not allowed through the sanitiser.
  renderer: { checkbox: ({ checked }) => (checked ? "☑ " : "☐ ") },
});

const FORBID_TAGS = [
  "style", "script", "form", "input", "button", "textarea", "select", "option", "iframe", "frame", "frameset",
  "object", "embed", "link", "meta", "base", "dialog", "template", "svg", "math", "video", "audio", "source",
  "track", "picture", "area", "map", "portal", "noscript",
];
const FORBID_ATTR = [
  "style", "srcset", "id", "name", "action", "formaction", "autofocus", "tabindex", "contenteditable", "draggable",
  "popover", "background", "poster", "ping", "usemap",
];
const URI_ATTRS = ["href", "src", "xlink:href", "action", "formaction", "poster", "background", "cite", "longdesc"];

const CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS,
  FORBID_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|data:image\/)/i,
};

let purifier: DOMPurify | null = null;

function getPurifier(): DOMPurify {
  if (purifier) return purifier;
  const p = createDOMPurify(window);
  p.addHook("uponSanitizeAttribute", (node, data) => {
    if (data.attrName === "class") {
      const keep = node.nodeName === "CODE" ? data.attrValue.split(/\s+/).filter((c) => /^language-[\w+-]+$/.test(c)) : [];
      data.attrValue = keep.join(" ");
      data.keepAttr = keep.length > 0;
    }
  });
  p.addHook("afterSanitizeAttributes", (node) => {
    const el = node as Element;
    if (!el.getAttribute) return;
    const tag = el.nodeName;
    for (const attr of URI_ATTRS) {
      if (!el.hasAttribute(attr)) continue;
      const value = el.getAttribute(attr) ?? "";
      const ok = (tag === "A" && attr === "href" && safeLinkUrl(value)) || (tag === "IMG" && attr === "src" && MARKDOWN_IMAGE_URL.test(value));
      if (!ok) el.removeAttribute(attr);
    }
    if (tag === "A") {
      el.setAttribute("target", "_blank");
      el.setAttribute("rel", "noopener noreferrer");
    }
  });
  // Parsed once: a config passed per call is parsed on every call. IN_PLACE applies to nodes only (markdownFragment
  // hands over a node parsed in an inert template); a string in still gives a string out.
  p.setConfig({ ...CONFIG, IN_PLACE: true });
  purifier = p;
  return p;
}


/** Sanitises an HTML string. */
export function sanitize(html: string): string {
  return getPurifier().sanitize(html) as string;
}

function toHtml(text: string): string {
  try {
    return marked.parse(text) as string;
  } catch {
    return "";
  }
}

/** Markdown (GFM: code blocks, tables, links) rendered to sanitised HTML. */
export function renderMarkdown(text: string): string {
  return sanitize(toHtml(text));
}

let inert: HTMLTemplateElement | null = null;

/**
 * Markdown rendered to sanitised nodes, ready to insert.
 *
 * The HTML is parsed into a `<template>`, whose content belongs to an inert document (nothing in it loads or runs),
 * and sanitised there in place; only then are its nodes adopted. One template serves every call: DOMPurify's
 * own parse would create a new document per call, which made the first render of a long conversation slow.
 */
export function markdownFragment(text: string): DocumentFragment {
  inert ??= document.createElement("template");
  inert.innerHTML = toHtml(text);
  // Everything the HTML parsed into, wrapped in an element of the same inert document, so none of it is left out.
  const root = inert.content.ownerDocument.createElement("div");
  root.append(inert.content);
  getPurifier().sanitize(root);
  // A link whose target was refused (javascript:, data:, relative) would still look clickable: make it text.
  for (const link of root.querySelectorAll("a:not([href])")) link.replaceWith(...link.childNodes);
  const fragment = root.ownerDocument.createDocumentFragment();
  fragment.append(...root.childNodes);
  return document.adoptNode(fragment);
}

/** Puts markdown into `el` (sanitised). */
export function setMarkdown(el: HTMLElement, text: string): void {
  el.replaceChildren(markdownFragment(text));
}
