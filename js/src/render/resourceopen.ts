// Resources opened from a card: each citation of a call's result that is not a web address (an MCP resource link
// or embedded resource) gets an Open button; the kernel reads it from the call's server (resource_open) and the
// answer (`resource`, `deliverResource`) shows under the citation as text, never markup.

import { button, h, setText } from "../dom";
import type { OutgoingMessage } from "../types";

/** The slots waiting for (or showing) a resource, by call id and URI. */
const slots = new Map<string, Map<string, HTMLElement>>();

/** Adds Open to each citation in `el` that names a non-web URI (`data-uri`), for the call `callId`. */
export function addOpeners(el: HTMLElement, callId: string, send: (msg: OutgoingMessage) => void): void {
  for (const item of Array.from(el.querySelectorAll<HTMLElement>(".aiw-citation[data-uri]"))) {
    const uri = item.dataset.uri ?? "";
    if (!uri || item.querySelector(".aiw-resource-open")) continue;
    const shown = h("pre", "aiw-resource-text");
    shown.hidden = true;
    const open = button("aiw-btn aiw-resource-open", "Open", () => {
      open.disabled = true;
      shown.hidden = false;
      setText(shown, "Reading…");
      let byUri = slots.get(callId);
      if (!byUri) slots.set(callId, (byUri = new Map()));
      byUri.set(uri, shown);
      send({ type: "resource_open", tool_call_id: callId, uri });
    });
    open.setAttribute("aria-label", `Open ${uri}`);
    item.append(open, shown);
  }
}

/** A kernel `resource` message: its text (or why it could not be read) in the slot that asked. */
export function deliverResource(msg: Record<string, unknown>): void {
  const { tool_call_id: callId, uri } = msg;
  if (typeof callId !== "string" || typeof uri !== "string") return;
  const slot = slots.get(callId)?.get(uri);
  if (!slot) return;
  slot.classList.toggle("aiw-resource-error", typeof msg.error === "string");
  setText(slot, typeof msg.error === "string" ? msg.error : typeof msg.text === "string" ? msg.text || "(empty)" : "");
}
