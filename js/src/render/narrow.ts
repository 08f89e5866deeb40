// Marks the chat narrow or tiny by its own width (JupyterLab at 500 px with the file browser open leaves an output
// ~130 px wide), for the styles that wrap the input row and the buttons (styles/keys.css). A ResizeObserver rather
// than a CSS container query: a container's width may not come from its content, which would collapse the chat in a
// host that sizes it to fit (an inline-block or flex item).

import { toggleClass } from "../dom";

export const NARROW_PX = 420;
export const TINY_PX = 240;

export function watchWidth(root: HTMLElement): () => void {
  if (typeof ResizeObserver !== "function") return () => {};
  const observer = new ResizeObserver((entries) => {
    const width = entries[entries.length - 1]?.contentRect.width ?? root.clientWidth;
    if (width <= 0) return; // off the page (a hidden tab): keep what it was
    toggleClass(root, "aiw-narrow", width < NARROW_PX);
    toggleClass(root, "aiw-tiny", width < TINY_PX);
  });
  observer.observe(root);
  return () => observer.disconnect();
}
