import { describe, expect, it } from "vitest";
import { ChatView } from "../src/view";
import { $, FakeModel, assistant, settle, user } from "./helpers";

// JupyterLab's widget renderer, asked to render an output again (an update of its display): it empties its node
// and attaches a new view of the same model, leaving the old view undestroyed.
function output(): HTMLElement {
  const node = document.createElement("div");
  node.className = "jp-OutputArea-output";
  document.body.append(node);
  return node;
}

async function render(model: FakeModel, node: HTMLElement): Promise<ChatView> {
  const el = document.createElement("div");
  const view = new ChatView(model.asModel(), el); // made first, attached after (as the renderer does)
  node.append(el);
  await settle();
  await new Promise((resolve) => setTimeout(resolve, 30)); // a frame: the view finds its output
  view.flush();
  return view;
}

describe("an output rendered again (its display updated as a turn ends)", () => {
  it("destroys the view it replaced and keeps the person's unsent text", async () => {
    const model = new FakeModel();
    model.finish(user("u1", 0, "hello"), { notify: false });
    const node = output();
    const first = await render(model, node);
    model.custom({ type: "snapshot", from: 1, finished: [], live: [] });
    $<HTMLTextAreaElement>(node, ".aiw-input").value = "half a question";
    node.textContent = "Loading widget...";
    const second = await render(model, node);
    expect((first as unknown as { destroyed: boolean }).destroyed).toBe(true);
    expect((second as unknown as { destroyed: boolean }).destroyed).toBe(false);
    expect(node.querySelectorAll(".aiw")).toHaveLength(1);
    expect($<HTMLTextAreaElement>(node, ".aiw-input").value).toBe("half a question");
    // The replacement goes on showing the conversation; the leftover no longer patches anything.
    model.patch(["start", assistant("a1", 1, [])]);
    second.flush();
    expect(node.querySelectorAll(".aiw-message")).toHaveLength(2);
  });

  it("leaves alone a view whose whole cell is detached (a windowed notebook scrolls it away)", async () => {
    const model = new FakeModel();
    const cell = document.createElement("div");
    const node = document.createElement("div");
    node.className = "jp-OutputArea-output";
    cell.append(node);
    document.body.append(cell);
    const view = await render(model, node);
    cell.remove();
    view.flush();
    expect((view as unknown as { destroyed: boolean }).destroyed).toBe(false);
    const other = output();
    await render(model, other); // a second view of the model elsewhere
    expect((view as unknown as { destroyed: boolean }).destroyed).toBe(false);
  });
});
