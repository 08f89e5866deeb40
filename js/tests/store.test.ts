import { describe, expect, it, vi } from "vitest";
import { ChatStore, type StoreEvent, storeFor } from "../src/store";
import type { ToolCallPart } from "../src/types";
import { FakeModel, assistant, call, user } from "./helpers";

function setup(model = new FakeModel()): { model: FakeModel; store: ChatStore; events: StoreEvent[] } {
  const store = new ChatStore(model.asModel());
  const events: StoreEvent[] = [];
  store.subscribe((e) => {
    if (e.kind !== "connected") events.push(e);
  });
  store.attach();
  return { model, store, events };
}

describe("store: ops", () => {
  it("applies every op to a live message and says what changed", () => {
    const { model, store, events } = setup();
    model.patch(["start", assistant("a1", 1)]);
    model.patch(
      ["msg", "a1", { status_text: "Thinking…", ignored: "x" }],
      ["part", "a1", 0, { kind: "reasoning", text: "hm" }],
      ["text", "a1", 0, "m"],
      ["part", "a1", 1, { kind: "text", text: "Hel" }],
      ["text", "a1", 1, "lo"],
      ["part", "a1", 2, call("c1", "get_weather")],
      ["args", "a1", "c1", [["set", ["city"], "Pa"], ["append", ["city"], "ris"]]],
      ["call", "a1", "c1", { state: "running", run_started_at: 5, progress: { fraction: 0.5, message: "half" } }],
    );
    const m = store.get("a1")!;
    expect(m.status_text).toBe("Thinking…");
    expect((m as unknown as Record<string, unknown>).ignored).toBeUndefined();
    expect(m.parts[0]).toEqual({ kind: "reasoning", text: "hmm" });
    expect(m.parts[1]).toEqual({ kind: "text", text: "Hello" });
    const c = m.parts[2] as ToolCallPart;
    expect(c.parsed_arguments).toEqual({ city: "Paris" });
    expect(c.state).toBe("running");
    expect(c.progress).toEqual({ fraction: 0.5, message: "half" });
    expect(events.map((e) => e.kind)).toEqual(["message", "fields", "part", "text", "part", "text", "part", "args", "call"]);
    expect(events[7]).toMatchObject({ kind: "args", id: "a1", index: 2 });
  });

  it("ignores ops for unknown messages, calls and parts", () => {
    const { model, store, events } = setup();
    model.patch(
      ["msg", "nope", { status: "error" }],
      ["part", "nope", 0, { kind: "text", text: "x" }],
      ["text", "nope", 0, "x"],
      ["args", "nope", "c", [["set", ["a"], 1]]],
      ["call", "nope", "c", { state: "running" }],
      ["bogus"],
      "not an op",
    );
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "" }])]);
    model.patch(["text", "a1", 5, "x"], ["args", "a1", "unknown", [["set", ["a"], 1]]], ["part", "a1", 9, { kind: "text", text: "gap" }]);
    expect(store.get("a1")!.parts).toEqual([{ kind: "text", text: "" }]);
    expect(events.map((e) => e.kind)).toEqual(["message"]);
  });

  it("treats a duplicate start as a replacement and a repeated part index as a replacement", () => {
    const { model, store } = setup();
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "one" }])]);
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "two" }])]);
    expect(store.messages()).toHaveLength(1);
    expect(store.get("a1")!.parts).toEqual([{ kind: "text", text: "two" }]);
    model.patch(["part", "a1", 0, { kind: "text", text: "three" }]);
    expect(store.get("a1")!.parts).toEqual([{ kind: "text", text: "three" }]);
  });

  it("keeps argument patches that do not apply from breaking the store", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { model, store, events } = setup();
    model.patch(["start", assistant("a1", 1, [call("c1", "t")])]);
    model.patch(["args", "a1", "c1", [["append", ["missing"], "x"]]]);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
    expect(events.at(-1)).toMatchObject({ kind: "args", patches: null });
    expect((store.get("a1")!.parts[0] as ToolCallPart).parsed_arguments).toEqual({});
  });

  it("reports kernel errors", () => {
    const { model, events } = setup();
    model.custom({ type: "error", message: "Approval refused" });
    expect(events).toEqual([{ kind: "error", message: "Approval refused" }]);
  });

  it("clear drops everything, the model's history included", () => {
    const { model, store, events } = setup();
    model.finish(user("u1", 0, "hi"));
    model.patch(["start", assistant("a1", 1)]);
    expect(store.size).toBe(2);
    model.patch(["clear"]);
    expect(store.size).toBe(0);
    expect(model.attrs._history).toEqual([]);
    expect(events.at(-1)).toEqual({ kind: "reset" });
    model.finish(user("u2", 0, "again"));
    expect(store.messages().map((m) => m.id)).toEqual(["u2"]);
    expect(model.sent).toEqual([]); // nothing missed: no sync
  });
});

