// A resource opened from a card (render/resourceopen.ts): a citation that is not a web address gets Open, which asks
// the kernel (resource_open) once; the kernel's `resource` shows under it as text (never markup), or why it could
// not be read; a web link gets no Open.

import { describe, expect, it } from "vitest";
import { $, FakeModel, assistant, call, mount } from "./helpers";

async function linkCard() {
  const model = new FakeModel({ _tools: { links: { title: "Links" } }, collapse_tool_calls: false });
  const { view, root } = await mount(model);
  const outcome = {
    status: "success" as const,
    value: "Read these.",
    citations: [
      { url: "docs://guide", title: "guide" },
      { url: "https://example.com/manual", title: "manual" },
    ],
  };
  model.patch(["start", assistant("a1", 0, [call("c1", "links", { state: "completed", outcome })])]);
  view.flush();
  return { model, view, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

const sentOf = (model: FakeModel, type: string) => model.sent.filter((m) => (m as { type?: string }).type === type);

describe("a resource a result links to, opened in its card", () => {
  it("asks the kernel once and shows the text as text", async () => {
    const { model, view, card } = await linkCard();
    const opens = card.querySelectorAll<HTMLButtonElement>(".aiw-resource-open");
    expect(opens).toHaveLength(1); // the web link has none
    opens[0].click();
    opens[0].click(); // disabled after the first
    expect(sentOf(model, "resource_open")).toEqual([{ type: "resource_open", tool_call_id: "c1", uri: "docs://guide" }]);
    const shown = $(card, ".aiw-resource-text");
    expect(shown.textContent).toBe("Reading…");
    model.custom({ type: "resource", tool_call_id: "c1", uri: "docs://guide", text: "<img src=x onerror=alert(1)># Guide" });
    view.flush();
    expect(shown.textContent).toBe("<img src=x onerror=alert(1)># Guide");
    expect(shown.querySelector("img")).toBeNull();
  });

  it("says why it could not be read", async () => {
    const { model, view, card } = await linkCard();
    $<HTMLButtonElement>(card, ".aiw-resource-open").click();
    model.custom({ type: "resource", tool_call_id: "c1", uri: "docs://guide", error: "It could not be read: gone" });
    view.flush();
    const shown = $(card, ".aiw-resource-text");
    expect(shown.textContent).toBe("It could not be read: gone");
    expect(shown.classList.contains("aiw-resource-error")).toBe(true);
  });
});
