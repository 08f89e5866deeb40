// The conversation as the front end knows it: finished messages (the model's `history`) and live messages (built
// from patches). Pure logic, no DOM. One store per model object a host passes (shared by the views it passes it to;
// a host that passes one per view gets one store per view, which is why every write below is idempotent); it tells
// subscribers exactly which message / part changed.
//
// Finished messages (docs/protocol.md): a view starts from `history`; each message finished later comes once, in a
// "finish" op, and the store appends it to the model's own `history` array in place (no `set`, nothing goes back to
// the kernel), so whatever the host keeps of the model's state (a notebook saved by JupyterLab, a second view) has
// the whole conversation, while finishing a message costs only that message. A gap (ops missed while no view
// listened, or a host that replays an older state) is filled by asking the kernel for what is missing. The live
// messages are kept in the model's `live` array the same way, so a notebook saved mid-turn shows the reply as it
// stood.

import type { AnyModel } from "@anywidget/types";
import { LiveMessages, setAfterStop, type StoreEvent } from "./live";
import { asPatchOp, isRecord, normalizeMessage } from "./normalize";
import type { Message, OutgoingMessage, WidgetTraits } from "./types";

export type { StoreEvent };
export type Listener = (event: StoreEvent) => void;

const idOf = (raw: unknown): string => (isRecord(raw) && typeof raw.id === "string" ? raw.id : "");

export class ChatStore {
  private readonly finished = new Map<string, Message>(); // message id -> message
  private order: string[] = []; // the ids of `history`, position by position ("" for a malformed entry)
  private readonly own: unknown[] = []; // stands in for `history` when the model's state has none
  private readonly ownLive: unknown[] = []; // and for `live`
  private readonly listeners = new Set<Listener>();
  private attached = 0;
  private syncing = false;
  /** The kernel's notices about the session (numbered; a snapshot repeats them all), each shown once. */
  readonly notices: string[] = [];
  /** Resolves once the finished messages known at the first attach are loaded (at once: loading is synchronous). */
  readonly ready: Promise<void> = Promise.resolve();

  private readonly live: LiveMessages;

  constructor(readonly model: AnyModel<WidgetTraits>) {
    this.live = new LiveMessages(
      (id) => this.finished.has(id),
      (event) => this.emit(event),
      () => this.saved(),
    );
  }

  // ---- subscription -------------------------------------------------------------------------------

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: StoreEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Starts listening to the model (the first view); `detach` undoes it (the last view). */
  attach(): void {
    if (this.attached++ > 0) return;
    this.model.on("msg:custom", this.onCustom);
    this.model.on("change:history", this.onHistory);
    this.load();
    this.live.restore();
  }

  detach(): void {
    if (--this.attached > 0) return;
    this.attached = 0;
    this.model.off("msg:custom", this.onCustom);
    this.model.off("change:history", this.onHistory);
  }

  private readonly onCustom = (msg: unknown): void => this.handle(msg);
  private readonly onHistory = (): void => this.load();

  // ---- reading ------------------------------------------------------------------------------------

  /** The message shown for `id`: the finished copy once it has arrived, else the live one. */
  get(id: string): Message | undefined {
    return this.finished.get(id) ?? this.live.get(id);
  }

  isLive(id: string): boolean {
    return !this.finished.has(id) && this.live.get(id) !== undefined;
  }

  /** Every message shown, ordered by `index`. */
  messages(): Message[] {
    const all = [...this.finished.values()];
    for (const id of this.live.ids()) if (!this.finished.has(id)) all.push(this.live.get(id)!);
    return all.sort((a, b) => a.index - b.index);
  }

  get size(): number {
    let n = this.finished.size;
    for (const id of this.live.ids()) if (!this.finished.has(id)) n++;
    return n;
  }

  // ---- finished messages: the model's `history` -------------------------------------------------------

  /** The model's `history` array, which the store keeps current in place. */
  private history(): unknown[] {
    const history = this.model.get("history");
    return Array.isArray(history) ? history : this.own;
  }

  /** The model's `live` array (the live messages, for saved state), likewise. */
  private saved(): unknown[] {
    const live = this.model.get("live");
    return Array.isArray(live) ? live : this.ownLive;
  }

  /** What a view asks the kernel for when it opens: whatever follows the finished messages it holds. */
  syncMessage(): OutgoingMessage {
    const history = this.history();
    const last = history.length ? idOf(history[history.length - 1]) : "";
    return last ? { type: "sync", have: history.length, last } : { type: "sync", have: history.length };
  }

  private resync(): void {
    if (this.syncing) return;
    this.syncing = true;
    this.model.send(this.syncMessage());
  }

