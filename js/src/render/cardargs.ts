// A card's arguments section: the code arguments as code (render/codeargs) and the others in a JSON view that grows
// by patches. A collapsed card lets it lag ("stale") and builds it when the card is opened.

import { h, setHidden, setText } from "../dom";
import type { ArgPatch, ToolCallPart } from "../types";
import { CodeArguments, otherArguments } from "./codeargs";
import { JsonView } from "./json";

export class CardArguments {
  readonly el = h("div", "aiw-tool-args");
  private readonly json = new JsonView({});
  private readonly label = h("div", "aiw-section-label", "Arguments");
  private readonly code = new CodeArguments();
  private codeKey = "{}"; // the code arguments' names and languages it shows by
  private stale = true; // lags the arguments (built when shown)

  constructor(
    private readonly part: () => ToolCallPart,
    /** The tool's code arguments (name -> language). */
    private readonly codeNames: () => Record<string, string>,
  ) {
    this.el.append(this.code.el, this.label, this.json.el);
  }

  /** The arguments changed: by `patches` (null: re-render from the value); `open`: the section is seen. */
  changed(patches: ArgPatch[] | null, open: boolean): void {
    if (!open || this.stale) {
      this.stale = true;
      return;
    }
    if (!this.code.active) {
      if (!patches || !this.json.apply(patches)) this.render();
      return;
    }
    // The code arguments follow the parsed value; the JSON view takes the patches of the others.
    const code = this.codeNames();
    const others = patches?.filter((p) => !(p[1].length > 0 && String(p[1][0]) in code));
    if (!others || others.some((p) => p[1].length === 0) || !this.json.apply(others)) this.render();
    else this.refresh();
  }

  /** The tool's info may have changed: when its code arguments did, the section is built again. */
  infoChanged(open: boolean): void {
    const key = JSON.stringify(this.codeNames());
    if (key === this.codeKey) return;
    this.codeKey = key;
    if (open) this.render();
    else this.stale = true;
  }

  /** The section is seen: brought up to date if it lags. */
  shown(): void {
    if (this.stale) this.render();
  }

  /** The call's state or edit changed: the code views follow (what runs, whether it streams); `edited` names the
   * model's arguments as such. */
  callChanged(edited: boolean, open: boolean): void {
    setText(this.label, edited ? "Arguments from the model" : "Arguments");
    if (open && !this.stale && this.code.active) this.refresh();
  }

  /** While the arguments stream, long strings show their newest lines. */
  setLive(live: boolean): void {
    this.json.setLive(live);
    if (this.code.active && !this.stale) this.refresh();
  }

  /** From the value: the code arguments as code, the others (the model's) in the JSON view. */
  private render(): void {
    this.stale = false;
    const p = this.part();
    const code = this.codeNames();
    this.json.render(Object.keys(code).length ? otherArguments(p.parsed_arguments, code) : p.parsed_arguments);
    this.refresh();
  }

  private refresh(): void {
    const code = this.codeNames();
    const p = this.part();
    const edited = p.edited_arguments && typeof p.edited_arguments === "object" && !Array.isArray(p.edited_arguments);
    this.code.update(code, edited ? p.edited_arguments! : p.parsed_arguments, p.parsed_arguments, !!edited, p.state === "streaming");
    // Nothing else to show: no empty JSON view under the code.
    const bare = this.code.active && Object.keys(otherArguments(p.parsed_arguments, code)).length === 0;
    setHidden(this.label, bare);
    setHidden(this.json.el, bare);
  }
}
