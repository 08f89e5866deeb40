// Tiny DOM helpers. They write only when the value changes, so an update that changes nothing mutates nothing.

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

export function button(className: string, label: string, onClick: (ev: MouseEvent) => void): HTMLButtonElement {
  const b = h("button", className, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** Sets the text of an element or text node if it differs. */
export function setText(node: Node, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

export function setAttr(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) {
    el.setAttribute(name, value);
  }
}

export function toggleClass(el: Element, name: string, on: boolean): void {
  if (el.classList.contains(name) !== on) el.classList.toggle(name, on);
}

export function setHidden(el: HTMLElement, hidden: boolean): void {
  if (el.hidden !== hidden) el.hidden = hidden;
}

export function setDisabled(el: HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement, disabled: boolean): void {
  if (el.disabled !== disabled) el.disabled = disabled;
}
