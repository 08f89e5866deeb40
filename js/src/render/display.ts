// A tool result's display (ToolOutcome.display) as the notebook would show it: the first of its choices
// (displayChoices) that gives something. HTML goes through the one sanitiser (no script, no handlers, no styles,
// images only as data:image/ URIs), so a script-only page (a plotly chart's) falls through to the next choice; an
// image (SVG too) is only ever an <img> with a data URI; a live ipywidget where the host has a widget manager, its
// text while it loads and when it cannot.

import { h } from "../dom";
import { type DisplayChoice, displayChoices } from "../display";
import { sanitize, setMarkdown } from "../markdown";
import type { DisplayBundle } from "../types";
import type { WidgetHost } from "../widgets";
import { JsonView } from "./json";

const cleanups = new WeakMap<Element, () => void>();

function htmlElement(html: string): HTMLElement | null {
  const el = h("div", "aiw-display-html");
  el.innerHTML = sanitize(html);
  // A link whose target the sanitiser refused would still look clickable: make it text.
  for (const link of el.querySelectorAll("a:not([href])")) link.replaceWith(...link.childNodes);
  const shows = (el.textContent ?? "").trim() !== "" || el.querySelector("img, table, hr") !== null;
  return shows ? el : null;
}

function imageElement(src: string, mime: string): HTMLElement {
  const img = h("img", "aiw-display-image");
  img.alt = mime === "image/svg+xml" ? "SVG image" : "image";
  img.src = src;
  return img;
}

function widgetElement(modelId: string, fallback: string, host: WidgetHost): HTMLElement {
  const el = h("div", "aiw-display-widget");
  el.dataset.modelId = modelId;
  const text = h("pre", "aiw-display-text", fallback);
  el.append(text);
  host.show(modelId, el).then(
    (remove) => {
      text.remove();
      el.dataset.live = "true";
      cleanups.set(el, remove);
    },
    () => {
      el.dataset.live = "false"; // the model is gone (a reopened notebook) or the manager refused: the text stays
    },
  );
  return el;
}

function choiceElement(choice: DisplayChoice, fallback: string, host: WidgetHost | null): HTMLElement | null {
  switch (choice.kind) {
    case "widget":
      return host ? widgetElement(choice.modelId, fallback, host) : null;
    case "html":
      return htmlElement(choice.html);
    case "markdown": {
      const md = h("div", "aiw-md aiw-display-markdown");
      setMarkdown(md, choice.text);
      return md;
    }
    case "image":
      return imageElement(choice.src, choice.mime);
    case "json":
      return new JsonView(choice.value).el;
    case "text":
      return h("pre", "aiw-display-text", choice.text);
  }
}

/** The element that shows `bundle`, or null when it has nothing to show. */
export function renderDisplay(bundle: DisplayBundle, host: WidgetHost | null): HTMLElement | null {
  const choices = displayChoices(bundle, { widgets: host !== null });
  const last = choices[choices.length - 1];
  const fallback = last?.kind === "text" ? last.text : "";
  for (const choice of choices) {
    const el = choiceElement(choice, fallback, host);
    if (!el) continue;
    const box = h("div", "aiw-display");
    box.dataset.kind = choice.kind;
    box.append(el);
    return box;
  }
  return null;
}

/** Removes the live widget views shown under `root` (before it is replaced or its card goes). */
export function disposeDisplays(root: Element): void {
  for (const el of root.querySelectorAll(".aiw-display-widget")) {
    const remove = cleanups.get(el);
    cleanups.delete(el);
    try {
      remove?.();
    } catch {
      // a view the host already took down
    }
  }
}
