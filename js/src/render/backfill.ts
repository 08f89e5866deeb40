// Opening a long conversation: what is on screen first, the rest after. The newest messages (more than fill a
// tall box) are built at once; the earlier ones are put in unbuilt (an empty element holding its place, not laid
// out: cheap; at most PLACEHOLDERS at a time, the older ones wait outside the list), and built later, newest first, a slice at a time when the page is idle, or every frame while the
// person is scrolled near the top of what is built. Whatever the person is looking at stays where it is on screen
// while messages above it are built. Until every
// message is built and has arrived, a note at the top says so (or, in a saved notebook that holds only the newest
// ones, that the earlier ones are not in it).

import { h, setText } from "../dom";
import type { Message } from "../types";
import type { Follower } from "./follow";
import type { MessageList } from "./list";

/** A conversation of at most this many messages is built whole at once. */
export const BUILD_WHOLE = 60;
/** The newest messages built at once in a longer one (more than a tall box shows). */
export const FIRST_SCREEN = 16;
/** Unbuilt messages in the list at most: older ones wait outside it, and come in as these are built. */
export const PLACEHOLDERS = 1000;
const REFILL_BELOW = 200;
/** Time one idle slice may take (ms), and the most messages it builds. */
const SLICE_MS = 8;
const SLICE_MAX = 60;
/** Within this many visible heights of the top, earlier messages are built every frame, not only when idle. */
const NEAR_TOP_SCREENS = 1.5;

type Deadline = { timeRemaining(): number };
const requestIdle: (cb: (deadline?: Deadline) => void) => number =
  typeof requestIdleCallback === "function"
    ? (cb) => requestIdleCallback(cb, { timeout: 250 })
    : (cb) => setTimeout(() => cb(), 16) as unknown as number;
const cancelIdle: (id: number) => void =
  typeof cancelIdleCallback === "function" ? (id) => cancelIdleCallback(id) : (id) => clearTimeout(id);
const frame: (cb: () => void) => number =
  typeof requestAnimationFrame === "function" ? (cb) => requestAnimationFrame(cb) : (cb) => setTimeout(cb, 16) as unknown as number;

const cancelFrame: (id: number) => void =
  typeof cancelAnimationFrame === "function" ? (id) => cancelAnimationFrame(id) : (id) => clearTimeout(id);

/** How many of the newest of `count` messages to build at once (the rest are put in unbuilt). */
export function builtAtOnce(count: number): number {
  return count <= BUILD_WHOLE ? count : FIRST_SCREEN;
}

export class Backfill {
  /** Ids of the messages put in unbuilt, oldest first (built from the end: newest first). */
  private pending: string[] = [];
  /** Ids of messages older than every one in the list, not in it yet, oldest first. */
  private outside: string[] = [];
  private idle: number | null = null;
  private nextFrame: number | null = null;
  private destroyed = false;
  private started = false;
  private note: HTMLElement | null = null;

  constructor(
    private readonly list: MessageList,
    private readonly box: HTMLElement, // the scrolling list
    private readonly follower: Follower,
    private readonly message: (id: string) => Message | undefined,
    /** How many finished messages the store does not hold yet, and whether a kernel answers. */
    private readonly missing: () => { count: number; connected: boolean },
  ) {
    box.addEventListener("scroll", () => this.schedule(), { passive: true });
  }

  /** Whether earlier messages are still to be built (or to arrive). */
  get active(): boolean {
    return this.pending.length > 0 || this.outside.length > 0 || this.missing().count > 0;
  }

  /** Puts `messages` (index order) in the list: the newest built, the others unbuilt. */
  open(messages: Message[]): void {
    const unbuilt = messages.length - builtAtOnce(messages.length);
    const outside = Math.max(0, unbuilt - PLACEHOLDERS);
    this.outside = messages.slice(0, outside).map((m) => m.id);
    for (let i = outside; i < messages.length; i++) {
      if (i < unbuilt) {
        this.putUnbuilt(messages[i]);
        this.pending.push(messages[i].id);
      } else this.list.add(messages[i]);
    }
    this.update();
  }

  /** Messages earlier than every one shown (a chunk the store got), oldest first. */
  prepend(ids: string[]): void {
    this.outside = [...ids, ...this.outside];
    this.update();
  }

