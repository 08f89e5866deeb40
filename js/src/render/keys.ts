// The chat's keyboard order. The message list and each row of chips is one tab stop (a roving tabindex: arrow keys,
// Home and End move inside it), so Tab goes list -> suggestions -> input box -> Send / Stop. Any focusable element
// put inside a group later (a card's toggle, a copy button, a message's Edit) joins it by itself: an observer makes
// it `tabindex="-1"`, reached by the arrow keys. A waiting approval is announced, and is one Tab from the input box;
// Tab past its last control (or Shift+Tab before its first) comes back, and after a decision the focus goes to the
// next waiting approval or the input box. Escape hands the keyboard back to the notebook (see `leaveToNotebook`).

/** What can take the focus (the groups' items, with the group's own items selector). */
export const FOCUSABLE =
  "button, a[href], input, select, textarea, summary, [tabindex], [contenteditable=''], [contenteditable='true']";
/** The buttons whose click sends an approval decision. */
const DECISIONS = ".aiw-approve-once, .aiw-approve-always, .aiw-decline, .aiw-approve-edited";
const APPROVAL = ".aiw-approval";

const NEXT = new Set(["ArrowDown", "ArrowRight"]);
const PREVIOUS = new Set(["ArrowUp", "ArrowLeft"]);

/** Whether `el` takes typing (its arrow keys move a caret, not the focus). */
export function editsText(el: Element | null): boolean {
  if (!(el instanceof HTMLElement)) return false;
  if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  if (el.tagName !== "INPUT") return false;
  const type = (el as HTMLInputElement).type;
  return !["button", "checkbox", "radio", "submit", "reset", "range", "color", "file"].includes(type);
}

/** Whether `el` may take the focus without taking it from the person: nothing has it, or something in the same
 * chat that takes no typing (never a notebook cell, another widget, or the input box). */
export function focusFree(el: Element): boolean {
  const active = document.activeElement;
  if (!active || active === document.body) return true;
  const root = el.closest(".aiw");
  return root !== null && root.contains(active) && !editsText(active);
}

/** Whether `el` can take the focus now: not disabled, not inside a hidden element (up to `within`). */
export function usable(el: HTMLElement, within: Element): boolean {
  if ((el as HTMLButtonElement).disabled) return false;
  if (!within.contains(el)) return false;
  for (let node: HTMLElement | null = el; node && node !== within; node = node.parentElement) {
    if (node.hidden || node.classList.contains("aiw-unbuilt")) return false;
  }
  return true;
}

/** Focuses the first of `candidates` that takes the focus (one shown only by CSS may not); returns it. */
export function focusFirstOf(candidates: Iterable<HTMLElement>): HTMLElement | null {
  for (const el of candidates) {
    el.focus();
    if (document.activeElement === el) return el;
  }
  return null;
}

export interface RovingOptions {
  /** The items, in document order (a selector matched inside the group). */
  items: string;
  /** The tab stop while the focus is elsewhere: the newest message, the first chip. */
  home: "first" | "last";
  /** Of the items, those that are the tab stop when focus is elsewhere (default: any item). */
  stops?: string;
}

/** One tab stop for a group of focusable elements: exactly one of them has `tabindex="0"`. */
export class RovingGroup {
  private current: HTMLElement | null = null;
  private readonly observer: MutationObserver;

  constructor(
    readonly el: HTMLElement,
    private readonly options: RovingOptions,
  ) {
    this.observer = new MutationObserver((records) => this.onMutations(records));
    this.observer.observe(el, { childList: true, subtree: true, attributes: true, attributeFilter: ["hidden", "disabled"] });
    el.addEventListener("focusin", (ev) => this.onFocusIn(ev));
    el.addEventListener("focusout", (ev) => {
      const to = ev.relatedTarget;
      if (!(to instanceof Node) || !el.contains(to)) this.reset(); // left: the stop is the home item again
    });
    // On the window, in the capture phase: before a host's own capture listeners (Notebook 7 moves to the next cell
    // on ArrowDown before the event reaches the widget), which stopping it here keeps them from seeing.
    window.addEventListener("keydown", this.onKey, true);
    this.demote(el);
    this.reset();
  }

  /** The items that can take the focus now, in document order. */
  items(): HTMLElement[] {
    return [...this.el.querySelectorAll<HTMLElement>(this.options.items)].filter((item) => usable(item, this.el));
  }

  /** The element that is the group's tab stop (null: nothing in the group to reach). */
  get stop(): HTMLElement | null {
    return this.current;
  }

