// Following the conversation: the message list stays at its end while content grows (a long reply streaming, a
// turn driven from code, a card opening), until the person scrolls up. While they are up there it leaves them
// where they are and shows "Jump to latest", which scrolls to the end and follows again.
//
// Growth is seen by a ResizeObserver (on the list and on each message), whose callback runs after layout and
// before paint: scrolling there costs no extra layout in the view's flush and never shows a frame out of place.
// The browser's own scroll anchoring is off in the list (CSS), so this is the one thing that moves it.

import { button, h, setHidden } from "../dom";

/** Within this many pixels of the end counts as at the end (fractional scroll offsets when zoomed). */
const SLACK = 2;

export class Follower {
  /** Whether the list keeps to its end as content grows. */
  following = true;
  readonly jumpButton: HTMLButtonElement;
  private lastTop = 0;
  private readonly resize: ResizeObserver | null = null;
  private readonly children: MutationObserver | null = null;

  constructor(private readonly list: HTMLElement) {
    this.jumpButton = button("aiw-btn aiw-jump", "Jump to latest", () => this.jumpToEnd());
    this.jumpButton.prepend(h("span", "aiw-jump-arrow", "↓ "));
    this.jumpButton.firstElementChild?.setAttribute("aria-hidden", "true");
    this.jumpButton.hidden = true;
    list.addEventListener("scroll", () => this.onScroll(), { passive: true });
    // A wheel turned up means the person wants to read back, even before the offset has moved.
    list.addEventListener(
      "wheel",
      (ev) => {
        if (ev.deltaY < 0 && list.scrollTop > 0) this.stop();
      },
      { passive: true },
    );
    if (typeof ResizeObserver === "function") {
      this.resize = new ResizeObserver(() => this.contentChanged());
      this.resize.observe(list);
    }
    if (this.resize && typeof MutationObserver === "function") {
      // Messages come and go as children of the list: watch each one's size.
      this.children = new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) if (n instanceof Element) this.resize?.observe(n);
          for (const n of r.removedNodes) if (n instanceof Element) this.resize?.unobserve(n);
        }
      });
      this.children.observe(list, { childList: true });
      for (const child of list.children) this.resize.observe(child);
    }
  }

  /** How far the end of the content is below the visible part, in pixels. */
  private below(): number {
    const l = this.list;
    return l.scrollHeight - l.clientHeight - l.scrollTop;
  }

  /** The content or the box changed size: keep to the end if following, else offer the jump. */
  contentChanged(): void {
    if (this.following && this.below() > SLACK) this.list.scrollTop = this.list.scrollHeight;
    this.lastTop = this.list.scrollTop;
    this.updateButton();
  }

  /** Scrolls to the end and follows from now on (after the first render, after sending, "Jump to latest"). */
  jumpToEnd(): void {
    this.following = true;
    this.list.scrollTop = this.list.scrollHeight;
    this.lastTop = this.list.scrollTop;
    this.updateButton();
  }

  private stop(): void {
    this.following = false;
    this.updateButton();
  }

  private onScroll(): void {
    const top = this.list.scrollTop;
    if (this.below() <= SLACK) this.following = true;
    else if (top < this.lastTop) this.following = false; // moved up by the person (growth never lowers it)
    this.lastTop = top;
    this.updateButton();
  }

  private updateButton(): void {
    setHidden(this.jumpButton, this.following || this.below() <= SLACK);
  }

  destroy(): void {
    this.resize?.disconnect();
    this.children?.disconnect();
  }
}
