// Attachments as chips: the input box's `@name` chips (with their remove button) and completion list, and the
// attachments of a sent user message (a file part, an attachment's text view folded under its chip). Names,
// kinds and texts are untrusted: set as text; an image only from a raster `data:` URL.

import { button, h, setAttr, setText } from "../dom";
import { formatSize } from "../format";
import type { CompletionItem, CompletionState } from "../mention";
import type { FilePart, Part, TextPart } from "../types";
import type { PartView } from "./parts";

/** A thumbnail the kernel made: a PNG, JPEG, GIF or WebP `data:` URL and nothing else (no SVG, no URL). */
const RASTER_DATA_URL = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

export function safeThumbnail(src: unknown): string | null {
  return typeof src === "string" && src.length <= 200_000 && RASTER_DATA_URL.test(src) ? src : null;
}

function thumbnailEl(src: unknown): HTMLImageElement | null {
  const safe = safeThumbnail(src);
  if (!safe) return null;
  const img = h("img", "aiw-chip-thumb");
  img.alt = "";
  img.src = safe;
  return img;
}

/** The body of a chip: an optional thumbnail, the name, its kind and size (each as text). */
function chipBody(chip: HTMLElement, name: string, kind: string, size: string, thumbnail: unknown): void {
  const img = thumbnailEl(thumbnail);
  const parts: Node[] = img ? [img] : [];
  parts.push(h("span", "aiw-chip-name", name));
  if (kind) parts.push(h("span", "aiw-chip-kind", kind));
  if (size) parts.push(h("span", "aiw-chip-size", size));
  chip.replaceChildren(...parts);
}

// ---- the input box ---------------------------------------------------------------------------------------------

/** What the kernel said about one `@name` (its `attachment` answer), or `pending` until it answers. */
export interface ChipInfo {
  name: string;
  kind: string;
  size: string;
  thumbnail: string | null;
  error: string | null;
  pending: boolean;
}

/** The chips above the input: one per attached name, in the order attached. */
export class InputChips {
  readonly el = h("div", "aiw-chips");
  private readonly chips = new Map<string, { info: ChipInfo; el: HTMLElement }>();

  constructor(private readonly onRemove: (name: string) => void) {
    this.el.setAttribute("role", "list");
    this.el.setAttribute("aria-label", "Attachments");
    this.el.hidden = true;
  }

  names(): string[] {
    return [...this.chips.keys()];
  }

  has(name: string): boolean {
    return this.chips.has(name);
  }

  /** Adds a chip waiting for the kernel's description; false if `name` has one already. */
  add(name: string): boolean {
    if (this.chips.has(name)) return false;
    const info: ChipInfo = { name, kind: "", size: "", thumbnail: null, error: null, pending: true };
    const el = h("span", "aiw-chip aiw-chip-input");
    el.setAttribute("role", "listitem");
    this.chips.set(name, { info, el });
    this.render(info, el);
    this.el.append(el);
    this.el.hidden = false;
    return true;
  }

  /** The kernel's `attachment` answer: fills the chip in; an unknown name removes it. Whether a chip changed. */
  describe(answer: Record<string, unknown>): boolean {
    const name = typeof answer.name === "string" ? answer.name : "";
    const chip = this.chips.get(name);
    if (!chip) return false;
    if (answer.found === false) {
      this.remove(name);
      return true;
    }
    const text = (v: unknown): string => (typeof v === "string" ? v : "");
    chip.info = {
      name,
      kind: text(answer.kind),
      size: typeof answer.size === "number" && answer.size >= 0 ? formatSize(answer.size) : "",
      thumbnail: safeThumbnail(answer.thumbnail),
      error: text(answer.error) || null,
      pending: false,
    };
    this.render(chip.info, chip.el);
    return true;
  }

  remove(name: string): void {
    const chip = this.chips.get(name);
    if (!chip) return;
    chip.el.remove();
    this.chips.delete(name);
    this.el.hidden = this.chips.size === 0;
  }

  clear(): void {
    this.chips.clear();
    this.el.replaceChildren();
    this.el.hidden = true;
  }

