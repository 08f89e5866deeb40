import { describe, expect, it } from "vitest";
import { contextCutText, readContextCut } from "../src/render/contextcut";
import type { MessageList } from "../src/render/list";
import { $, FakeModel, assistant, mount, user } from "./helpers";

const CUT = {
  first_sent_id: "u2",
  left_out_messages: 2,
  left_out_turns: 1,
  shortened_results: 0,
  left_out_tokens: 181786,
  sent_tokens: 19880,
  window: 20000,
};

function conversation(model: FakeModel): void {
  model.finish(user("u0", 0, "first"));
  model.finish(assistant("a1", 1, [{ kind: "text", text: "one" }], { status: "completed" }));
  model.finish(user("u2", 2, "second"));
  model.finish(assistant("a3", 3, [{ kind: "text", text: "two" }], { status: "completed" }));
}

const order = (root: HTMLElement): string[] =>
  [...$(root, ".aiw-messages").children]
    .filter((el) => !el.classList.contains("aiw-pending-sends") && !el.classList.contains("aiw-queued")) // the rows of sends not in the conversation yet
    .map((el) =>
    el.classList.contains("aiw-context-cut") ? "cut" : (el as HTMLElement).dataset.id ?? el.className,
  );

describe("the marker where sending stopped", () => {
  it("says how much was not sent, over which window", () => {
    expect(contextCutText(CUT)).toBe(
      "Earlier messages were not sent to the model: 2 messages, ~181,786 tokens over the 20,000-token window.",
    );
    expect(contextCutText({ ...CUT, shortened_results: 3 })).toContain("; 3 older tool results sent shortened.");
    expect(contextCutText({ ...CUT, left_out_messages: 0, shortened_results: 1 })).toBe(
      "1 older tool result was sent to the model shortened, ~181,786 tokens over the 20,000-token window.",
    );
  });

  it("reads only a real cut from the trait", () => {
    expect(readContextCut({})).toBeNull();
    expect(readContextCut(null)).toBeNull();
    expect(readContextCut({ ...CUT, left_out_messages: 0 })).toBeNull();
    expect(readContextCut({ ...CUT, window: "x" })?.window).toBe(0);
    expect(readContextCut(CUT)).toEqual(CUT);
  });

  it("shows before the first message sent, moves when the cut changes, and goes when everything is sent", async () => {
    const model = new FakeModel({ _context_cut: CUT });
    conversation(model);
    const { view, root } = await mount(model);
    expect(order(root).filter((x) => x !== "aiw-anchor")).toEqual(["u0", "a1", "cut", "u2", "a3"]);
    const marker = $(root, ".aiw-context-cut");
    expect(marker.getAttribute("role")).toBe("note");
    expect(marker.textContent).toContain("2 messages, ~181,786 tokens over the 20,000-token window");

    model.set("_context_cut", { ...CUT, first_sent_id: "a3", left_out_messages: 3 });
    view.flush();
    expect(order(root).filter((x) => x !== "aiw-anchor")).toEqual(["u0", "a1", "u2", "cut", "a3"]);
    expect(root.querySelectorAll(".aiw-context-cut")).toHaveLength(1);

    model.set("_context_cut", {});
    view.flush();
    expect(root.querySelector(".aiw-context-cut")).toBeNull();
  });

  it("stays with its message when an earlier one is put in above it, and waits for a message not shown yet", async () => {
    const model = new FakeModel({ _context_cut: { ...CUT, first_sent_id: "u4" } });
    conversation(model);
    const { view, root } = await mount(model);
    expect(root.querySelector(".aiw-context-cut")).toBeNull(); // u4 is not in the list yet
    model.finish(user("u4", 4, "third"));
    view.flush();
    expect(order(root).filter((x) => x !== "aiw-anchor").slice(-2)).toEqual(["cut", "u4"]);
    const list = (view as unknown as { list: MessageList }).list;
    list.add(assistant("a3b", 3.5, [], { status: "completed" })); // an earlier message put in late
    expect(order(root).filter((x) => x !== "aiw-anchor").slice(-3)).toEqual(["a3b", "cut", "u4"]);
  });
});
