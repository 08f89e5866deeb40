import { describe, expect, it } from "vitest";
import { $, FakeModel, assistant, call, mount, user } from "./helpers";

describe("a turn shown in the cell that asked (scope: turn)", () => {
  it("marks the root, shows the turn's messages, and its Stop and approval buttons act on the session", async () => {
    const model = new FakeModel({ _scope: "turn", _busy: true });
    model.finish(user("u1", 4, "delete x"), { notify: false });
    const { view, root } = await mount(model);
    model.custom({ type: "snapshot", from: 1, finished: [], live: [] });
    model.patch(["start", assistant("a1", 5, [call("c1", "delete", { state: "awaiting_approval", approval_reason: "Allow delete?" })])]);
    view.flush();
    expect(root.classList.contains("aiw-turn")).toBe(true);
    expect([...root.querySelectorAll(".aiw-message")].map((m) => (m as HTMLElement).dataset.role)).toEqual(["user", "assistant"]);
    $<HTMLButtonElement>(root, ".aiw-stop").click();
    expect(model.sent.at(-1)).toEqual({ type: "stop" });
    $<HTMLButtonElement>(root, ".aiw-approve-once").click();
    expect(model.sent.at(-1)).toMatchObject({ type: "approve", tool_call_id: "c1", decision: "approved" });
  });

  it("a chat is not a turn view, and a scope change is applied", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    expect(root.classList.contains("aiw-turn")).toBe(false);
    model.set("_scope", "turn");
    view.flush();
    expect(root.classList.contains("aiw-turn")).toBe(true);
  });
});
