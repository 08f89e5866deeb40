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
//
// The kernel's state carries only the newest finished messages (about a screen); its `older` trait says how many
// come before them. Once the kernel has answered, the store asks for those a chunk at a time, newest first, and
// puts each chunk at the start of `history`, in place too: so the whole conversation reaches the front end once,
// the part on screen first, and a notebook saved after that holds all of it. Positions in ops and messages
// (`finish`, `sync`, `snapshot`, `older`) count from the conversation's first finished message, held or not.

import type { AnyModel } from "@anywidget/types";
import { LiveMessages, setAfterStop, type StoreEvent } from "./live";
import { asPatchOp, isRecord, normalizeMessage } from "./normalize";
import type { Message, OutgoingMessage, WidgetTraits } from "./types";
import { readTrait } from "./traits";

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
  /** How many finished messages come before the first one of `history` (not held yet). */
  private before = 0;
  private askingOlder = false;
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
    this.model.on("change:_history", this.onHistory);
    this.load(true);
    this.live.restore();
  }

  detach(): void {
    if (--this.attached > 0) return;
    this.attached = 0;
    this.model.off("msg:custom", this.onCustom);
    this.model.off("change:_history", this.onHistory);
  }

  private readonly onCustom = (msg: unknown): void => this.handle(msg);
  // A new state sets `history` and `older` together (so `older` is current when this runs).
  private readonly onHistory = (): void => this.load(true);

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
    const history = readTrait(this.model, "_history");
    return Array.isArray(history) ? history : this.own;
  }

  /** The model's `live` array (the live messages, for saved state), likewise. */
  private saved(): unknown[] {
    const live = readTrait(this.model, "_live");
    return Array.isArray(live) ? live : this.ownLive;
  }

  /** What a view asks the kernel for when it opens: whatever follows the finished messages it holds. */
  syncMessage(): OutgoingMessage {
    const history = this.history();
    const have = this.before + history.length;
    const last = history.length ? idOf(history[history.length - 1]) : "";
    return last ? { type: "sync", have, last } : { type: "sync", have };
  }

  /** How many finished messages the store does not hold yet (earlier than all it holds). */
  get missing(): number {
    return this.before;
  }

  /** How many finished messages the state's `history` leaves out before its first (the `older` trait); a copy
   * that holds the message the trait names later (the earlier ones were put in front of it) misses fewer. */
  private missingAtLoad(history: unknown[]): number {
    const older = readTrait(this.model, "_older");
    const count = isRecord(older) && typeof older.count === "number" && Number.isInteger(older.count) ? older.count : 0;
    const first = isRecord(older) && typeof older.before === "string" ? older.before : "";
    if (count <= 0 || !first) return 0;
    // Where that message is: first (as the kernel sent it), at `count` (a saved copy with everything), or else.
    let at = idOf(history[0]) === first ? 0 : count < history.length && idOf(history[count]) === first ? count : -1;
    if (at < 0) at = history.findIndex((raw) => idOf(raw) === first);
    return at < 0 ? count : Math.max(0, count - at);
  }

  /** Asks for the chunk of finished messages before the first one held (one request at a time). */
  private askOlder(): void {
    const history = this.history();
    const first = idOf(history[0]);
    if (this.askingOlder || this.before <= 0 || !first || !this.attached) return;
    this.askingOlder = true;
    this.model.send({ type: "older", at: this.before, before: first });
  }

  /** An `older` answer: the finished messages from `from` on, up to the first one held (`before`). */
  private takeOlder(from: unknown, before: unknown, list: unknown): void {
    this.askingOlder = false;
    if (typeof from !== "number" || !Number.isInteger(from) || from < 0 || !Array.isArray(list)) return;
    const history = this.history();
    const n = list.length;
    // Ours if it ends right before the first message held (else it answers another front end's request).
    if (from + n !== this.before || n === 0 || this.order[0] !== before) return;
    if (idOf(history[0]) === before) history.splice(0, 0, ...list);
    else if (idOf(history[n]) !== before || idOf(history[0]) !== idOf(list[0])) return; // else another store put it

    this.before = from;
    const ids: string[] = [];
    const order: string[] = [];
    for (const raw of list) {
      const message = normalizeMessage(raw);
      order.push(message?.id ?? "");
      if (!message) continue;
      this.finished.set(message.id, message);
      ids.push(message.id);
    }
    this.order = [...order, ...this.order];
    this.emit({ kind: "older", ids });
    // The next chunk once this one's work is done, so the page stays responsive between them.
    setTimeout(() => this.askOlder(), 0);
  }

  private resync(): void {
    if (this.syncing) return;
    this.syncing = true;
    this.model.send(this.syncMessage());
  }

  /** Brings the finished messages in line with `history` (kept: the longest common start); `state`: the
   * model's state was (re)set, so where `history` starts comes from its `older` trait again. */
  private load(state = false): void {
    const history = this.history();
    const before = state ? this.missingAtLoad(history) : this.before;
    if (before !== this.before) {
      this.before = before;
      this.removeFrom(0); // positions moved: take it all again
    }
    const common = Math.min(this.order.length, history.length);
    let keep = 0;
    while (keep < common && idOf(history[keep]) === this.order[keep]) keep++;
    this.removeFrom(keep);
    for (let i = keep; i < history.length; i++) this.add(history[i]);
  }

  /** Drops the finished messages from position `keep` of `history` on. */
  private removeFrom(keep: number): void {
    for (let i = this.order.length - 1; i >= keep; i--) {
      const id = this.order[i];
      if (id && this.finished.delete(id)) this.emit({ kind: "message", id });
    }
    this.order.length = Math.min(this.order.length, keep);
  }

  private add(raw: unknown): void {
    const message = normalizeMessage(raw);
    this.order.push(message?.id ?? "");
    if (!message) return;
    this.finished.set(message.id, message);
    this.live.delete(message.id); // the finished copy replaces the live one
    this.emit({ kind: "message", id: message.id });
  }

  /** Op "finish": `raw` is finished message number `at` (0-based); O(1) when nothing was missed. */
  private finish(at: unknown, raw: unknown): void {
    const id = idOf(raw);
    if (typeof at !== "number" || !Number.isInteger(at) || at < 0 || !id) return;
    const position = at - this.before; // in `history`
    if (position < 0) return this.resync();
    const history = this.history();
    if (position === history.length) history.push(raw);
    else if (position > history.length || idOf(history[position]) !== id) return this.resync();
    // `history[position]` is this message now (appended here, or already by another store on this model).
    if (position === this.order.length) this.add(history[position]);
    else if (position > this.order.length) this.load();
  }

  /** The finished part of a snapshot: the kernel's messages from `from` on; `fresh`: drop every one held first
   * (they are not the kernel's), the earlier ones are asked for again. */
  private takeFinished(from: unknown, list: unknown, fresh: boolean): void {
    if (typeof from !== "number" || !Number.isInteger(from) || from < 0 || !Array.isArray(list)) return;
    const history = this.history();
    if (fresh) {
      history.length = 0;
      this.removeFrom(0);
      this.before = from;
      this.askingOlder = false;
    }
    let position = from - this.before; // in `history`
    if (position > history.length) return this.resync(); // the answer to another view's sync, which holds more
    if (position < 0) {
      list = list.slice(-position); // another view's, from earlier than the first one held
      position = 0;
    }
    history.length = position;
    for (const raw of list as unknown[]) history.push(raw);
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
      this.takeFinished(msg.from, msg.finished, msg.fresh === true);
      this.live.snapshot(Array.isArray(msg.live) ? msg.live : []);
      const notices: unknown[] = Array.isArray(msg.notices) ? msg.notices : [];
      notices.forEach((text, index) => this.notice(index, text));
      this.askOlder();
    } else if (msg.type === "older") {
      this.takeOlder(msg.from, msg.before, msg.finished);
    } else if (msg.type === "error" && typeof msg.notice === "number") {
      this.notice(msg.notice, msg.message);
    } else if (msg.type === "error") {
      const id = typeof msg.id === "string" ? { id: msg.id } : {};
      const call = typeof msg.tool_call_id === "string" ? { callId: msg.tool_call_id } : {};
      const fields = typeof msg.tool_call_id === "string" || msg.fields !== undefined ? { fields: textFields(msg.fields) } : {};
      this.emit({ kind: "error", message: String(msg.message ?? "error"), ...id, ...call, ...fields });
    } else if (msg.type === "completions" || msg.type === "attachment" || msg.type === "sent" || msg.type === "returned" || msg.type === "new_chat" || msg.type === "prompts" || msg.type === "app_reply" || msg.type === "resource" || msg.type === "cell_action") {
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
    else if (op[0] === "cut") this.cut(op[1]);
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

  /** Op "cut": the finished messages from number `at` on left the active path (they are an earlier branch now);
   * in place, as the kernel cuts its own. A cut before the first one held starts again from a fresh snapshot. */
  private cut(at: number): void {
    if (!Number.isInteger(at) || at < 0) return;
    const history = this.history();
    const position = at - this.before;
    if (position < 0) {
      history.length = 0;
      this.removeFrom(0);
      this.before = 0;
      this.askingOlder = false;
      return this.resync();
    }
    if (position < history.length) history.length = position;
    this.removeFrom(position);
  }

  private clear(): void {
    this.history().length = 0; // in place, as the kernel empties its own
    this.before = 0;
    this.askingOlder = false;
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

/** The kernel's problems by field name, text only (anything else is dropped). */
function textFields(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [name, text] of Object.entries(value)) if (typeof text === "string") out[name] = text;
  }
  return out;
}
