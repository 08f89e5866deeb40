// A fake anywidget model (get/set/on/off/send) and message builders.

import type { AnyModel } from "@anywidget/types";
import { afterEach, expect } from "vitest";
import type { Message, Part, ToolCallPart, WidgetTraits } from "../src/types";
import { ChatView } from "../src/view";

type Handler = (...args: unknown[]) => void;

class Emitter {
  handlers = new Map<string, Set<Handler>>();

  on(name: string, cb: Handler): void {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name)!.add(cb);
  }

  off(name?: string | null, cb?: Handler | null): void {
    if (!name) this.handlers.clear();
    else if (!cb) this.handlers.delete(name);
    else this.handlers.get(name)?.delete(cb);
  }

  emit(name: string, ...args: unknown[]): void {
    for (const cb of [...(this.handlers.get(name) ?? [])]) cb(...args);
  }

  listenerCount(): number {
    let n = 0;
    for (const set of this.handlers.values()) n += set.size;
    return n;
  }
}

export class FakeModel extends Emitter {
  attrs: WidgetTraits = {
    _history: [],
    _live: [],
    _tools: {},
    _usage: {},
    _busy: false,
    _allowed_always: [],
    suggestions: [],
    collapse_tool_calls: true,
    placeholder: "Message the model…",
    _kernel_mode: "test",
    compact: false,
    _scope: "chat",
    _bench: [],
  };
  sent: unknown[] = [];
  /** How many finished messages the kernel has sent (what its `history` holds). */
  finishedCount = 0;

  constructor(traits: Partial<WidgetTraits> = {}) {
    super();
    Object.assign(this.attrs, traits);
  }

  get<K extends keyof WidgetTraits>(key: K): WidgetTraits[K] {
    return this.attrs[key];
  }

  set<K extends keyof WidgetTraits>(key: K, value: WidgetTraits[K]): void {
    this.attrs[key] = value;
    this.emit(`change:${key}`);
  }

  save_changes(): void {}

  send(content: unknown): void {
    this.sent.push(content);
  }

  /** A message from the kernel. */
  custom(msg: unknown): void {
    this.emit("msg:custom", msg, []);
  }

  patch(...ops: unknown[]): void {
    if (ops.some((op) => Array.isArray(op) && op[0] === "clear")) this.finishedCount = 0;
    this.custom({ type: "patch", ops });
  }

  /** A finished message, as the kernel sends it: a "finish" op; or (notify: false, or no view listens yet) in the
   * state a view opens with. Returns its position. */
  finish(message: Message, { notify = true } = {}): number {
    const position = this.finishedCount++;
    if (notify && this.handlers.get("msg:custom")?.size) this.patch(["finish", position, message]);
    else this.attrs._history.push(message);
    return position;
  }

  asModel(): AnyModel<WidgetTraits> {
    return this as unknown as AnyModel<WidgetTraits>;
  }
}

/** Lets pending promises settle. */
export const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

export function user(id: string, index: number, text: string): Message {
  return { id, index, role: "user", status: "completed", parts: [{ kind: "text", text }] };
}

export function assistant(id: string, index: number, parts: Part[] = [], extra: Partial<Message> = {}): Message {
  return {
    id,
    index,
    role: "assistant",
    status: "in_progress",
    finish_reason: null,
    usage: null,
    error: null,
    status_text: null,
    parts,
    ...extra,
  };
}

export function call(id: string, name: string, extra: Partial<ToolCallPart> = {}): ToolCallPart {
  return {
    kind: "tool_call",
    tool_call_id: id,
    tool_name: name,
    parsed_arguments: {},
    state: "streaming",
    progress: null,
    approval_reason: null,
    decision: null,
    decision_reason: null,
    provider_executed: false,
    started_at: 1000,
    run_started_at: null,
    finished_at: null,
    outcome: null,
    ...extra,
  };
}

/** A view on a fake model, mounted in the document. */
/** The views the tests mounted: destroyed after each test, so no timer of theirs (a long conversation's earlier
 * messages built when idle) fires once the test's environment is torn down. */
const mountedViews = new Set<ChatView>();
afterEach(() => {
  for (const view of mountedViews) view.destroy();
  mountedViews.clear();
});

export async function mount(model: FakeModel): Promise<{ view: ChatView; el: HTMLElement; root: HTMLElement }> {
  const el = document.createElement("div");
  document.body.append(el);
  const view = new ChatView(model.asModel(), el);
  mountedViews.add(view);
  await settle();
  view.flush();
  return { view, el, root: el.querySelector(".aiw") as HTMLElement };
}

export const $ = <T extends Element = HTMLElement>(root: ParentNode, sel: string): T => {
  const el = root.querySelector<T>(sel);
  if (!el) throw new Error(`no ${sel}`);
  return el;
};

/** Whatever is in `root`, nothing in it can run script. */
export function assertInert(root: Element): void {
  for (const el of root.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    expect(["script", "iframe", "object", "embed", "svg", "style", "form", "base", "meta", "link"]).not.toContain(tag);
    for (const attr of el.attributes) {
      expect(attr.name.startsWith("on"), `${tag}[${attr.name}]`).toBe(false);
      expect(attr.name).not.toBe("style");
      if (["href", "src", "xlink:href", "action", "formaction"].includes(attr.name)) {
        const ok = tag === "img" ? /^(https?:|data:image\/)/i : /^(https?:|mailto:)/i;
        expect(attr.value, `${tag}[${attr.name}]`).toMatch(ok);
      }
    }
    if (tag === "a" && el.hasAttribute("href")) {
      expect(el.getAttribute("target")).toBe("_blank");
      expect(el.getAttribute("rel")).toBe("noopener noreferrer");
    }
  }
}