  /** Focuses the group's tab stop. */
  focus(): boolean {
    this.reset();
    return this.current !== null && focusFirstOf([this.current, ...this.items()]) !== null;
  }

  destroy(): void {
    this.observer.disconnect();
    window.removeEventListener("keydown", this.onKey, true);
  }

  /** The stop while the focus is elsewhere: of the group's own children (messages, chips), the last or the first
   * usable one (no search of the whole list while it has some: this runs as content changes). */
  private home(): HTMLElement | null {
    const children = this.el.children;
    const last = this.options.home === "last";
    const stops = this.options.stops ?? this.options.items;
    for (let i = 0; i < children.length; i++) {
      const child = children[last ? children.length - 1 - i : i] as HTMLElement;
      if (child.matches(stops) && usable(child, this.el)) return child;
    }
    // Items deeper down (a chip's button inside its label): the whole group, which is small then.
    const all = [...this.el.querySelectorAll<HTMLElement>(stops)].filter((item) => usable(item, this.el));
    return (last ? all[all.length - 1] : all[0]) ?? null;
  }

  /** Makes the home item the stop (unless the focus is inside the group, on its current item). */
  private reset(): void {
    if (this.current && this.el.contains(document.activeElement) && document.activeElement === this.current) return;
    this.setCurrent(this.home());
  }

  private setCurrent(item: HTMLElement | null): void {
    if (item === this.current) {
      if (item && item.tabIndex !== 0) item.tabIndex = 0;
      return;
    }
    if (this.current) this.current.tabIndex = -1;
    this.current = item;
    if (item) item.tabIndex = 0;
  }

  /** Takes `root` and every item in it out of the tab order (the current item stays the stop). */
  private demote(root: Element): void {
    const items = root.matches(this.options.items) ? [root, ...root.querySelectorAll(this.options.items)] : root.querySelectorAll(this.options.items);
    // The attribute, not the property: a message's div reads -1 without one, and is not focusable until it has it.
    for (const item of items) if (item !== this.current && item.getAttribute("tabindex") !== "-1") item.setAttribute("tabindex", "-1");
  }

  private onMutations(records: MutationRecord[]): void {
    for (const record of records) for (const node of record.addedNodes) if (node instanceof HTMLElement) this.demote(node);
    const current = this.current;
    // While the focus is elsewhere the stop follows the home item (the newest message); inside, it stays where
    // the person is, unless that went or can no longer take the focus.
    const inside = document.activeElement !== null && this.el.contains(document.activeElement);
    if (!inside || !current || !usable(current, this.el)) this.setCurrent(this.home());
  }

  private onFocusIn(ev: FocusEvent): void {
    const target = ev.target;
    if (!(target instanceof HTMLElement) || !this.el.contains(target)) return;
    const item = target.matches(this.options.items) ? target : target.closest<HTMLElement>(this.options.items);
    if (item && this.el.contains(item)) this.setCurrent(item);
  }

  private readonly onKey = (ev: KeyboardEvent): void => {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || ev.isComposing) return;
    if (!NEXT.has(ev.key) && !PREVIOUS.has(ev.key) && ev.key !== "Home" && ev.key !== "End") return;
    if (!(ev.target instanceof Node) || !this.el.contains(ev.target)) return;
    if (editsText(ev.target as Element)) return; // the caret moves
    const items = this.items();
    if (!items.length) return;
    const at = items.indexOf(ev.target as HTMLElement);
    let order: HTMLElement[];
    if (ev.key === "Home") order = items;
    else if (ev.key === "End") order = [...items].reverse();
    else if (NEXT.has(ev.key)) order = items.slice(at + 1);
    else order = items.slice(0, at < 0 ? items.length : at).reverse();
    ev.preventDefault();
    ev.stopPropagation(); // not the notebook's (a cell's output scrolls, a notebook moves between cells)
    focusFirstOf(order);
  };
}

/** The approvals in `list` waiting for a decision (their buttons enabled), in order. */
export function waitingApprovals(list: Element): HTMLElement[] {
  return [...list.querySelectorAll<HTMLElement>(APPROVAL)].filter((box) => {
    const first = box.querySelector<HTMLButtonElement>(DECISIONS);
    return first !== null && usable(box, list) && !first.disabled;
  });
}

/** The controls of an approval a person can reach now (its buttons, the reason, the edit form's fields). */
function controlsOf(box: HTMLElement): HTMLElement[] {
  return [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => usable(el, box));
}

