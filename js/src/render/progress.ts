// The progress bar of a running call: determinate with a fraction, indeterminate (animated) without one.

import { h, setAttr, setText, toggleClass } from "../dom";
import type { Progress } from "../types";

export class ProgressBar {
  readonly el = h("div", "aiw-progress");
  private readonly track = h("div", "aiw-progress-track");
  private readonly bar = h("div", "aiw-progress-bar");
  private readonly label = h("div", "aiw-progress-label");

  constructor(progress: Progress | null | undefined) {
    this.el.setAttribute("role", "progressbar");
    this.el.setAttribute("aria-valuemin", "0");
    this.el.setAttribute("aria-valuemax", "100");
    this.track.append(this.bar);
    this.el.append(this.track, this.label);
    this.update(progress);
  }

  update(progress: Progress | null | undefined): void {
    const f = progress?.fraction;
    const determinate = typeof f === "number" && Number.isFinite(f);
    const pct = determinate ? Math.round(Math.min(1, Math.max(0, f)) * 100) : null;
    toggleClass(this.el, "aiw-indeterminate", !determinate);
    setAttr(this.el, "aria-valuenow", pct === null ? null : String(pct));
    const width = pct === null ? "" : `${pct}%`;
    if (this.bar.style.width !== width) this.bar.style.width = width;
    const message = typeof progress?.message === "string" ? progress.message : "";
    const text = pct === null ? message || "Running…" : message ? `${message} · ${pct}%` : `${pct}%`;
    setText(this.label, text);
    setAttr(this.el, "aria-valuetext", text || null);
  }
}
