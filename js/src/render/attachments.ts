// Attachments as chips: the input box's `@name` chips and pasted or dropped files (with their remove button) and
// completion list, and the
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

/** A file pasted or dropped into the input box, as a send carries it (`data`: its bytes, base64). */
export interface PastedFile {
  name: string;
  media_type: string;
  data: string;
}

/** The kernel's limits for pasted files (ai_widgets/widget/_actions.py): the largest, all of one message, how many. */
export const MAX_PASTED_BYTES = 5 * 1024 * 1024;
export const MAX_PASTED_TOTAL_BYTES = 7 * 1024 * 1024;
export const MAX_PASTED_FILES = 10;
const MB = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`;

interface FileChip {
  name: string;
  size: number;
  mediaType: string;
  data: string | null; // null until it is read
  error: string | null;
  el: HTMLElement;
}

/** A file's bytes, base64 (a data: URL's payload). */
export function readBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = typeof reader.result === "string" ? reader.result : "";
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

/** The chips above the input: one per attached name and one per pasted or dropped file, in the order attached. */
export class InputChips {
  readonly el = h("div", "aiw-chips");
  private readonly chips = new Map<string, { info: ChipInfo; el: HTMLElement }>();
  private readonly pasted: FileChip[] = [];
  private fileCount = 0;

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
    this.updateHidden();
  }

  clear(): void {
    this.chips.clear();
    this.pasted.length = 0;
    this.el.replaceChildren();
    this.el.hidden = true;
  }

  private updateHidden(): void {
    this.el.hidden = this.chips.size === 0 && this.pasted.length === 0;
  }

  // ---- pasted and dropped files ----

  /** Adds a chip per file and reads each (the chip says "…" until it is read); a file over the limits gets a chip
   * that says why, and the message cannot be sent until it is removed. `changed` runs once each is read. */
  addFiles(files: Iterable<File>, changed: () => void): void {
    for (const file of files) {
      const taken = new Set(this.pasted.map((c) => c.name));
      // As the kernel takes a name: no control characters or path separators, at most 255 characters.
      const given = file.name.replace(/[\x00-\x1f\x7f/\\]/g, "_").slice(0, 200);
      let name = given || `pasted-${++this.fileCount}${extension(file.type)}`;
      for (let n = 2; taken.has(name); n++) name = numbered(given || name, n);
      const chip: FileChip = { name, size: file.size, mediaType: mediaTypeOf(file.type), data: null, error: null, el: h("span", "aiw-chip aiw-chip-input aiw-chip-pasted") };
      chip.el.setAttribute("role", "listitem");
      const total = this.pasted.reduce((sum, c) => sum + (c.error ? 0 : c.size), 0) + file.size;
      if (this.pasted.length >= MAX_PASTED_FILES) chip.error = `Too many files: a message takes at most ${MAX_PASTED_FILES}.`;
      else if (file.size > MAX_PASTED_BYTES) chip.error = `${name} is ${MB(file.size)}: a file may be at most ${MB(MAX_PASTED_BYTES)}.`;
      else if (total > MAX_PASTED_TOTAL_BYTES) chip.error = `The files would come to ${MB(total)}: a message takes at most ${MB(MAX_PASTED_TOTAL_BYTES)}.`;
      this.pasted.push(chip);
      this.el.append(chip.el);
      this.renderFile(chip);
      if (chip.error === null) {
        readBase64(file).then(
          (data) => {
            chip.data = data;
            this.renderFile(chip);
            changed();
          },
          (err: unknown) => {
            chip.error = `${name} could not be read: ${err instanceof Error ? err.message : String(err)}`;
            this.renderFile(chip);
            changed();
          },
        );
      }
    }
    this.updateHidden();
    changed();
  }

  /** The files read, as a send carries them. */
  files(): PastedFile[] {
    return this.pasted.filter((c) => c.data !== null && c.error === null).map((c) => ({ name: c.name, media_type: c.mediaType, data: c.data as string }));
  }

  /** Why the message cannot be sent now because of its files (one still being read, one refused), or null. */
  filesProblem(): string | null {
    const refused = this.pasted.find((c) => c.error !== null);
    if (refused) return `${refused.error} Remove it to send.`;
    return this.pasted.some((c) => c.data === null) ? "A file is still being read." : null;
  }

  private renderFile(chip: FileChip): void {
    const body = h("span", "aiw-chip-body");
    const thumbnail = chip.data !== null && /^image\/(?:png|jpeg|gif|webp)$/.test(chip.mediaType) && chip.data.length <= 200_000 ? `data:${chip.mediaType};base64,${chip.data}` : null;
    chipBody(body, chip.name, chip.error ? "cannot attach" : chip.data === null ? "…" : kindOf(chip.mediaType), formatSize(chip.size), thumbnail);
    chip.el.classList.toggle("aiw-chip-error", chip.error !== null);
    setAttr(chip.el, "title", chip.error);
    const remove = button("aiw-chip-remove", "×", () => {
      const at = this.pasted.indexOf(chip);
      if (at >= 0) this.pasted.splice(at, 1);
      chip.el.remove();
      this.updateHidden();
      this.onRemove(chip.name);
    });
    remove.setAttribute("aria-label", `Remove attachment ${chip.name}`);
    chip.el.replaceChildren(body, remove);
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

/** What the browser says a file is, as the kernel takes it (type/subtype), or a byte stream. */
function mediaTypeOf(type: string): string {
  const base = type.split(";")[0].trim().toLowerCase();
  return /^[\w.+-]+\/[\w.+-]+$/.test(base) ? base : "application/octet-stream";
}

function kindOf(mediaType: string): string {
  if (mediaType.startsWith("image/")) return "image";
  if (mediaType === "application/pdf") return "PDF";
  if (mediaType.startsWith("text/") || mediaType === "application/json") return "text file"; // as the kernel titles it
  return "file";
}

function extension(type: string): string {
  const sub = /^image\/(png|jpeg|gif|webp)$/.exec(type)?.[1];
  return sub ? `.${sub === "jpeg" ? "jpg" : sub}` : "";
}

/** `name` with ` (n)` before its extension: a second `image.png` pasted is `image (2).png`. */
function numbered(name: string, n: number): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
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
    // Its kind in the input box's words ("image", "PDF"), so a chip reads the same before and after sending; the
    // media type is in its title.
    chipBody(this.el, name, type ? kindOf(type) : "", size, this.thumbnail);
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
    const body = title ? text.slice(text.indexOf("\n") + 1) : text;
    // The size of what was attached (its header line aside), as its chip in the input box said.
    chipBody(this.summary, title?.name || "attachment", title?.kind ?? "text", formatSize(new TextEncoder().encode(body).length), null);
    setText(this.body, body);
  }
}
