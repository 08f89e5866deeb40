// One view of a ChatWidget: listens to the shared store and to trait changes, records what is dirty, and
// flushes the DOM once per animation frame, touching only the messages and parts that changed.

import type { AnyModel } from "@anywidget/types";
import { Backfill } from "./render/backfill";
import { type AppPageInfo, deliverAppReply } from "./render/appframe";
import { deliverResource } from "./render/resourceopen";
import { cellActionsRefused, deliverCellAction } from "./render/cellactions";
import { isRecord } from "./normalize";
import { BenchView } from "./render/bench";
import { ContextMarker } from "./render/contextcut";
import { MessageList } from "./render/list";
import type { PartDirty } from "./render/message";
import { queuedItems } from "./render/queued";
import { Shell } from "./render/shell";
import { hasCodeTool } from "./render/unasked";
import type { CardContext, ToolCardView } from "./render/toolcard";
import { type ChatStore, type StoreEvent, storeFor } from "./store";
import type { Message, OutgoingMessage, ToolInfo, WidgetTraits } from "./types";
import { widgetHost } from "./widgets";
import { readTrait } from "./traits";

const TRAITS = [
  "_busy",
  "_queued",
  "_run_unasked",
  "_usage",
  "_tools",
  "_allowed_always",
  "suggestions",
  "collapse_tool_calls",
  "placeholder",
  "compact",
  "_scope",
  "_bench",
  "_context_cut",
  "_apps",
  "_undone",
] as const;
type Trait = (typeof TRAITS)[number];

interface MessageDirty {
  full: boolean;
  fields: boolean;
  parts: Map<number, PartDirty>;
}

interface Stats {
  frames: number;
  flushMs: number[];
}

const raf: (cb: () => void) => number =
  typeof requestAnimationFrame === "function" ? (cb) => requestAnimationFrame(cb) : (cb) => setTimeout(cb, 16) as unknown as number;
const cancelRaf: (id: number) => void =
  typeof cancelAnimationFrame === "function" ? (id) => cancelAnimationFrame(id) : (id) => clearTimeout(id);

// JupyterLab and Notebook 7 render an output again when its display is updated (as the kernel does when a turn
// ends, to keep the static transcript beside the view current): the output's renderer empties its node and makes a
// new view of the same model, leaving the old one undestroyed. The new view takes the old one over whole: the old
// DOM moves into the new element, and with it everything the person sees or is doing (an opened card, an edit form
// half filled in, unsent text, a banner), because it is the same DOM driven by the same objects. Only what the
// browser drops when a node leaves the page is put back by hand: scroll offsets and the focus (with its caret).
const shown = new Set<ChatView>();
/** Which view's DOM each anywidget element shows: its own, or the one it took over. */
const mounted = new WeakMap<HTMLElement, ChatView>();
const OUTPUT = ".jp-OutputArea-output";

/** anywidget's render: a view in `el`; the cleanup destroys whichever view `el` shows by then. */
export function mount(model: AnyModel<WidgetTraits>, el: HTMLElement): () => void {
  new ChatView(model, el);
  return () => mounted.get(el)?.destroy();
}

export class ChatView {
  readonly shell: Shell;
  /** The notebook output this view is shown in (JupyterLab's, Notebook 7's): null until it is attached there
   * (the renderer attaches a view after making it), and elsewhere. */
  private host: Element | null = null;
  private readonly store: ChatStore;
  private readonly list: MessageList;
  /** The earlier messages of a long conversation, built after the ones on screen. */
  private readonly backfill: Backfill;
  private readonly bench: BenchView;
  private dirty = new Map<string, MessageDirty>();
  private dirtyTraits = new Set<Trait>();
  private resetPending = false;
  private frame: number | null = null;
  private ready = false;
  private destroyed = false;
  private readonly ticking = new Set<ToolCardView>();
  private readonly prompting = new Set<ToolCardView>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private toolsLower = new Map<string, ToolInfo>();
  /** The message marked last (its reply offers Regenerate / Retry). */
  private lastMarked: string | undefined;
  private unsubscribe: (() => void) | null = null;
  /** Where this view's DOM is shown (the anywidget element; the replacing view's, once it took this one over). */
  private el: HTMLElement;
  /** Listening and rendering (not yet for a view that may take over a leftover, see `mount`). */
  private started = false;
  /** Scroll offsets within the view and the element with the focus, kept to put back after a takeover. */
  private readonly scrolled = new Map<Element, [number, number]>();
  private focused: HTMLElement | null = null;
  /** Hides the static transcript shown after this view's output while the view lives (see `hideTranscript`). */
  private transcriptStyle: HTMLStyleElement | null = null;
  private readonly traitHandlers: [string, () => void][] = [];
  // Before a kernel has answered: the "waiting" banner, and the text of a message sent meanwhile. A live kernel
  // that was busy takes that message when it gets to it, so both go once it answers.
  private waitingBanner: HTMLElement | null = null;
  private sentWhileWaiting: string | null = null;
  readonly ctx: CardContext;
  private readonly contextMarker = new ContextMarker();