describe("store: finished messages", () => {
  it("starts from the model's history, then keeps it current in place, one finish op at a time", () => {
    const model = new FakeModel();
    for (let i = 0; i < 50; i++) model.finish(user(`u${i}`, i, `m${i}`), { notify: false });
    const history = model.attrs._history;
    const { store, events } = setup(model);
    expect(store.messages().map((m) => m.index)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    events.length = 0;
    for (let i = 50; i < 60; i++) model.finish(user(`u${i}`, i, `m${i}`));
    expect(events).toEqual(Array.from({ length: 10 }, (_, i) => ({ kind: "message", id: `u${50 + i}` })));
    expect(store.size).toBe(60);
    // The same array, grown in place: what a host saves of the model has the whole conversation, and no trait
    // was set (nothing goes back to the kernel).
    expect(model.attrs._history).toBe(history);
    expect(history.map((m) => (m as { id: string }).id)).toEqual(Array.from({ length: 60 }, (_, i) => `u${i}`));
    expect(model.sent).toEqual([]);
  });

  it("a second store on the same model (marimo: one per view) does not append twice", () => {
    const model = new FakeModel();
    const a = setup(model).store;
    const b = setup(model).store;
    model.finish(user("u0", 0, "hi"));
    expect(model.attrs._history).toHaveLength(1);
    expect(a.size).toBe(1);
    expect(b.size).toBe(1);
  });

  it("shares one store per model", () => {
    const model = new FakeModel();
    expect(storeFor(model.asModel())).toBe(storeFor(model.asModel()));
    expect(storeFor(new FakeModel().asModel())).not.toBe(storeFor(model.asModel()));
  });

  it("the finished copy replaces the live one; late ops are ignored", () => {
    const { model, store } = setup();
    model.finish(user("u0", 0, "hi"));
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "live" }])]);
    expect(store.isLive("a1")).toBe(true);
    model.patch(["msg", "a1", { status: "completed" }], ["finish", 1, assistant("a1", 1, [{ kind: "text", text: "final" }], { status: "completed" })]);
    expect(store.isLive("a1")).toBe(false);
    model.patch(["text", "a1", 0, " late"], ["start", assistant("a1", 1)]);
    expect(store.get("a1")!.parts[0]).toEqual({ kind: "text", text: "final" });
    expect(store.get("a1")!.status).toBe("completed");
    expect(store.messages()).toHaveLength(2);
  });

  it("never mutates a finished message's data", () => {
    const { model, store } = setup();
    const msg = assistant("a1", 1, [{ kind: "text", text: "final" }], { status: "completed" });
    const frozen = JSON.stringify(msg);
    model.finish(msg);
    model.patch(["text", "a1", 0, "x"], ["msg", "a1", { status: "error" }]);
    expect(JSON.stringify(store.get("a1"))).toBe(frozen);
  });

  it("asks for what it missed, once, and takes it from the snapshot", () => {
    const model = new FakeModel();
    model.finish(user("u0", 0, "a"), { notify: false });
    const { store } = setup(model);
    model.finishedCount = 3; // two finish ops went by while no view listened
    model.finish(user("u3", 3, "d"));
    model.finish(user("u4", 4, "e"));
    expect(model.sent).toEqual([{ type: "sync", have: 1, last: "u0" }]);
    expect(store.size).toBe(1);
    const rest = [user("u1", 1, "b"), user("u2", 2, "c"), user("u3", 3, "d"), user("u4", 4, "e")];
    model.custom({ type: "snapshot", from: 1, finished: rest, live: [] });
    expect(store.messages().map((m) => m.id)).toEqual(["u0", "u1", "u2", "u3", "u4"]);
    expect(model.attrs._history).toHaveLength(5);
    model.finish(user("u5", 5, "f"));
    expect(store.size).toBe(6);
    expect(model.sent).toHaveLength(1);
  });

  it("a snapshot from 0 replaces a history that is not the kernel's (a clear it missed)", () => {
    const model = new FakeModel();
    model.finish(user("old0", 0, "a"), { notify: false });
    model.finish(user("old1", 1, "b"), { notify: false });
    const { store } = setup(model);
    model.custom({ type: "snapshot", from: 0, finished: [user("new0", 0, "c")], live: [] });
    expect(store.messages().map((m) => m.id)).toEqual(["new0"]);
    expect(model.attrs._history.map((m) => (m as { id: string }).id)).toEqual(["new0"]);
  });

  it("a new history value (the host replaced the state) is reconciled", () => {
    const model = new FakeModel();
    model.finish(user("u0", 0, "a"), { notify: false });
    const { store } = setup(model);
    model.set("_history", [user("u0", 0, "a"), user("u1", 1, "b")]);
    expect(store.messages().map((m) => m.id)).toEqual(["u0", "u1"]);
    model.set("_history", []);
    expect(store.size).toBe(0);
  });

  it("keeps the live messages, as they stand, in the model's live array (for saved state)", () => {
    const { model, store } = setup();
    const saved = model.attrs._live;
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "Hel" }])], ["text", "a1", 0, "lo"]);
    expect(saved).toEqual([store.get("a1")]);
    expect((saved[0] as { parts: { text: string }[] }).parts[0].text).toBe("Hello");
    model.finish(assistant("a1", 1, [{ kind: "text", text: "Hello" }], { status: "completed" }));
    expect(saved).toEqual([]);
    expect(model.attrs._live).toBe(saved); // in place: nothing is set, nothing goes back to the kernel
    expect(model.sent).toEqual([]);
  });

  it("shows the live messages of a saved state until the kernel's snapshot replaces them", () => {
    const model = new FakeModel();
    model.finish(user("u0", 0, "delete it"), { notify: false });
    const waiting = assistant("a1", 1, [call("c1", "rm", { state: "awaiting_approval" })]);
    model.attrs._live.push(waiting, user("u0", 0, "stale: finished since"));
    const { store } = setup(model);
    expect(store.messages().map((m) => m.id)).toEqual(["u0", "a1"]);
    expect(store.isLive("a1")).toBe(true);
    expect(store.get("a1")).not.toBe(waiting); // a copy: ops never touch the saved object twice
    expect(model.attrs._live).toEqual([waiting]);
    model.custom({ type: "snapshot", from: 1, finished: [], live: [] });
    expect(store.messages().map((m) => m.id)).toEqual(["u0"]);
    expect(model.attrs._live).toEqual([]);
  });

  it("snapshot replaces the live state", () => {
    const { model, store } = setup();
    model.patch(["start", assistant("a1", 1)], ["start", assistant("a2", 3)]);
    model.custom({ type: "snapshot", from: 0, finished: [], live: [assistant("a3", 5, [{ kind: "text", text: "now" }])] });
    expect(store.messages().map((m) => m.id)).toEqual(["a3"]);
    model.patch(["text", "a3", 0, "!"]);
    expect(store.get("a3")!.parts[0]).toEqual({ kind: "text", text: "now!" });
  });

  it("detaches from the model when the last view goes", () => {
    const { model, store } = setup();
    store.attach();
    store.detach();
    expect(model.listenerCount()).toBe(2);
    store.detach();
    expect(model.listenerCount()).toBe(0);
  });
});
