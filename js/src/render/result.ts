// A call's outcome: under a "Result" label, the value as JSON (a string value as plain text) or the text as
// sanitised markdown, then what it displays (a figure, a table, a live widget: render/display), citations as
// links, image attachments as images; a failure's message with the traceback in an expandable <details> (the
// traceback puts the tool author's frames first: the kernel orders it). Code run as a cell (`outcome.cell`) shows
// its outputs as the notebook does (render/cellrun), what it changed, and what the model read of it under a fold.

import { h } from "../dom";
import { safeImageUrl, safeLinkUrl, setMarkdown } from "../markdown";
import type { Attachment, Citation, Outcome, ToolCallPart } from "../types";
import type { WidgetHost } from "../widgets";
import { cellOf, hasErrorOutput, renderCellChanges, renderCellOutputs } from "./cellrun";
import { renderDisplay } from "./display";
import { JsonView } from "./json";

const IMAGE_MIME = /^image\/[\w.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

/**
 * `headlineShown`: the card shows the failure's message above already (under its header), so it is not repeated.
 * `widgets`: the host's widget manager, for a result that is an ipywidget (null: its text shows).
 * `withDisplay`: false when the caller shows the display itself (a tool card shows it collapsed too).
 */
export function renderOutcome(
  outcome: Outcome,
  state: string,
  headlineShown = false,
  widgets: WidgetHost | null = null,
  withDisplay = true,
): HTMLElement {
  const el = h("div", "aiw-tool-result");
  const cell = cellOf(outcome);
  if (cell) {
    el.classList.add("aiw-cell-result-box");
    if (outcome.status === "failure") el.classList.add(state === "failed" ? "aiw-result-failed" : "aiw-result-quiet");
    // A failure the outputs do not show as an error (a refusal before anything ran): its message.
    const failed = outcome.status === "failure" && !hasErrorOutput(cell);
    const headline = failed ? outcome.message || outcome.error?.message || "Failed" : "";
    if (headline && !headlineShown) el.append(h("div", "aiw-tool-error-message", headline));
    const outputs = withDisplay ? outcomeDisplay(outcome, widgets) : null;
    if (outputs) el.append(outputs);
    const err = outcome.error;
    if (err?.traceback && !hasErrorOutput(cell)) {
      const details = h("details", "aiw-traceback");
      details.append(h("summary", undefined, "Traceback"), h("pre", undefined, err.traceback));
      el.append(details);
    }
    const changes = renderCellChanges(cell);
    if (changes) el.append(changes);
    const read = outcome.status === "failure" ? outcome.message : outcome.text;
    const told = typeof read === "string" && read && read !== headline ? read : null;
    if (told) {
      const details = h("details", "aiw-cell-told");
      details.append(h("summary", undefined, "What the model read"), h("pre", undefined, told));
      el.append(details);
    }
    return el;
  }
  if (outcome.status === "failure") {
    el.classList.add(state === "failed" ? "aiw-result-failed" : "aiw-result-quiet");
    const err = outcome.error;
    const headline = err ? `${err.type || "Error"}: ${err.message ?? ""}` : outcome.message || "Failed";
    if (!headlineShown) el.append(h("div", "aiw-tool-error-message", headline));
    if (err && outcome.message && outcome.message !== err.message) {
      el.append(h("div", "aiw-tool-error-told", `Told the model: ${outcome.message}`));
    }
    if (err?.traceback) {
      const details = h("details", "aiw-traceback");
      details.append(h("summary", undefined, "Traceback"), h("pre", undefined, err.traceback));
      el.append(details);
    }
  } else if (typeof outcome.text === "string" && outcome.text) {
    const md = h("div", "aiw-md aiw-result-text");
    setMarkdown(md, outcome.text);
    el.append(h("div", "aiw-section-label", "Result"), md);
  } else if (typeof outcome.value === "string") {
    // Text a tool returned: shown as written, in the card's own font (not as a JSON string, which reads as code).
    el.append(h("div", "aiw-section-label", "Result"), h("div", "aiw-result-plain", outcome.value || "(empty text)"));
  } else if (outcome.value !== undefined && outcome.value !== null) {
    el.append(h("div", "aiw-section-label", "Result"), new JsonView(outcome.value).el);
  }
  const display = withDisplay ? outcomeDisplay(outcome, widgets) : null;
  if (display) {
    if (!el.querySelector(".aiw-section-label")) el.append(h("div", "aiw-section-label", "Result"));
    el.append(display);
  }
  if (Array.isArray(outcome.citations) && outcome.citations.length) el.append(renderCitations(outcome.citations));
  if (Array.isArray(outcome.attachments) && outcome.attachments.length) el.append(renderAttachments(outcome.attachments));
  return el;
}

/** What a successful outcome displays (a figure, a table, a live widget), or the outputs of code it ran as a
 * cell (a failed run's too); null when nothing. */
export function outcomeDisplay(outcome: Outcome, widgets: WidgetHost | null): HTMLElement | null {
  const cell = cellOf(outcome);
  if (cell) return renderCellOutputs(cell, widgets);
  const shown = outcome.status === "success" && outcome.display && typeof outcome.display === "object";
  return shown ? renderDisplay(outcome.display!, widgets) : null;
}

/**
 * What a sync tool's thread did after its call ended (cancelled, stopped, timed out; the call's outcome stands):
 * still running ("Stopping…", with an indeterminate cue), or what it returned or raised, which was discarded. Null
 * when there is nothing to say. Every text is set as text.
 */
export function renderAfterStop(part: ToolCallPart): HTMLElement | null {
  const late = part.late && typeof part.late === "object" ? part.late : null;
  if (!late && part.stopping !== true) return null;
  const el = h("div", "aiw-after-stop");
  if (!late) {
    el.dataset.phase = "stopping";
    el.setAttribute("role", "status");
    el.title = "The call has ended; its thread cannot be stopped from outside and still runs. Whatever it returns is discarded.";
    const cue = h("span", "aiw-after-stop-cue");
    cue.setAttribute("aria-hidden", "true");
    el.append(cue, h("span", "aiw-after-stop-label", "Stopping… (the tool has not returned yet)"));
    return el;
  }
  const raised = late.kind === "raised";
  el.dataset.phase = raised ? "raised" : "returned";
  el.title = "The call had already ended: this was not used, and the model was not told.";
  el.append(h("span", "aiw-after-stop-label", raised ? "Raised after the stop:" : "Returned after the stop: discarded"));
  const preview = typeof late.preview === "string" ? late.preview : "";
  if (preview || raised) el.append(h("span", "aiw-after-stop-preview", preview || "(no message)"));
  return el;
}

function renderCitations(citations: Citation[]): HTMLElement {
  const list = h("ul", "aiw-citations");
  for (const c of citations) {
    if (!c || typeof c !== "object") continue;
    const item = h("li", "aiw-citation");
    const label = (typeof c.title === "string" && c.title) || (typeof c.url === "string" ? c.url : "source");
    if (safeLinkUrl(c.url)) {
      const a = h("a", undefined, label);
      a.href = c.url;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      item.append(a);
    } else {
      item.append(h("span", undefined, label));
      // Not a web address (an MCP resource): the card can open it from the call's server (render/resourceopen).
      if (typeof c.url === "string" && c.url) item.dataset.uri = c.url;
    }
    if (typeof c.snippet === "string" && c.snippet) item.append(h("div", "aiw-citation-snippet", c.snippet));
    list.append(item);
  }
  return list;
}

function attachmentImage(a: Attachment): string | null {
  const mime = typeof a.mime_type === "string" ? a.mime_type : "";
  if (!IMAGE_MIME.test(mime)) return null;
  if (typeof a.data === "string" && BASE64.test(a.data)) return `data:${mime};base64,${a.data.replace(/\s+/g, "")}`;
  return safeImageUrl(a.url) ? a.url : null;
}

function renderAttachments(attachments: Attachment[]): HTMLElement {
  const box = h("div", "aiw-attachments");
  for (const a of attachments) {
    if (!a || typeof a !== "object") continue;
    const name = (typeof a.name === "string" && a.name) || (typeof a.mime_type === "string" ? a.mime_type : "attachment");
    const src = attachmentImage(a);
    if (src) {
      const img = h("img", "aiw-attachment-image");
      img.alt = name;
      img.src = src;
      box.append(img);
    } else if (safeLinkUrl(a.url)) {
      const link = h("a", "aiw-attachment", name);
      link.href = a.url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      box.append(link);
    } else {
      box.append(h("span", "aiw-attachment", `${name}${a.mime_type && a.mime_type !== name ? ` (${a.mime_type})` : ""}`));
    }
  }
  return box;
}