  constructor(
    private readonly model: AnyModel<WidgetTraits>,
    el: HTMLElement,
  ) {
    this.shell = new Shell((msg) => this.send(msg));
    this.ctx = {
      send: (msg) => void this.send(msg),
      toolInfo: (name) => this.toolInfo(name),
      collapseByDefault: () => this.model.get("collapse_tool_calls") !== false,
      setTicking: (card, on) => this.setTicking(card, on),
      setPrompting: (card, on) => (on ? this.prompting.add(card) : this.prompting.delete(card)),
      now: () => Date.now() / 1000,
      widgets: widgetHost(model),
      appPage: (name) => this.appPage(name),
      undone: (callId) => {
        const undone = readTrait(model, "_undone");
        const line = isRecord(undone) ? undone[callId] : undefined;
        return typeof line === "string" ? line : undefined;
      },
    };
    // The bench: tools run by hand below the chat ("Run again"), or run_tool's form alone (scope "bench").
    const alone = readTrait(model, "_scope") === "bench";
    this.bench = new BenchView({ ...this.ctx, appPage: undefined, closable: !alone }); // its cards show no app
    if (!alone) {
      this.ctx.runAgain = (callId) => {
        this.bench.expect(callId);
        this.send({ type: "bench_open", tool_call_id: callId });
      };
    }
    this.shell.root.append(this.bench.el);
    this.list = new MessageList(this.shell.list, this.shell.pending.el, this.ctx, (id) => this.store.get(id));
    this.store = storeFor(model);
    this.backfill = new Backfill(this.list, this.shell.list, this.shell.follower, (id) => this.store.get(id), () => ({
      count: this.store.missing,
      connected: this.store.connected,
    }));
    this.el = el;
    mounted.set(el, this);
    this.trackScrollAndFocus();
    // The leftover of the output this view is shown in, if that output was rendered again: this view takes it over
    // (an output's display shows one widget; updated, the same one). The renderer may attach this view's element
    // only after making it: then it looks once attached, before the frame is painted.
    shown.add(this);
    if (this.takeOver()) return;
    if (!el.isConnected && [...shown].some((other) => other.superseded())) raf(() => this.findHost());
    else this.start();
  }

  /** Starts listening to the model and renders the conversation. */
  private start(): void {
    if (this.started || this.destroyed) return;
    this.started = true;
    // Until a kernel answers (never, for a notebook reopened without one), controls that need it are hidden.
    this.shell.root.classList.toggle("aiw-offline", !this.store.connected);
    for (const trait of TRAITS) {
      const handler = (): void => this.markTrait(trait);
      this.model.on(`change:${trait}`, handler);
      this.traitHandlers.push([`change:${trait}`, handler]);
    }
    this.el.append(this.shell.root);
    this.hideTranscript();
    this.host = this.el.closest(OUTPUT);
    if (this.host === null) raf(() => (this.host ??= this.el.closest(OUTPUT))); // attached after it was made
    this.store.attach();
    this.backfill.open(this.store.messages()); // what is on screen now, the rest when idle
    // Only now: what attaching the store told (every message) is what was just built from it.
    this.unsubscribe = this.store.subscribe((ev) => this.onEvent(ev));
    for (const text of this.store.notices) this.shell.showError(text); // came before this view
    for (const trait of TRAITS) this.dirtyTraits.add(trait);
    this.flush();
    this.send(this.store.syncMessage()); // what it lacks: live messages, finished ones it missed
    void this.store.ready.then(() => {
      this.ready = true;
      this.schedule();
    });
  }

  /** The kernel shows a static transcript after this view's output, for readers without the widget; a live view
   * hides it, in any host that shows both in one page (the transcript's own style does it in JupyterLab). */
  private hideTranscript(): void {
    const id = readTrait(this.model, "_transcript_id");
    if (typeof id !== "string" || !/^[A-Za-z][A-Za-z0-9_-]{0,99}$/.test(id)) return;
    this.transcriptStyle = document.createElement("style");
    this.transcriptStyle.textContent = `[data-aiw-transcript="${id}"] { display: none; }`;
    document.head.append(this.transcriptStyle);
  }

