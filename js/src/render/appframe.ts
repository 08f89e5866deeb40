// An MCP App in its tool call's card: the app's page (from the `apps` trait) in an iframe sandboxed to scripts
// alone (sandbox="allow-scripts", never allow-same-origin: an opaque origin, no access to the notebook's DOM,
// cookies or storage), with the extension's restrictive CSP, speaking the protocol of ../apps through
// postMessage. Messages are taken only from this frame's own window. The app's tool calls go to the kernel
// (app_call) and come back (app_reply, `deliverAppReply`); a link it asks to open opens only once the person says so.

import { AppSession, START_HEIGHT, type Effects, type RpcId, hostContext, withPolicy } from "../apps";
import type { LinkParts } from "../asking";
import { button, h, setText } from "../dom";
import type { JsonObject, OutgoingMessage, Outcome, ToolInfo } from "../types";

export interface AppPageInfo {
  uri?: string;
  html?: string | null;
  error?: string | null;
  csp?: Record<string, unknown> | null;
  prefers_border?: boolean | null;
}

/** The open frames by the call id of their card, for the kernel's replies. */
const frames = new Map<string, Set<AppFrame>>();

/** A kernel `app_reply`: to the frame of the card whose app asked. */
export function deliverAppReply(msg: Record<string, unknown>): void {
  const callId = msg.tool_call_id;
  const request = msg.request;
  if (typeof callId !== "string" || typeof request !== "number") return;
  for (const frame of frames.get(callId) ?? []) frame.reply(request, msg);
}

