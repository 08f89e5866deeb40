// A typed answer's card (`output_type=`): the type's name and where the answer is (answering, matches, does not
// match), what each earlier, refused answer was told, then the object: a JSON view that grows by the kernel's
// parse patches while the answer streams (as a tool card's arguments do) and shows the validated object once it
// validates. Text that is not JSON is shown as the text it is. Everything is set as text.

import { type AnswerDisplay, answerDisplay, isAnswerPart } from "../answer";
import { h, setAttr, setHidden, setText } from "../dom";
import type { ArgPatch, Part, TextPart, TypedAnswer } from "../types";
import { JsonView } from "./json";
import type { PartView } from "./parts";

type AnswerPart = TextPart & { answer: TypedAnswer };

export class AnswerPartView implements PartView {
  readonly kind = "text" as const;
  readonly el = h("div", "aiw-part aiw-answer");
  private readonly type = h("span", "aiw-answer-type");
  private readonly state = h("span", "aiw-badge aiw-answer-state");
  private readonly refused = h("div", "aiw-answer-refused");
  private readonly json = new JsonView({});
  private readonly raw = h("pre", "aiw-answer-raw");
  private readonly errors = h("div", "aiw-answer-errors");
  private part: AnswerPart;
  private refusedShown = "";

  constructor(
    part: AnswerPart,
    private inProgress: boolean,
  ) {
    this.part = part;
    const header = h("div", "aiw-answer-header");
    header.append(h("span", "aiw-answer-icon", "{ }"), this.type, this.state);
    this.el.append(this.refused, header, this.json.el, this.raw, this.errors);
    this.render(null);
  }

  /** Whether this card shows `part` (a plain text part needs a markdown view instead). */
  static shows(part: Part): part is AnswerPart {
    return isAnswerPart(part);
  }

  /** The part was added, replaced (checked, no longer JSON) or its message ended: drawn whole. */
  update(part: Part): void {
    if (!isAnswerPart(part)) return;
    this.part = part;
    this.render(null);
  }

  /** Text was appended and the parse changed by `patches` (null: draw the parse whole). */
  grow(part: AnswerPart, patches: ArgPatch[] | null, inProgress: boolean): void {
    this.part = part;
    this.inProgress = inProgress;
    this.render(patches);
  }

  finish(): void {
    this.inProgress = false;
    this.render(null);
  }

  /** `patches`: what changed in the parse the JSON view shows, applied to it where they fit. */
  private render(patches: ArgPatch[] | null): void {
    const shown = answerDisplay(this.part, this.inProgress);
    setAttr(this.el, "data-state", shown.phase);
    setText(this.type, this.part.answer.type_name);
    setText(this.state, shown.label);
    this.json.setLive(shown.phase === "streaming");
    if (shown.value !== null && !(patches && shown.phase === "streaming" && this.json.apply(patches))) {
      this.json.render(shown.value);
    }
    setHidden(this.json.el, shown.value === null);
    setHidden(this.raw, shown.value !== null);
    if (shown.value === null) setText(this.raw, shown.text);
    setHidden(this.errors, !shown.errors);
    if (shown.errors) {
      const title = h("div", "aiw-answer-errors-title", `Does not match ${this.part.answer.type_name}:`);
      this.errors.replaceChildren(title, h("pre", "aiw-answer-errors-text", shown.errors));
    }
    this.showRefused(shown);
  }

  private showRefused(shown: AnswerDisplay): void {
    const key = JSON.stringify(shown.refused);
    if (key === this.refusedShown) return;
    this.refusedShown = key;
    this.refused.replaceChildren(
      ...shown.refused.map((r) => {
        const note = h("div", "aiw-answer-refusal");
        note.append(h("div", "aiw-answer-refusal-title", `${r.title}; asked again:`), h("pre", "aiw-answer-refusal-text", r.errors));
        return note;
      }),
    );
    setHidden(this.refused, shown.refused.length === 0);
  }
}