  private trackScrollAndFocus(): void {
    const root = this.shell.root;
    // Scroll events do not bubble: caught on the way down, from any scrolled element in the view.
    root.addEventListener(
      "scroll",
      (ev) => {
        const target = ev.target;
        if (target instanceof Element && root.isConnected) this.scrolled.set(target, [target.scrollTop, target.scrollLeft]);
      },
      { capture: true, passive: true },
    );
    root.addEventListener("focusin", (ev) => {
      if (ev.target instanceof HTMLElement) this.focused = ev.target;
    });
    // A real blur forgets the focus; losing it because the renderer took the view off the page does not.
    root.addEventListener("focusout", () => {
      setTimeout(() => {
        if (root.isConnected && !root.contains(document.activeElement)) this.focused = null;
      }, 0);
    });
  }

  /** Whether the output it was shown in has emptied its node to render another view in its place. */
  private superseded(): boolean {
    return this.host !== null && !this.host.contains(this.shell.root);
  }

  /** Once attached in a notebook output: takes over the leftover of that output, if any; else starts. */
  private findHost(frames = 0): void {
    if (this.destroyed || this.started) return;
    if (this.takeOver()) return;
    if (!this.el.isConnected && frames < 5) {
      raf(() => this.findHost(frames + 1)); // not attached yet: the renderer may still be making it
      return;
    }
    this.start();
  }

  /** If this (not yet started) view is in an output whose earlier view is a leftover: shows that view's DOM here
   * and destroys itself. Says whether it did. */
  private takeOver(): boolean {
    const host = this.el.closest(OUTPUT);
    const leftover = host === null ? undefined : [...shown].find((other) => other !== this && other.host === host && other.superseded());
    if (leftover === undefined) return false;
    leftover.moveTo(this.el);
    this.destroy();
    return true;
  }

  /** Shows this view's DOM, as it stands, in `el` (the element of the view that took it over). */
  private moveTo(el: HTMLElement): void {
    if (mounted.get(this.el) === this) mounted.delete(this.el);
    this.el = el;
    mounted.set(el, this);
    el.replaceChildren(this.shell.root);
    for (const [node, [top, left]] of this.scrolled) {
      if (!this.shell.root.contains(node)) this.scrolled.delete(node);
      else [node.scrollTop, node.scrollLeft] = [top, left];
    }
    const focused = this.focused;
    if (focused?.isConnected && this.shell.root.contains(focused) && (!document.activeElement || document.activeElement === document.body)) {
      focused.focus({ preventScroll: true }); // a text box keeps its caret and selection: the node is the same
    }
    this.schedule(); // what changed while it was off the page
  }

  /** Sends an action; returns whether the kernel is known to be there (else the person's text is kept). */
  private send(msg: OutgoingMessage): boolean {
    this.model.send(msg);
    if (msg.type === "sync") return true;
    if (msg.type === "complete" || msg.type === "describe" || msg.type === "app_open") return this.store.connected; // asked quietly
    if (!this.store.connected) {
      if (msg.type === "send") this.sentWhileWaiting = msg.text;
      if (!this.waitingBanner?.isConnected) {
        this.waitingBanner = this.shell.showError(
          "Waiting for the kernel… If this chat was restored from a saved notebook, run its cell again to chat.",
        );
      }
      return false;
    }
    if (msg.type === "send") this.shell.scrollToEnd();
    return true;
  }

  private appPage(name: string): AppPageInfo | undefined {
    const apps = readTrait(this.model, "_apps");
    const page = apps && Object.prototype.hasOwnProperty.call(apps, name) ? apps[name] : undefined;
    return page && typeof page === "object" && !Array.isArray(page) ? (page as AppPageInfo) : undefined;
  }

  private toolInfo(name: string): ToolInfo | undefined {
    const tools = readTrait(this.model, "_tools");
    return (tools && Object.prototype.hasOwnProperty.call(tools, name) ? tools[name] : undefined) ?? this.toolsLower.get(name.toLowerCase());
  }

  // ---- dirty tracking ---------------------------------------------------------------------------------

  private markTrait(trait: Trait): void {
    this.dirtyTraits.add(trait);
    this.schedule();
  }

  private entry(id: string): MessageDirty {
    let d = this.dirty.get(id);
    if (!d) this.dirty.set(id, (d = { full: false, fields: false, parts: new Map() }));
    return d;
  }

