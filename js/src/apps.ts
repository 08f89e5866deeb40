// MCP Apps (io.modelcontextprotocol/ui), the host's side of the postMessage protocol, as pure logic (no DOM): a
// session per app frame takes the app's JSON-RPC messages (ui/initialize, ui/notifications/initialized,
// size-changed, tools/call, ...) and the call's state (its arguments as they stream, complete, its outcome), and
// says what to post to the app, what to ask of the kernel, and how tall to make the frame. Nothing is posted to the
// app before it said it is initialized; tool-input goes once, tool-input-partial only before it, the result once.

import { type LinkParts, linkParts } from "./asking";
import type { Json, JsonObject, Outcome } from "./types";

export const PROTOCOL_VERSION = "2026-01-26";
/** The frame's height bounds, in CSS pixels (an app asks for its own height with size-changed). */
export const MIN_HEIGHT = 60;
export const MAX_HEIGHT = 800;
export const START_HEIGHT = 200;
/** The most tool calls of one app waiting for the kernel at once (more are refused at once). */
export const MAX_PENDING_CALLS = 8;

export interface HostContextInput {
  theme: "light" | "dark";
  /** The tool as its definition says (name, title, description, input schema). */
  tool: { name: string; title?: string | null; description?: string | null; inputSchema?: Json };
  toolCallId: string;
  locale?: string;
  timeZone?: string;
  maxWidth?: number;
}

export type RpcId = string | number;
export type RpcMessage = { jsonrpc: "2.0"; id?: RpcId; method?: string; params?: unknown; result?: unknown; error?: unknown };

/** What the host does after a message: post these to the app, ask the kernel for these calls, size the frame. */
export interface Effects {
  post: RpcMessage[];
  calls: { request: number; name: string; arguments: JsonObject }[];
  height?: number;
  /** Log lines the app sent (notifications/message), as text. */
  logs: string[];
  /** Links the app asks to open (ui/open-link), checked http(s): the host asks the person, then `linkAnswer`. */
  links: { id: RpcId; link: LinkParts }[];
}

const none = (): Effects => ({ post: [], calls: [], logs: [], links: [] });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The host context for ui/initialize (and host-context-changed). */
export function hostContext(input: HostContextInput): JsonObject {
  const context: JsonObject = {
    theme: input.theme,
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    platform: "web",
    toolInfo: {
      id: input.toolCallId,
      tool: {
        name: input.tool.name,
        ...(input.tool.title ? { title: input.tool.title } : {}),
        description: input.tool.description ?? "",
        inputSchema: (input.tool.inputSchema as Json) ?? { type: "object" },
      },
    },
    containerDimensions: { maxHeight: MAX_HEIGHT, ...(input.maxWidth ? { maxWidth: Math.round(input.maxWidth) } : {}) },
  };
  if (input.locale) context.locale = input.locale;
  if (input.timeZone) context.timeZone = input.timeZone;
  return context;
}

/** An outcome as MCP's CallToolResult (what ui/notifications/tool-result and a tools/call answer carry): text
 * content always; structuredContent when the value is an object; isError for a failure. */
export function callToolResult(outcome: Outcome): JsonObject {
  if (outcome.status !== "success") {
    return { content: [{ type: "text", text: outcome.message || "The tool failed." }], isError: true };
  }
  const value = outcome.value;
  const text = typeof value === "string" ? value : value === undefined || value === null ? (outcome.text ?? "") : JSON.stringify(value);
  const result: JsonObject = { content: [{ type: "text", text }], isError: false };
  if (isObject(value)) result.structuredContent = value as JsonObject;
  return result;
}

/** The frame's height for an app's size-changed: bounded, or undefined for a height that is not a number. */
export function boundedHeight(height: unknown): number | undefined {
  if (typeof height !== "number" || !Number.isFinite(height)) return undefined;
  return Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)));
}

const HOST_CAPABILITIES: JsonObject = { serverTools: {}, logging: {}, openLinks: {} };

/** One app frame's side of the protocol. */
export class AppSession {
  private initialized = false;
  private inputSent = false;
  private resultSent = false;
  private lastPartial = "";
  private queued: RpcMessage[] = [];
  /** Our request number -> the app's JSON-RPC id, for the calls waiting for the kernel. */
  private readonly waiting = new Map<number, RpcId>();

  /** `nextRequest`: where this session's request numbers start (after an earlier session's of the same frame, so
   * a late kernel reply to that one's request never reaches this one's). */
  constructor(
    private context: () => JsonObject,
    private nextRequest = 1,
  ) {}

  /** The number this session's next request to the kernel takes. */
  get requestNumber(): number {
    return this.nextRequest;
  }

  get ready(): boolean {
    return this.initialized;
  }

