// The conversation as the front end knows it: finished messages (message models, a linked list from
// `last_message`) and live messages (built from patches). Pure logic, no DOM. One store per widget model,
// shared by all its views; it tells subscribers exactly which message / part changed.

import type { AnyModel } from "@anywidget/types";
import { LiveMessages, type StoreEvent } from "./live";
import { isRecord, normalizeMessage } from "./normalize";
import type { Message, MessageModelTraits, WidgetTraits } from "./types";

export type { StoreEvent };
export type Listener = (event: StoreEvent) => void;

const REF_PREFIX = "IPY_MODEL_";

export class ChatStore {
  private readonly finished = new Map<string, Message>(); // message id -> message
  private chain: string[] = []; // model refs, oldest first
  private readonly chainPos = new Map<string, number>(); // model ref -> position in `chain`
  private readonly refIds = new Map<string, string>(); // model ref -> message id
  private readonly listeners = new Set<Listener>();
  private generation = 0;
  /** After "clear": the head at that moment; the walk never goes past it (the old conversation). */
  private barrier: string | null = null;
  private walking: Promise<void> = Promise.resolve();
  private attached = 0;
  /** Resolves once the finished messages known at the first attach are loaded. */
  ready: Promise<void> = Promise.resolve();

  private readonly live: LiveMessages;

  constructor(readonly model: AnyModel<WidgetTraits>) {
    this.live = new LiveMessages(
      (id) => this.finished.has(id),
      (event) => this.emit(event),
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
    this.model.on("change:last_message", this.onHead);
    this.ready = this.loadFinished();
  }

  detach(): void {
    if (--this.attached > 0) return;
    this.attached = 0;
    this.model.off("msg:custom", this.onCustom);
    this.model.off("change:last_message", this.onHead);
  }

  private readonly onCustom = (msg: unknown): void => this.handle(msg);
  private readonly onHead = (): void => void this.loadFinished();

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

  // ---- finished messages: the linked list -----------------------------------------------------------

  /** Follows `last_message` back until a message model already known: O(new messages). Serialised. */
  loadFinished(): Promise<void> {
    const generation = this.generation;
    this.walking = this.walking.then(() => this.walk(generation)).catch((err) => console.warn("ai_widgets:", err));
    return this.walking;
  }

  private async walk(generation: number): Promise<void> {
    const head = String(this.model.get("last_message") ?? "");
    if (generation !== this.generation) return;
    const found: [string, Message][] = [];
    let ref = head;
    while (ref && ref !== this.barrier && !this.chainPos.has(ref)) {
      if (!ref.startsWith(REF_PREFIX)) break;
      const m = await this.model.widget_manager.get_model<MessageModelTraits>(ref.slice(REF_PREFIX.length));
      if (generation !== this.generation) return;
      const message = normalizeMessage(m.get("message"));
      if (message) found.push([ref, message]);
      ref = String(m.get("previous") ?? "");
    }
    const keep = ref && this.chainPos.has(ref) ? this.chainPos.get(ref)! + 1 : 0;
    for (let i = this.chain.length - 1; i >= keep; i--) this.dropRef(this.chain[i]);
    this.chain.length = keep;
    for (let i = found.length - 1; i >= 0; i--) this.addFinished(found[i][0], found[i][1]);
  }

  private dropRef(ref: string): void {
    const id = this.refIds.get(ref);
    this.chainPos.delete(ref);
    this.refIds.delete(ref);
    if (id !== undefined && this.finished.delete(id)) this.emit({ kind: "message", id });
  }

  private addFinished(ref: string, message: Message): void {
    this.chainPos.set(ref, this.chain.length);
    this.chain.push(ref);
    this.refIds.set(ref, message.id);
    this.finished.set(message.id, message);
    this.live.delete(message.id); // the finished copy wins, whether or not "end" came first
    this.emit({ kind: "message", id: message.id });
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
      this.live.snapshot(Array.isArray(msg.live) ? msg.live : []);
    } else if (msg.type === "error") {
      this.emit({ kind: "error", message: String(msg.message ?? "error") });
    }
  }

  /** Applies one op of a patch (docs/protocol.md); ops for unknown messages are ignored. */
  apply(op: unknown): void {
    if (!Array.isArray(op)) return;
    if (op[0] === "clear") this.clear();
    else this.live.apply(op);
  }

  private clear(): void {
    this.generation++;
    this.barrier = String(this.model.get("last_message") ?? "") || this.barrier;
    this.finished.clear();
    this.chain = [];
    this.chainPos.clear();
    this.refIds.clear();
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