  private part(id: string, index: number): PartDirty {
    const d = this.entry(id);
    let p = d.parts.get(index);
    if (!p) d.parts.set(index, (p = { full: false, text: false, call: false, patches: null, argsReset: false }));
    return p;
  }

  private onEvent(ev: StoreEvent): void {
    switch (ev.kind) {
      case "reset":
        this.resetPending = true;
        this.dirty.clear();
        break;
      case "older":
        this.backfill.prepend(ev.ids);
        return;
      case "message":
        this.entry(ev.id).full = true;
        this.shell.pending.arrived(this.store.get(ev.id)); // the kernel's copy of a message sent from the box
        break;
      case "fields":
        this.entry(ev.id).fields = true;
        break;
      case "part":
        this.part(ev.id, ev.index).full = true;
        break;
      case "text":
        this.part(ev.id, ev.index).text = true;
        break;
      case "call":
        this.part(ev.id, ev.index).call = true;
        break;
      case "answer":
      case "args": {
        const p = this.part(ev.id, ev.index);
        if (ev.kind === "answer") p.text = true;
        if (ev.patches === null) {
          p.argsReset = true; // re-rendered from the value
          p.patches = null;
        } else if (!p.argsReset) {
          (p.patches ??= []).push(...ev.patches);
        }
        break;
      }
      case "connected":
        this.shell.root.classList.remove("aiw-offline");
        this.backfill.update();
        this.waitingBanner?.remove();
        this.waitingBanner = null;
        if (this.sentWhileWaiting !== null) this.shell.clearInputIf(this.sentWhileWaiting);
        this.sentWhileWaiting = null;
        return;
      case "reply":
        if (ev.message.type === "app_reply") deliverAppReply(ev.message);
        else if (ev.message.type === "resource") deliverResource(ev.message);
        else if (ev.message.type === "cell_action") deliverCellAction(ev.message);
        else this.shell.kernelReply(ev.message);
        return;
      case "error":
        // A refused answer to a card's question is shown in that card (at its fields), not again in the banner.
        let inCard = false;
        for (const card of this.prompting) inCard = card.enablePrompt(ev.message, ev.callId, ev.fields) || inCard;
        if (!inCard && !this.shell.promptRefused(ev.id, ev.message, ev.fields)) this.shell.showError(ev.message);
        this.shell.sendRefused(ev.id);
        if (this.lastMarked !== undefined && this.list.has(this.lastMarked)) this.list.get(this.lastMarked)?.refused();
        this.bench.refused();
        cellActionsRefused(ev.message);
        return;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.frame === null && !this.destroyed) this.frame = raf(() => this.flush());
  }

  // ---- flush ------------------------------------------------------------------------------------------

  /** Writes every pending change to the DOM (normally once per animation frame). */
  flush(): void {
    if (this.frame !== null) cancelRaf(this.frame);
    this.frame = null;
    if (this.destroyed) return;
    if (!this.started) return;
    // A leftover not taken over yet: nothing of it is on screen. What changed stays marked for when it is back.
    if (this.superseded()) return;
    const collect = (globalThis as { __aiwCollectStats?: boolean }).__aiwCollectStats;
    const t0 = collect ? performance.now() : 0;
    let structural = false;

    if (this.resetPending) {
      this.resetPending = false;
      this.list.clear();
      this.backfill.reset();
      this.backfill.open(this.store.messages());
      this.dirty.clear();
      structural = true;
    }

    for (const [id, d] of this.dirty) {
      const message = this.store.get(id);
      const view = this.list.get(id);
      if (!message) {
        this.list.remove(id);
        structural = true;
      } else if (!view) {
        if (!this.backfill.takes(message)) this.list.add(message); // earlier than all shown: built when idle
        structural = true;
      } else if (d.full) {
        const stale = new Set<number>();
        for (const [i, p] of d.parts) if (p.patches || p.argsReset) stale.add(i);
        view.sync(message, stale);
        this.list.reposition(message);
        structural = true;
      } else {
        if (d.fields) {
          view.updateFields(message);
          structural = true;
        }
        for (const [index, p] of d.parts) view.updatePart(message, index, p);
      }
    }
    this.dirty.clear();

    if (this.dirtyTraits.size) this.applyTraits();
    if (structural || this.dirtyTraits.size) this.updateShell();
    this.dirtyTraits.clear();

    if (this.ready && this.shell.root.dataset.rendered !== "true") {
      this.shell.root.dataset.rendered = "true";
      this.shell.scrollToEnd();
      raf(() => {
        this.shell.scrollToEnd(); // again once images and fonts have laid out
        this.backfill.start(); // then the earlier messages
      });
    }
    if (collect) {
      const g = globalThis as { __aiwStats?: Stats };
      const stats = (g.__aiwStats ??= { frames: 0, flushMs: [] });
      stats.frames++;
      stats.flushMs.push(performance.now() - t0);
    }
  }

