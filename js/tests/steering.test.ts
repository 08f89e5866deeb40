import { describe, expect, it } from "vitest";
import { hasCodeTool } from "../src/render/unasked";
import { decisionText } from "../src/render/verdict";
import { $, FakeModel, assistant, call, mount, user } from "./helpers";

function type(input: HTMLTextAreaElement, text: string): void {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function enter(input: HTMLTextAreaElement): void {
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
}

describe("steering a running turn", () => {
  it("sends while busy, shows the message queued until it is delivered, then where it was delivered", async () => {
    const model = new FakeModel({ _busy: true });
    const { view, root } = await mount(model);
    model.custom({ type: "snapshot", live: [] });
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "also plot the outliers");
    enter(input);
    const sent = model.sent.at(-1) as { type: string; text: string; id: string };
    expect(sent).toEqual({ type: "send", text: "also plot the outliers", id: expect.any(String) });
    expect(input.value).toBe("");
    model.custom({ type: "sent", id: sent.id });
    model.set("_queued", [{ id: "m2", text: "also plot the outliers" }]);
    view.flush();
    const queued = root.querySelectorAll(".aiw-queued-message");
    expect(queued).toHaveLength(1);
    expect(queued[0].querySelector(".aiw-queued-text")!.textContent).toBe("also plot the outliers");
    expect(queued[0].querySelector(".aiw-queued-mark")!.textContent).toBe("Will be sent at the next step");
    expect(root.querySelectorAll(".aiw-pending-send")).toHaveLength(0); // shown once: the kernel's queue has it
    // Delivered at the tool boundary: it leaves the queue and is a message of the conversation, after the reply.
    model.finish(assistant("a1", 1, [call("c1", "run_python", { state: "completed" })], { status: "completed" }));
    model.set("_queued", []);
    model.finish(user("m2", 2, "also plot the outliers"));
    await new Promise((r) => setTimeout(r, 0));
    view.flush();
    expect(root.querySelectorAll(".aiw-queued-message")).toHaveLength(0);
    expect($(root, ".aiw-queued").hidden).toBe(true);
    const messages = [...root.querySelectorAll(".aiw-message")];
    expect(messages).toHaveLength(2);
    expect(messages[1].textContent).toContain("also plot the outliers"); // after the reply whose results it joined
  });

  it("puts the text a stop handed back into the input box, before what is typed there", async () => {
    const model = new FakeModel({ _busy: true });
    const { view, root } = await mount(model);
    model.custom({ type: "snapshot", live: [] });
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    type(input, "new thought");
    model.custom({ type: "returned", text: "never mind that" });
    view.flush();
    expect(input.value).toBe("never mind that\nnew thought");
    expect(root.querySelectorAll(".aiw-banner-kernel")).toHaveLength(0); // no failure shown
  });

  it("a queued text is shown as text, never as markup", async () => {
    const model = new FakeModel({ _busy: true, _queued: [{ id: "m", text: "<img src=x onerror=alert(1)>" }] });
    const { root } = await mount(model);
    expect(root.querySelector(".aiw-queued img")).toBeNull();
    expect($(root, ".aiw-queued-text").textContent).toBe("<img src=x onerror=alert(1)>");
  });
});

describe("Run code without asking", () => {
  const codeTool = { run_python: { title: "Run Python", code_arguments: { code: "python" } } };

  it("shows the switch only when a tool runs code, and asks the kernel to turn it on or off", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    const sw = $(root, ".aiw-unasked-switch");
    expect(sw.hidden).toBe(true);
    model.set("_tools", codeTool);
    view.flush();
    expect(sw.hidden).toBe(false);
    const box = $<HTMLInputElement>(root, ".aiw-unasked-input");
    expect(box.getAttribute("role")).toBe("switch");
    expect(box.checked).toBe(false);
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    expect(model.sent.at(-1)).toEqual({ type: "run_unasked", on: true });
    expect(box.checked).toBe(false); // the kernel's state until it answers
    model.set("_run_unasked", true);
    view.flush();
    expect(box.checked).toBe(true);
    expect(sw.dataset.on).toBe("true");
    box.checked = false;
    box.dispatchEvent(new Event("change"));
    expect(model.sent.at(-1)).toEqual({ type: "run_unasked", on: false });
  });

  it("tells which tools run code", () => {
    expect(hasCodeTool(codeTool)).toBe(true);
    expect(hasCodeTool({ echo: { title: "Echo" } })).toBe(false);
    expect(hasCodeTool({ odd: { code_arguments: {} } })).toBe(false);
    expect(hasCodeTool(undefined)).toBe(false);
  });

  it("marks every card it spared", async () => {
    const spared = call("c1", "run_python", { state: "completed", unasked_reason: "Run code without asking is on" });
    expect(decisionText(spared)).toBe("Ran without asking: Run code without asking is on");
    const model = new FakeModel({ _tools: codeTool });
    const { view, root } = await mount(model);
    model.finish(assistant("a1", 0, [spared], { status: "completed" }));
    await new Promise((r) => setTimeout(r, 0));
    view.flush();
    const badge = $(root, ".aiw-unasked");
    expect(badge.hidden).toBe(false);
    expect(badge.title).toBe("Ran without asking: Run code without asking is on");
    const asked = call("c2", "run_python", { state: "completed", decision: "approved" });
    expect(decisionText(asked)).not.toContain("without asking");
  });
});