  /** A message the app posted. Anything that is not JSON-RPC 2.0 is ignored; an unknown request is answered
   * with "method not found". */
  receive(data: unknown): Effects {
    const effects = none();
    if (!isObject(data) || data.jsonrpc !== "2.0" || typeof data.method !== "string") return effects;
    const id = data.id;
    const hasId = typeof id === "string" || typeof id === "number";
    const params = isObject(data.params) ? data.params : {};
    const answer = (result: unknown): void => void (hasId && effects.post.push({ jsonrpc: "2.0", id: id as RpcId, result }));
    const fail = (code: number, message: string): void =>
      void (hasId && effects.post.push({ jsonrpc: "2.0", id: id as RpcId, error: { code, message } }));
    switch (data.method) {
      case "ui/initialize":
        answer({
          protocolVersion: PROTOCOL_VERSION,
          hostInfo: { name: "ai_widgets", version: "1" },
          hostCapabilities: HOST_CAPABILITIES,
          hostContext: this.context(),
        });
        return effects;
      case "ui/notifications/initialized":
        if (!this.initialized) {
          this.initialized = true;
          effects.post.push(...this.queued);
          this.queued = [];
        }
        return effects;
      case "ui/notifications/size-changed": {
        const height = boundedHeight(params.height);
        if (height !== undefined) effects.height = height;
        return effects;
      }
      case "notifications/message": {
        const text = typeof params.data === "string" ? params.data : JSON.stringify(params.data ?? null);
        effects.logs.push(`app: ${String(text).slice(0, 300)}`);
        return effects;
      }
      case "ping":
        answer({});
        return effects;
      case "tools/call": {
        if (!hasId) return effects;
        const name = params.name;
        const args = params.arguments ?? {};
        if (typeof name !== "string" || !name || name.length > 256 || !isObject(args)) {
          fail(-32602, "tools/call needs a tool name and an object of arguments");
          return effects;
        }
        if (this.waiting.size >= MAX_PENDING_CALLS) {
          fail(-32000, `at most ${MAX_PENDING_CALLS} calls of an app wait at once`);
          return effects;
        }
        const request = this.nextRequest++;
        this.waiting.set(request, id as RpcId);
        effects.calls.push({ request, name, arguments: args as JsonObject });
        return effects;
      }
      case "ui/open-link": {
        if (!hasId) return effects;
        const link = linkParts(params.url);
        if (link === null) fail(-32602, "ui/open-link needs an http(s) URL without credentials");
        else effects.links.push({ id: id as RpcId, link });
        return effects;
      }
      case "ui/message":
      case "ui/update-model-context":
      case "ui/request-display-mode":
      case "resources/read":
      default:
        if (data.method === "ui/request-display-mode") answer({ mode: "inline" });
        else fail(-32601, `${data.method} is not supported by this host`);
        return effects;
    }
  }

  /** The person's answer to a link the app asked to open: opened (an empty result), or not (an error). */
  linkAnswer(id: RpcId, opened: boolean): Effects {
    const effects = none();
    if (opened) effects.post.push({ jsonrpc: "2.0", id, result: {} });
    else effects.post.push({ jsonrpc: "2.0", id, error: { code: -32000, message: "The person did not open the link." } });
    return effects;
  }

  /** The kernel's answer to one of this app's calls: its outcome, or why it did not run (a decline). */
  reply(request: number, answer: { outcome?: Outcome | null; error?: string | null }): Effects {
    const effects = none();
    const id = this.waiting.get(request);
    if (id === undefined) return effects;
    this.waiting.delete(request);
    if (answer.outcome) effects.post.push({ jsonrpc: "2.0", id, result: callToolResult(answer.outcome) });
    else effects.post.push({ jsonrpc: "2.0", id, error: { code: -32000, message: answer.error || "The call was not run." } });
    return effects;
  }

  /** The call's arguments so far (while they stream). */
  partialInput(args: JsonObject): Effects {
    if (this.inputSent) return none();
    const key = JSON.stringify(args);
    if (key === this.lastPartial) return none();
    this.lastPartial = key;
    return this.notify("ui/notifications/tool-input-partial", { arguments: args });
  }

  /** The call's arguments, complete. */
  input(args: JsonObject): Effects {
    if (this.inputSent) return none();
    this.inputSent = true;
    return this.notify("ui/notifications/tool-input", { arguments: args });
  }

  /** The call's outcome (once; the complete input goes first if it has not). */
  result(outcome: Outcome, args: JsonObject): Effects {
    if (this.resultSent) return none();
    const effects = this.input(args);
    this.resultSent = true;
    const more = this.notify("ui/notifications/tool-result", callToolResult(outcome));
    effects.post.push(...more.post);
    return effects;
  }

  /** The call ended without an outcome to show (declined, cancelled, skipped). */
  cancelled(reason: string): Effects {
    if (this.resultSent) return none();
    this.resultSent = true;
    return this.notify("ui/notifications/tool-cancelled", { reason });
  }

  /** The host's context changed (the theme). */
  contextChanged(changed: JsonObject): Effects {
    return this.notify("ui/notifications/host-context-changed", changed);
  }

  private notify(method: string, params: JsonObject): Effects {
    const effects = none();
    const message: RpcMessage = { jsonrpc: "2.0", method, params };
    if (this.initialized) effects.post.push(message);
    else if (method === "ui/notifications/tool-input-partial") {
      // Only the newest partial input waits: the app gets it (and the complete one) once it is initialized.
      this.queued = this.queued.filter((m) => m.method !== method);
      this.queued.push(message);
    } else this.queued.push(message);
    return effects;
  }
}

/** The page with a Content-Security-Policy of the extension's restrictive default (and the origins it declared),
 * put first in its head: no connections, no frames, no objects, unless the page declared them. */
export function withPolicy(html: string, csp: Record<string, unknown> | null | undefined): string {
  const origins = (key: string): string =>
    (Array.isArray(csp?.[key]) ? (csp?.[key] as unknown[]) : [])
      .filter((o): o is string => typeof o === "string" && /^(https?|wss?):\/\/[A-Za-z0-9.*:-]+$/.test(o))
      .join(" ");
  const resources = origins("resourceDomains");
  const connect = origins("connectDomains");
  const frames = origins("frameDomains");
  const policy = [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    `media-src data: ${resources}`.trim(),
    `connect-src ${connect || "'none'"}`,
    `frame-src ${frames || "'none'"}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return meta + html;
}