/** JupyterLab's theme (light unless its body says dark). */
export function pageTheme(): "light" | "dark" {
  const light = document.body?.dataset?.jpThemeLight;
  if (light === "false") return "dark";
  if (light === "true") return "light";
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export class AppFrame {
  readonly el = h("div", "aiw-app");
  private readonly note = h("div", "aiw-app-note");
  private iframe: HTMLIFrameElement | null = null;
  private session: AppSession | null = null;
  private shownHtml: string | null = null;
  private readonly listener = (ev: MessageEvent): void => this.onMessage(ev);
  private theme = pageTheme();
  /** How often the frame loaded its page, and the call's state it was last given (to give again after a reload). */
  private loads = 0;
  private lastState: [string, JsonObject, Outcome | null | undefined] | null = null;
  /** JupyterLab's theme switch: the app is told (host-context-changed). */
  private readonly themeWatch =
    typeof MutationObserver === "function" ? new MutationObserver(() => this.themeChanged()) : null;

  constructor(
    private readonly callId: string,
    private readonly send: (msg: OutgoingMessage) => void,
    private readonly tool: () => { name: string; info: ToolInfo | undefined },
    private readonly log: (line: string) => void = () => {},
  ) {
    this.el.append(this.note);
    this.note.hidden = true;
    let set = frames.get(callId);
    if (!set) frames.set(callId, (set = new Set()));
    set.add(this);
    window.addEventListener("message", this.listener);
    if (document.body) this.themeWatch?.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
  }

  private themeChanged(): void {
    const theme = pageTheme();
    if (theme === this.theme || !this.session?.ready) return;
    this.theme = theme;
    this.apply(this.session.contextChanged({ theme }));
  }

  /** The page, as the `apps` trait has it now (undefined: not read yet). */
  setPage(page: AppPageInfo | undefined): void {
    if (!page) return;
    if (typeof page.html !== "string") {
      setText(this.note, page.error || "The app cannot be shown: its result shows as text.");
      this.note.hidden = false;
      return;
    }
    if (page.html === this.shownHtml) return;
    this.shownHtml = page.html;
    this.note.hidden = true;
    this.iframe?.remove();
    const iframe = document.createElement("iframe");
    iframe.className = "aiw-app-frame";
    iframe.setAttribute("sandbox", "allow-scripts"); // never allow-same-origin: the app runs on an opaque origin
    iframe.setAttribute("referrerpolicy", "no-referrer");
    iframe.title = `App of ${this.tool().info?.title || this.tool().name}`;
    iframe.style.height = `${START_HEIGHT}px`;
    this.el.classList.toggle("aiw-app-borderless", page.prefers_border === false);
    this.session = new AppSession(() => this.context(), this.session?.requestNumber);
    this.loads = 0;
    iframe.addEventListener("load", () => this.loaded(iframe));
    iframe.srcdoc = withPolicy(page.html, page.csp);
    this.iframe = iframe;
    this.el.append(iframe);
  }

  /** A frame moved in the page (a notebook re-rendering its output, or windowing its cells out of view and back)
   * loads its page again and the app starts over: it gets a new session, and the call's state again. */
  private loaded(iframe: HTMLIFrameElement): void {
    if (iframe !== this.iframe || ++this.loads === 1 || !this.session) return;
    this.session = new AppSession(() => this.context(), this.session.requestNumber);
    if (this.lastState) this.update(...this.lastState);
  }

  get shown(): boolean {
    return this.iframe !== null;
  }

  private context(): JsonObject {
    const { name, info } = this.tool();
    let timeZone: string | undefined;
    try {
      timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    } catch {
      timeZone = undefined;
    }
    return hostContext({
      theme: this.theme,
      tool: { name, title: info?.title, description: info?.description, inputSchema: info?.parameters },
      toolCallId: this.callId,
      locale: navigator.language,
      timeZone,
      maxWidth: this.el.clientWidth || undefined,
    });
  }

  private onMessage(ev: MessageEvent): void {
    // Only this frame's own window speaks for this app (another frame, or the page, cannot).
    if (!this.iframe || !this.session || ev.source !== this.iframe.contentWindow) return;
    this.apply(this.session.receive(ev.data));
    this.themeChanged();
  }

  /** The call's state: arguments while they stream, complete, then the outcome (or why it did not run). */
  update(state: string, args: JsonObject, outcome: Outcome | null | undefined): void {
    this.lastState = [state, args, outcome];
    const session = this.session;
    if (!session) return;
    if (state === "streaming") return this.apply(session.partialInput(args));
    this.apply(session.input(args));
    if (outcome && (state === "completed" || state === "failed")) this.apply(session.result(outcome, args));
    else if (state === "rejected" || state === "cancelled" || state === "skipped") {
      this.apply(session.cancelled(outcome?.message || state));
    }
  }

  reply(request: number, msg: Record<string, unknown>): void {
    if (!this.session) return;
    const outcome = msg.outcome && typeof msg.outcome === "object" ? (msg.outcome as Outcome) : null;
    this.apply(this.session.reply(request, { outcome, error: typeof msg.error === "string" ? msg.error : null }));
  }

  private apply(effects: Effects): void {
    const target = this.iframe?.contentWindow;
    // An opaque origin has no name to address: "*" is the only target, and only this frame's window gets it.
    for (const message of effects.post) target?.postMessage(message, "*");
    for (const call of effects.calls) {
      this.send({ type: "app_call", tool_call_id: this.callId, request: call.request, name: call.name, arguments: call.arguments });
    }
    if (effects.height !== undefined && this.iframe) this.iframe.style.height = `${effects.height}px`;
    for (const line of effects.logs) this.log(line);
    for (const { id, link } of effects.links) this.askToOpen(id, link);
  }

  /** The app asks to open a link: the card shows it, its domain in bold, and opens it only if the person says so
   * (the app's answer says which). */
  private askToOpen(id: RpcId, link: LinkParts): void {
    const ask = h("div", "aiw-app-link aiw-input-confirm");
    ask.setAttribute("role", "alertdialog");
    ask.setAttribute("aria-label", `The app asks to open a page on ${link.domain}`);
    const shown = h("span", "aiw-input-link");
    shown.append(h("span", "aiw-link-rest", link.before), h("strong", "aiw-link-domain", link.domain), h("span", "aiw-link-rest", link.after));
    const answer = (opened: boolean): void => {
      ask.remove();
      if (opened) window.open(link.href, "_blank", "noopener,noreferrer");
      if (this.session) this.apply(this.session.linkAnswer(id, opened));
    };
    const yes = button("aiw-btn aiw-btn-primary aiw-app-link-open", `Open ${link.domain}`, () => answer(true));
    const no = button("aiw-btn aiw-app-link-no", "Not now", () => answer(false));
    ask.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.stopPropagation(); // answers the app, not the notebook's edit mode
        answer(false);
      }
    });
    const text = h("span", "aiw-input-confirm-text", "The app asks to open ");
    text.append(shown);
    ask.append(text, yes, no);
    this.el.append(ask);
  }

  destroy(): void {
    window.removeEventListener("message", this.listener);
    this.themeWatch?.disconnect();
    frames.get(this.callId)?.delete(this);
    if (frames.get(this.callId)?.size === 0) frames.delete(this.callId);
    this.iframe?.remove();
    this.iframe = null;
    this.session = null;
  }
}
