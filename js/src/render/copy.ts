// Copy buttons: one for a whole reply (its markdown source) and one on each code block (the code). A button
// has no text of its own (its icon is drawn by CSS, its name is in aria-label and title) and cannot be selected,
// so it is never part of what a person selects and copies, nor of a message's text.

const SHOWN_MS = 1500;

/** Copies `text` to the clipboard: the Clipboard API, else a hidden textarea and execCommand (an insecure
 * origin, an older host). Resolves to whether it worked. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // refused (no permission, not focused): try the fallback
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  area.style.pointerEvents = "none";
  const active = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  active?.focus?.({ preventScroll: true });
  return ok;
}

/** A copy button; `text` is read when it is clicked. */
export function copyButton(className: string, label: string, text: () => string): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `aiw-copy ${className}`;
  b.setAttribute("aria-label", label);
  b.title = label;
  let timer: ReturnType<typeof setTimeout> | null = null;
  b.addEventListener("click", async (ev) => {
    ev.stopPropagation();
    const ok = await copyText(text());
    b.dataset.copied = ok ? "true" : "false";
    b.title = ok ? "Copied" : "Could not copy";
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      delete b.dataset.copied;
      b.title = label;
    }, SHOWN_MS);
  });
  return b;
}

/** Gives each code block in `root` (sanitised markdown) a copy button for its code. */
export function addCodeCopyButtons(root: ParentNode): void {
  for (const pre of root.querySelectorAll("pre")) {
    const code = pre.querySelector("code") ?? pre;
    const box = document.createElement("div");
    box.className = "aiw-code-block";
    pre.replaceWith(box);
    box.append(pre, copyButton("aiw-copy-code", "Copy code", () => code.textContent ?? ""));
  }
}