  private applyTraits(): void {
    const t = this.dirtyTraits;
    if (t.has("_tools") || t.has("_apps") || t.has("_undone")) {
      const tools = readTrait(this.model, "_tools") ?? {};
      this.toolsLower = new Map(Object.entries(tools).map(([k, v]) => [k.toLowerCase(), v]));
      for (const view of this.list.all()) for (const card of view.cards()) card.updateInfo();
      this.bench.updateInfo();
    }
    if (t.has("_bench")) this.bench.update(readTrait(this.model, "_bench"));
    if (t.has("_context_cut")) this.contextMarker.set(readTrait(this.model, "_context_cut"));
    if (t.has("_busy")) this.shell.setBusy(!!readTrait(this.model, "_busy"));
    if (t.has("_queued")) {
      const queued = readTrait(this.model, "_queued");
      this.shell.queued.set(queued);
      for (const item of queuedItems(queued)) this.shell.pending.takenAs(new Set([item.text.trim()]));
    }
    if (t.has("_run_unasked") || t.has("_tools")) {
      this.shell.unasked.set(!!readTrait(this.model, "_run_unasked"), hasCodeTool(readTrait(this.model, "_tools")));
    }
    if (t.has("placeholder")) this.shell.setPlaceholder(String(this.model.get("placeholder") ?? ""));
    // Compact: one tool call on its own (run_tool): no input, no user messages, no usage line.
    if (t.has("compact")) this.shell.root.classList.toggle("aiw-compact", !!this.model.get("compact"));
    // One turn shown where it was asked: its messages and controls, no input (that is the chat's).
    if (t.has("_scope")) {
      this.shell.root.classList.toggle("aiw-turn", readTrait(this.model, "_scope") === "turn");
      this.shell.root.classList.toggle("aiw-bench-only", readTrait(this.model, "_scope") === "bench");
    }
    if (t.has("_allowed_always") || t.has("_tools")) {
      const names = readTrait(this.model, "_allowed_always");
      this.shell.setAllowed(Array.isArray(names) ? names : [], (n) => this.toolInfo(n));
    }
  }

  /** The parts of the shell that depend on the conversation: suggestions, the last message's mark, usage. */
  private updateShell(): void {
    const at = (offset: number): Message | undefined => {
      const id = this.list.lastId(offset);
      return id === undefined ? undefined : this.store.get(id);
    };
    const suggestions = this.model.get("suggestions");
    this.shell.setSuggestions(Array.isArray(suggestions) ? suggestions : []);
    const lastId = this.list.lastId(0);
    if (lastId !== this.lastMarked) {
      if (this.lastMarked !== undefined && this.list.has(this.lastMarked)) this.list.get(this.lastMarked)?.setLast(false);
      this.lastMarked = lastId;
      if (lastId !== undefined) this.list.get(lastId)?.setLast(true);
    }
    let lastTurn = undefined;
    for (let offset = 0; offset < 3; offset++) {
      const m = at(offset);
      if (m?.role === "assistant") {
        lastTurn = m.usage;
        break;
      }
    }
    this.shell.setUsage(lastTurn, readTrait(this.model, "_usage"));
    this.contextMarker.place((id) => this.list.element(id));
    const tools = Object.entries(readTrait(this.model, "_tools") ?? {}).map(([name, info]) => (typeof info?.title === "string" && info.title) || name);
    this.shell.setEmpty(this.list.size === 0, tools);
  }

  // ---- elapsed time: one timer for the running cards, each tick writes one text node ------------------

  private setTicking(card: ToolCardView, on: boolean): void {
    if (on) this.ticking.add(card);
    else this.ticking.delete(card);
    if (this.ticking.size && this.timer === null) {
      this.timer = setInterval(() => this.ticking.forEach((c) => c.tick()), 1000);
    } else if (!this.ticking.size && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    shown.delete(this);
    if (mounted.get(this.el) === this) mounted.delete(this.el);
    if (this.frame !== null) cancelRaf(this.frame);
    this.frame = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    for (const [name, handler] of this.traitHandlers) this.model.off(name as `change:${keyof WidgetTraits & string}`, handler);
    if (this.started) this.store.detach();
    this.transcriptStyle?.remove();
    this.backfill.destroy();
    this.list.clear();
    this.bench.destroy();
    this.shell.destroy();
  }
}