  /** Brings the finished messages in line with `history` (kept: the longest common start). */
  private load(): void {
    const history = this.history();
    const common = Math.min(this.order.length, history.length);
    let keep = 0;
    while (keep < common && idOf(history[keep]) === this.order[keep]) keep++;
    for (let i = this.order.length - 1; i >= keep; i--) {
      const id = this.order[i];
      if (id && this.finished.delete(id)) this.emit({ kind: "message", id });
    }
    this.order.length = keep;
    for (let i = keep; i < history.length; i++) this.add(history[i]);
  }

  private add(raw: unknown): void {
    const message = normalizeMessage(raw);
    this.order.push(message?.id ?? "");
    if (!message) return;
    this.finished.set(message.id, message);
    this.live.delete(message.id); // the finished copy replaces the live one
    this.emit({ kind: "message", id: message.id });
  }

  /** Op "finish": `raw` is finished message number `position` (0-based); O(1) when nothing was missed. */
  private finish(position: unknown, raw: unknown): void {
    const id = idOf(raw);
    if (typeof position !== "number" || !Number.isInteger(position) || position < 0 || !id) return;
    const history = this.history();
    if (position === history.length) history.push(raw);
    else if (position > history.length || idOf(history[position]) !== id) return this.resync();
    // `history[position]` is this message now (appended here, or already by another store on this model).
    if (position === this.order.length) this.add(history[position]);
    else if (position > this.order.length) this.load();
  }

  /** The finished part of a snapshot: the kernel's messages from `from` on. */
  private takeFinished(from: unknown, list: unknown): void {
    if (typeof from !== "number" || !Number.isInteger(from) || from < 0 || !Array.isArray(list)) return;
    const history = this.history();
    if (from > history.length) return this.resync(); // the answer to another view's sync, which holds more
    history.length = from;
    for (const raw of list) history.push(raw);
    this.load();
  }

  // ---- kernel messages --------------------------------------------------------------------------------

  /** Whether a kernel has answered this model (a widget restored from a saved notebook has none). */
  connected = false;

  handle(msg: unknown): void {
    if (!isRecord(msg)) return;
    if (!this.connected) {
      this.connected = true;
      this.emit({ kind: "connected" });
    }
    if (msg.type === "patch" && Array.isArray(msg.ops)) {
      for (const op of msg.ops) {
        try {
          this.apply(op);
        } catch (err) {
          console.warn("ai_widgets: bad op", op, err);
        }
      }
    } else if (msg.type === "snapshot") {
      this.syncing = false;
      this.takeFinished(msg.from, msg.finished);
      this.live.snapshot(Array.isArray(msg.live) ? msg.live : []);
      const notices: unknown[] = Array.isArray(msg.notices) ? msg.notices : [];
      notices.forEach((text, index) => this.notice(index, text));
    } else if (msg.type === "error" && typeof msg.notice === "number") {
      this.notice(msg.notice, msg.message);
    } else if (msg.type === "error") {
      const id = typeof msg.id === "string" ? { id: msg.id } : {};
      this.emit({ kind: "error", message: String(msg.message ?? "error"), ...id });
    } else if (msg.type === "completions" || msg.type === "attachment" || msg.type === "sent") {
      this.emit({ kind: "reply", message: msg });
    }
  }

  /** Notice number `index`, shown unless it already was (it came live and again in a snapshot). */
  private notice(index: number, text: unknown): void {
    if (index !== this.notices.length) return; // seen, or out of order (the next snapshot brings them in order)
    this.notices.push(String(text ?? "notice"));
    this.emit({ kind: "error", message: this.notices[index] });
  }

  /** Applies one op of a patch (docs/protocol.md); malformed ops, and ops for unknown messages, are ignored. */
  apply(raw: unknown): void {
    const op = asPatchOp(raw);
    if (op === null) return;
    if (op[0] === "finish") this.finish(op[1], op[2]);
    else if (op[0] === "clear") this.clear();
    else if (op[0] === "call" && this.finished.has(op[1])) this.afterStop(op[1], op[2], op[3]);
    else this.live.apply(op);
  }

  /** A `call` op for a finished message: only what a call's thread did after the call ended applies (the call's
   * record never changes); set in place, so the model's `history` (saved with the notebook) holds it too. */
  private afterStop(id: string, callId: string, fields: Record<string, unknown>): void {
    const message = this.finished.get(id);
    const index = message ? message.parts.findIndex((p) => p.kind === "tool_call" && p.tool_call_id === callId) : -1;
    const part = message?.parts[index];
    if (part?.kind === "tool_call" && isRecord(fields) && setAfterStop(part, fields)) this.emit({ kind: "call", id, index });
  }

  private clear(): void {
    this.history().length = 0; // in place, as the kernel empties its own
    this.finished.clear();
    this.order = [];
    this.live.clear();
    this.emit({ kind: "reset" });
  }
}

const stores = new WeakMap<object, ChatStore>();

/** The store of a widget model, shared by all its views. */
export function storeFor(model: AnyModel<WidgetTraits>): ChatStore {
  let store = stores.get(model);
  if (!store) {
    store = new ChatStore(model);
    stores.set(model, store);
  }
  return store;
}
