// What a tool result's display bundle (ToolOutcome.display: mime type -> data) shows as, in the order a notebook
// prefers them: a live ipywidget where the host has a widget manager, HTML (sanitised by the caller), markdown,
// LaTeX as text, an image (raster or SVG, only ever as an <img> data URI), JSON, then text/plain. Pure: no DOM.

import type { DisplayBundle, Json } from "./types";

export const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";

/** One way to show a bundle; the renderer tries them in order and shows the first that gives something. */
export type DisplayChoice =
  | { kind: "widget"; modelId: string }
  | { kind: "html"; html: string }
  | { kind: "markdown"; text: string }
  | { kind: "image"; src: string; mime: string }
  | { kind: "json"; value: Json }
  | { kind: "text"; text: string };

const RASTER = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const BASE64 = /^[A-Za-z0-9+/=\s]+$/;

/** The image of `mime` as a data URI, when `data` is base64 of that raster type or the text of an SVG. */
export function imageSource(mime: string, data: unknown): string | null {
  if (typeof data !== "string" || !data) return null;
  if (RASTER.includes(mime)) return BASE64.test(data) ? `data:${mime};base64,${data.replace(/\s+/g, "")}` : null;
  if (mime === "image/svg+xml") {
    // An SVG in an <img> runs no script and loads nothing: it is a picture only. As base64 of its UTF-8 bytes.
    const bytes = new TextEncoder().encode(data);
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return `data:image/svg+xml;base64,${btoa(binary)}`;
  }
  return null;
}

/** The model id of an ipywidget's view in the bundle, if it has one. */
export function widgetModelId(bundle: DisplayBundle): string | null {
  const view = bundle.data?.[WIDGET_VIEW];
  const id = view && typeof view === "object" && !Array.isArray(view) ? (view as Record<string, Json>).model_id : null;
  return typeof id === "string" && id ? id : null;
}

function text(data: Json | undefined): string | null {
  if (typeof data === "string") return data;
  if (Array.isArray(data) && data.every((line) => typeof line === "string")) return data.join(""); // nbformat lines
  return null;
}

/** The ways `bundle` can be shown, best first; text/plain (or the model's text) always last. */
export function displayChoices(bundle: DisplayBundle | null | undefined, opts: { widgets: boolean }): DisplayChoice[] {
  const data = bundle && typeof bundle === "object" && bundle.data && typeof bundle.data === "object" ? bundle.data : {};
  const choices: DisplayChoice[] = [];
  const modelId = bundle ? widgetModelId(bundle) : null;
  if (modelId && opts.widgets) choices.push({ kind: "widget", modelId });
  const html = text(data["text/html"]);
  if (html?.trim()) choices.push({ kind: "html", html });
  const markdown = text(data["text/markdown"]);
  if (markdown?.trim()) choices.push({ kind: "markdown", text: markdown });
  const latex = text(data["text/latex"]);
  if (latex?.trim()) choices.push({ kind: "text", text: latex });
  for (const mime of ["image/svg+xml", ...RASTER]) {
    const src = imageSource(mime, data[mime]);
    if (src) choices.push({ kind: "image", src, mime });
  }
  if (data["application/json"] !== undefined && data["application/json"] !== null) {
    choices.push({ kind: "json", value: data["application/json"] });
  }
  const plain = text(data["text/plain"]) ?? (typeof bundle?.text === "string" ? bundle.text : null);
  if (plain) choices.push({ kind: "text", text: plain });
  return choices;
}