  private render(info: ChipInfo, el: HTMLElement): void {
    const body = h("span", "aiw-chip-body");
    chipBody(body, `@${info.name}`, info.pending ? "…" : info.error ? "cannot attach" : info.kind, info.size, info.thumbnail);
    el.classList.toggle("aiw-chip-error", info.error !== null);
    setAttr(el, "title", info.error);
    const remove = button("aiw-chip-remove", "×", () => {
      this.remove(info.name);
      this.onRemove(info.name);
    });
    remove.setAttribute("aria-label", `Remove attachment ${info.name}`);
    el.replaceChildren(body, remove);
  }
}

let listCount = 0;

/** The completion list under the input: the kernel's variables, the selected one highlighted. */
export class CompletionList {
  readonly el = h("ul", "aiw-mentions");
  readonly id = `aiw-mentions-${++listCount}`;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly onPick: (index: number) => void,
  ) {
    this.el.id = this.id;
    this.el.setAttribute("role", "listbox");
    this.el.setAttribute("aria-label", "Kernel variables");
    this.el.hidden = true;
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", this.id);
    input.setAttribute("aria-expanded", "false");
  }

  /** Shows `state` (hidden when it is closed). */
  render(state: CompletionState): void {
    const open = state.open;
    this.el.hidden = !open;
    this.input.setAttribute("aria-expanded", String(open));
    if (!open) {
      this.el.replaceChildren();
      this.input.removeAttribute("aria-activedescendant");
      return;
    }
    this.el.replaceChildren(...state.items.map((item, i) => this.option(item, i, i === state.selected)));
    const selected = this.el.children[state.selected] as HTMLElement | undefined;
    this.input.setAttribute("aria-activedescendant", selected?.id ?? "");
    selected?.scrollIntoView?.({ block: "nearest" });
  }

  private option(item: CompletionItem, index: number, selected: boolean): HTMLElement {
    const li = h("li", "aiw-mention");
    li.id = `${this.id}-${index}`;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", String(selected));
    li.classList.toggle("aiw-mention-other", !item.attachable);
    li.append(h("span", "aiw-mention-name", `@${item.name}`), h("span", "aiw-mention-kind", item.kind));
    if (!item.attachable) li.title = "Not attachable as it is (no conversion for its type)";
    // mousedown, not click: the input keeps its focus and caret.
    li.addEventListener("mousedown", (ev) => {
      ev.preventDefault();
      this.onPick(index);
    });
    return li;
  }
}

// ---- a sent user message's attachments -------------------------------------------------------------------------

/** A file part of a user message: a chip (an image with its thumbnail), never its bytes. */
export class FileChipView implements PartView {
  readonly kind = "file" as const;
  readonly el = h("span", "aiw-part aiw-chip aiw-chip-file");

  /** `thumbnail`: the message's picture of this part (`thumbnails`), if any. */
  constructor(
    part: FilePart,
    private readonly thumbnail: unknown = null,
  ) {
    this.update(part);
  }

  update(part: Part): void {
    const file = part as FilePart;
    const name = typeof file.name === "string" && file.name ? file.name : "(unnamed file)";
    const type = typeof file.media_type === "string" ? file.media_type : "";
    const size = typeof file.size === "number" && file.size >= 0 ? formatSize(file.size) : "";
    chipBody(this.el, name, type, size, this.thumbnail);
    setAttr(this.el, "title", [name, type, size].filter(Boolean).join(" · "));
  }
}

/** `Attached pandas DataFrame `df`:` -> kind and name (the header `attachments.py` writes), or null. */
export function attachmentTitle(text: string): { kind: string; name: string } | null {
  const first = text.split("\n", 1)[0];
  const match = /^Attached (.+?)(?: `([^`]*)`)?:$/.exec(first);
  return match ? { kind: match[1], name: match[2] ?? "" } : null;
}

/** An attachment's text view (a frame's shape, columns and rows...): a chip that opens to show it. */
export class AttachmentTextView implements PartView {
  readonly kind = "text" as const;
  readonly el = h("details", "aiw-part aiw-attachment");
  private readonly summary = h("summary", "aiw-chip aiw-chip-text");
  private readonly body = h("pre", "aiw-attachment-body");

  constructor(part: TextPart) {
    this.el.append(this.summary, this.body);
    this.update(part);
  }

  update(part: Part): void {
    const text = (part as TextPart).text;
    const title = attachmentTitle(text);
    const size = formatSize(new TextEncoder().encode(text).length);
    chipBody(this.summary, title?.name || "attachment", title?.kind ?? "text", size, null);
    setText(this.body, title ? text.slice(text.indexOf("\n") + 1) : text);
  }
}
