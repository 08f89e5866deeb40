import { afterEach, describe, expect, it } from "vitest";
import { ChatView, mount } from "../src/view";
import { $, FakeModel, assistant, call, settle, user } from "./helpers";

// JupyterLab's widget renderer, asked to render an output again (an update of its display): it empties its node
// and attaches a new view of the same model, leaving the old view undestroyed.
function output(parent: HTMLElement = document.body): HTMLElement {
  const node = document.createElement("div");
  node.className = "jp-OutputArea-output";
  parent.append(node);
  return node;
}

const frame = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 40));

/** anywidget's render into a new element, attached after it is made (as the renderer does) or, as anywidget's
 * view renders once its code is loaded, before; returns the cleanup. */
async function render(model: FakeModel, node: HTMLElement, { attachedFirst = false } = {}): Promise<() => void> {
  const el = document.createElement("div");
  if (attachedFirst) node.append(el);
  const cleanup = mount(model.asModel(), el);
  node.append(el);
  await settle();
  await frame(); // the view finds its output
  return cleanup;
}

const destroyed = (view: ChatView): boolean => (view as unknown as { destroyed: boolean }).destroyed;

function conversation(): FakeModel {
  const model = new FakeModel();
  model.finish(user("u1", 0, "hello"), { notify: false });
  const done = call("c1", "get_weather", {
    state: "completed",
    parsed_arguments: { city: "Lisbon" },
    outcome: { status: "success", value: { sky: "sunny" }, text: null, message: null, error: null, citations: [], attachments: [], retryable: false },
  } as never);
  model.finish(assistant("a1", 1, [done], { status: "completed", finish_reason: "stop" }), { notify: false });
  return model;
}

afterEach(() => document.body.replaceChildren());

describe("an output rendered again (its display updated as a turn ends)", () => {
  it("shows the same DOM in the new view: opened cards, unsent text, focus and caret, scroll offsets", async () => {
    const model = conversation();
    const node = output();
    const firstCleanup = await render(model, node);
    const root = $(node, ".aiw");
    const card = $(node, ".aiw-tool-card");
    $(card, ".aiw-tool-toggle").click();
    expect(card.classList.contains("aiw-collapsed")).toBe(false);
    const input = $<HTMLTextAreaElement>(node, ".aiw-input");
    input.value = "half a question";
    input.focus();
    input.setSelectionRange(2, 6);
    const list = $(node, ".aiw-messages");
    list.scrollTop = 40;
    list.dispatchEvent(new Event("scroll"));

    node.textContent = "Loading widget..."; // the renderer empties its node...
    expect(document.activeElement).toBe(document.body);
    list.scrollTop = 0; // (what a browser does to a node that left the page)
    const secondCleanup = await render(model, node); // ...and renders a new view of the same model

    expect(node.querySelectorAll(".aiw")).toHaveLength(1);
    expect($(node, ".aiw")).toBe(root); // the very same DOM, so nothing of it is lost
    expect(card.classList.contains("aiw-collapsed")).toBe(false);
    expect(input.value).toBe("half a question");
    expect(document.activeElement).toBe(input);
    expect([input.selectionStart, input.selectionEnd]).toEqual([2, 6]);
    expect(list.scrollTop).toBe(40);

    // It goes on showing the conversation.
    model.patch(["start", assistant("a2", 2, [])]);
    await frame();
    expect(node.querySelectorAll(".aiw-message")).toHaveLength(3);

    // The old view's cleanup (its output cleared later) leaves it: the new view's destroys it.
    const listeners = model.listenerCount();
    firstCleanup();
    expect(model.listenerCount()).toBe(listeners);
    expect(node.querySelector(".aiw")).toBe(root);
    secondCleanup();
    expect(node.querySelector(".aiw")).toBeNull();
    expect(model.listenerCount()).toBe(0);
  });

  it("does not build the conversation again, and each output takes back its own view", async () => {
    const model = conversation();
    const [one, two] = [output(), output()];
    await render(model, one);
    await render(model, two);
    const roots = [$(one, ".aiw"), $(two, ".aiw")];
    $<HTMLTextAreaElement>(one, ".aiw-input").value = "in the first";
    $<HTMLTextAreaElement>(two, ".aiw-input").value = "in the second";
    one.textContent = "Loading widget...";
    two.textContent = "Loading widget...";
    const sent = model.sent.length;
    await render(model, two, { attachedFirst: true });
    await render(model, one);
    expect([$(one, ".aiw"), $(two, ".aiw")]).toEqual(roots);
    expect($<HTMLTextAreaElement>(one, ".aiw-input").value).toBe("in the first");
    expect($<HTMLTextAreaElement>(two, ".aiw-input").value).toBe("in the second");
    expect(model.sent.length).toBe(sent); // no new view asked the kernel to catch up: none started
  });

  it("leaves alone a view whose whole cell is detached (a windowed notebook scrolls it away)", async () => {
    const model = new FakeModel();
    const cell = document.createElement("div");
    document.body.append(cell);
    const node = output(cell);
    const el = document.createElement("div");
    const view = new ChatView(model.asModel(), el);
    node.append(el);
    await frame();
    cell.remove();
    view.flush();
    expect(destroyed(view)).toBe(false);
    const other = output();
    await render(model, other); // a second view of the model elsewhere: its own
    expect(destroyed(view)).toBe(false);
    expect(other.querySelector(".aiw")).not.toBeNull();
    expect(el.querySelector(".aiw")).not.toBeNull();
  });
});

describe("a notice about the session (its history file taken over)", () => {
  it("shows in a view that was not listening when it came, once, and in a view opened later", async () => {
    const model = new FakeModel();
    const node = output();
    await render(model, node); // (in a page, a notice sent before the view's code loaded is lost: the snapshot has it)
    const banners = (where: ParentNode): string[] => [...where.querySelectorAll(".aiw-banner-kernel")].map((b) => b.textContent ?? "");
    model.custom({ type: "snapshot", from: 0, finished: [], live: [], notices: ["taken over"] });
    model.custom({ type: "error", message: "taken over", notice: 0 }); // live too: shown once
    model.custom({ type: "snapshot", from: 0, finished: [], live: [], notices: ["taken over"] });
    await frame();
    expect(banners(node).filter((t) => t.includes("taken over"))).toHaveLength(1);
    const later = output();
    await render(model, later);
    expect(banners(later).filter((t) => t.includes("taken over"))).toHaveLength(1);
    model.custom({ type: "error", message: "refused" }); // not a notice: every time
    model.custom({ type: "error", message: "refused" });
    expect(banners(node).filter((t) => t.includes("refused")).length).toBeGreaterThan(0);
  });
});

describe("the static transcript after the view's output", () => {
  it("is hidden while a live view shows, and shows again when it goes", async () => {
    const model = new FakeModel({ _transcript_id: "aiw-0123abc" });
    const transcript = document.createElement("div");
    transcript.dataset.aiwTranscript = "aiw-0123abc";
    const other = document.createElement("div");
    other.dataset.aiwTranscript = "aiw-other";
    document.body.append(transcript, other);
    const cleanup = await render(model, output());
    expect(getComputedStyle(transcript).display).toBe("none");
    expect(getComputedStyle(other).display).not.toBe("none");
    cleanup();
    expect(getComputedStyle(transcript).display).not.toBe("none");
  });
});