/** Focuses the first control of a waiting approval (the first waiting one); says whether there was one. */
export function focusApproval(list: Element, except?: Element): boolean {
  for (const box of waitingApprovals(list)) {
    if (box === except) continue;
    if (focusFirstOf(controlsOf(box))) return true;
  }
  return false;
}

export interface ApprovalKeysOptions {
  /** Focuses the input box; says whether it could (a turn's view has none). */
  focusInput(): boolean;
  /** Says something to screen readers (the live region). */
  announce(text: string): void;
}

/** Approvals and the keyboard: announced when they appear, Tab inside one cycles back to the input box, and after
 * a decision the focus goes to the next waiting approval or the input box. */
export class ApprovalKeys {
  private readonly observer: MutationObserver;
  /** The approval the live region speaks of now, if any: once it is decided (here, in another view, from the
   * kernel) the region speaks of the next one still waiting, or is emptied. */
  private announced: HTMLElement | null = null;

  constructor(
    private readonly list: HTMLElement,
    private readonly options: ApprovalKeysOptions,
  ) {
    this.observer = new MutationObserver((records) => {
      for (const record of records) {
        for (const node of record.addedNodes) {
          if (!(node instanceof HTMLElement)) continue;
          const boxes = node.matches(APPROVAL) ? [node] : [...node.querySelectorAll<HTMLElement>(APPROVAL)];
          for (const box of boxes) this.announceBox(box);
        }
      }
      this.settleAnnouncement();
    });
    // Attributes too: a decision disables the box's buttons before the kernel's answer replaces the card.
    this.observer.observe(list, { childList: true, subtree: true, attributes: true, attributeFilter: ["disabled"] });
    list.addEventListener("keydown", (ev) => this.onKey(ev));
    // After the box's own handler has sent the decision (and disabled its buttons).
    list.addEventListener("click", (ev) => {
      const target = ev.target instanceof Element ? ev.target.closest<HTMLButtonElement>(DECISIONS) : null;
      const box = target?.closest<HTMLElement>(APPROVAL);
      if (target && box && target.disabled) this.afterDecision(box);
    });
  }

  private announceBox(box: HTMLElement): void {
    const question = box.querySelector(".aiw-approval-question")?.textContent?.trim() || "A tool call needs your decision.";
    this.announced = box;
    this.options.announce(`Approval needed: ${question} Press Tab in the message box to decide.`);
  }

  /** The announced approval was decided: the newest still waiting is announced, else the region is emptied. */
  private settleAnnouncement(): void {
    if (this.announced === null) return;
    const waiting = waitingApprovals(this.list);
    if (waiting.includes(this.announced)) return;
    const next = waiting.at(-1);
    if (next) {
      this.announceBox(next);
    } else {
      this.announced = null;
      this.options.announce("");
    }
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || ev.isComposing) return;
    const target = ev.target instanceof HTMLElement ? ev.target : null;
    const box = target?.closest<HTMLElement>(APPROVAL);
    if (!target || !box) return;
    if (ev.key === "Enter" && target.classList.contains("aiw-decline-reason")) {
      queueMicrotask(() => this.afterDecision(box)); // the reason's Enter declines (its own handler runs first)
      return;
    }
    if (ev.key !== "Tab") return;
    const controls = controlsOf(box);
    const at = controls.indexOf(target);
    const next = ev.shiftKey ? controls.slice(0, Math.max(at, 0)).reverse() : controls.slice(at + 1);
    ev.preventDefault();
    if (!focusFirstOf(next)) this.options.focusInput(); // past either end: back to the input box
  }

  /** A decision was sent from `box`: the next waiting approval, else the input box, gets the focus. */
  private afterDecision(box: HTMLElement): void {
    const active = document.activeElement;
    if (active && active !== document.body && !box.contains(active)) return; // the person is elsewhere already
    if (!focusApproval(this.list, box)) this.options.focusInput();
  }

  destroy(): void {
    this.observer.disconnect();
  }
}

/** Hands the keyboard back to the notebook: in JupyterLab and Notebook 7, focusing the cell puts the notebook in
 * command mode with this cell active (its focus handler does it), so `b` adds a cell below and Enter edits the cell.
 * Elsewhere the focus just leaves the widget. */
export function leaveToNotebook(root: HTMLElement): void {
  const candidates = [root.closest<HTMLElement>(".jp-Cell"), root.closest<HTMLElement>(".jp-Notebook")];
  if (focusFirstOf(candidates.filter((el): el is HTMLElement => el !== null))) return;
  const active = document.activeElement;
  if (active instanceof HTMLElement && root.contains(active)) active.blur();
}