  /** Brings the newest of the messages outside the list into it, unbuilt, while few unbuilt ones are left. */
  private refill(): void {
    while (this.pending.length < REFILL_BELOW && this.outside.length) {
      const batch = this.outside.splice(Math.max(0, this.outside.length - (PLACEHOLDERS - this.pending.length)));
      const added: string[] = [];
      for (const id of batch) {
        const message = this.message(id);
        if (!message || this.list.has(id)) continue;
        this.putUnbuilt(message);
        added.push(id);
      }
      this.pending = [...added, ...this.pending];
    }
  }

  /** Puts in unbuilt a message that appeared earlier than every one shown while earlier ones are still coming;
   * whether it did (else the list builds it). */
  takes(message: Message): boolean {
    const first = this.firstIndex();
    if (!this.active || first === undefined || message.index >= first) return false;
    this.putUnbuilt(message);
    this.pending.push(message.id);
    this.pending.sort((a, b) => (this.message(a)?.index ?? 0) - (this.message(b)?.index ?? 0));
    this.update();
    return true;
  }

  private firstIndex(): number | undefined {
    return this.list.firstIndex();
  }

  private putUnbuilt(message: Message): void {
    this.list.addUnbuilt(message);
  }

  /** Starts building the earlier messages (after the first screen was shown: nothing delays that). */
  start(): void {
    this.started = true;
    this.schedule();
  }

  /** The list was emptied (a clear). */
  reset(): void {
    this.pending = [];
    this.outside = [];
    this.update();
  }

  /** The note and the next slice, after a change of what waits. */
  update(): void {
    this.refill();
    this.showNote();
    this.schedule();
  }

  private nearTop(): boolean {
    return this.box.scrollTop < this.box.clientHeight * NEAR_TOP_SCREENS;
  }

  private schedule(): void {
    if (this.destroyed || !this.started || !this.pending.length) return;
    if (this.nearTop() && this.nextFrame === null) {
      this.nextFrame = frame(() => {
        this.nextFrame = null;
        this.slice();
      });
    }
    if (this.idle === null) {
      this.idle = requestIdle((deadline) => {
        this.idle = null;
        this.slice(deadline);
      });
    }
  }

  /** Builds the newest pending messages for about SLICE_MS (or what the idle deadline leaves). */
  private slice(deadline?: Deadline): void {
    if (this.destroyed) return;
    const anchor = this.following() ? null : this.anchor();
    const anchorTop = anchor?.getBoundingClientRect().top ?? 0;
    const started = performance.now();
    const budget = Math.max(2, Math.min(SLICE_MS, deadline?.timeRemaining() ?? SLICE_MS));
    let built = 0;
    while (this.pending.length && built < SLICE_MAX && performance.now() - started < budget) {
      const id = this.pending.pop()!;
      if (this.list.isUnbuilt(id) && this.list.build(id)) built++;
    }
    this.refill();
    this.showNote();
    // Hold what the person looks at where it is (built messages above it grew), or keep to the end.
    if (this.following()) this.box.scrollTop = this.box.scrollHeight;
    else if (anchor?.isConnected) this.box.scrollTop += anchor.getBoundingClientRect().top - anchorTop;
    this.schedule();
  }

  private following(): boolean {
    return this.follower.following;
  }

  /** The first element of the list whose bottom is inside the box (what the person reads, at the top of the
   * view): found by halving, the children being in order. */
  private anchor(): HTMLElement | null {
    const top = this.box.getBoundingClientRect().top;
    const children = this.box.children;
    let lo = 0;
    let hi = children.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (children[mid].getBoundingClientRect().bottom > top) hi = mid;
      else lo = mid + 1;
    }
    const found = children[lo];
    return found instanceof HTMLElement ? found : null;
  }

  private showNote(): void {
    const { count, connected } = this.missing();
    const waiting = this.pending.length + this.outside.length + count;
    if (!waiting) {
      this.note?.remove();
      this.note = null;
      return;
    }
    if (!this.note) {
      this.note = h("div", "aiw-older-note");
      this.note.setAttribute("role", "status");
    }
    if (this.box.firstChild !== this.note) this.box.prepend(this.note);
    const text =
      count && !connected
        ? `${count.toLocaleString("en")} earlier message${count === 1 ? " is" : "s are"} not in this saved copy: run the cell to see them all.`
        : `Loading ${waiting.toLocaleString("en")} earlier message${waiting === 1 ? "" : "s"}…`;
    setText(this.note, text);
  }

  destroy(): void {
    this.destroyed = true;
    if (this.idle !== null) cancelIdle(this.idle);
    this.idle = null;
    this.pending = [];
    this.outside = [];
    if (this.nextFrame !== null) cancelFrame(this.nextFrame);
    this.nextFrame = null;
    this.note?.remove();
  }
}
