import { describe, expect, it, vi } from "vitest";
import { ChatStore, type StoreEvent, storeFor } from "../src/store";
import type { ToolCallPart } from "../src/types";
import { FakeModel, assistant, call, settle, user } from "./helpers";

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
      ["end", "nope"],
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

  it("clear drops everything; the walk never goes back into the cleared conversation", async () => {
    const { model, store, events } = setup();
    model.finish(user("u1", 0, "hi"));
    await settle();
    model.patch(["start", assistant("a1", 1)]);
    expect(store.size).toBe(2);
    model.patch(["clear"]);
    expect(store.size).toBe(0);
    expect(events.at(-1)).toEqual({ kind: "reset" });
    // The kernel links the next message to the old head: still only the new message shows.
    model.finish(user("u2", 0, "again"));
    await settle();
    expect(store.messages().map((m) => m.id)).toEqual(["u2"]);
  });
});

describe("store: finished messages", () => {
  it("walks the linked list once, then costs one get_model per new finished message", async () => {
    const model = new FakeModel();
    for (let i = 0; i < 50; i++) model.finish(user(`u${i}`, i, `m${i}`), { notify: false });
    const { store } = setup(model);
    await store.ready;
    expect(store.messages().map((m) => m.index)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(model.getModelCalls).toBe(50);
    for (let i = 50; i < 60; i++) {
      model.finish(user(`u${i}`, i, `m${i}`));
      await settle();
      expect(model.getModelCalls).toBe(i + 1); // O(1) per finish
    }
    expect(store.size).toBe(60);
  });

  it("shares one store per model", () => {
    const model = new FakeModel();
    expect(storeFor(model.asModel())).toBe(storeFor(model.asModel()));
    expect(storeFor(new FakeModel().asModel())).not.toBe(storeFor(model.asModel()));
  });

  it("end before the model: the live copy shows until the model arrives", async () => {
    const { model, store } = setup();
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "live" }])]);
    model.patch(["msg", "a1", { status: "completed" }], ["end", "a1"]);
    expect(store.get("a1")!.parts[0]).toEqual({ kind: "text", text: "live" });
    expect(store.isLive("a1")).toBe(true);
    model.finish(assistant("a1", 1, [{ kind: "text", text: "final" }], { status: "completed" }));
    await settle();
    expect(store.isLive("a1")).toBe(false);
    expect(store.get("a1")!.parts[0]).toEqual({ kind: "text", text: "final" });
    expect(store.messages()).toHaveLength(1);
  });

  it("model before end: the finished copy wins, late ops and end are ignored", async () => {
    const { model, store } = setup();
    model.patch(["start", assistant("a1", 1, [{ kind: "text", text: "live" }])]);
    model.finish(assistant("a1", 1, [{ kind: "text", text: "final" }], { status: "completed" }));
    await settle();
    model.patch(["text", "a1", 0, " late"], ["end", "a1"], ["start", assistant("a1", 1)]);
    expect(store.get("a1")!.parts[0]).toEqual({ kind: "text", text: "final" });
    expect(store.get("a1")!.status).toBe("completed");
    expect(store.messages()).toHaveLength(1);
  });

  it("never mutates a finished message's data", async () => {
    const { model, store } = setup();
    const msg = assistant("a1", 1, [{ kind: "text", text: "final" }], { status: "completed" });
    const frozen = JSON.stringify(msg);
    model.finish(msg);
    await settle();
    model.patch(["text", "a1", 0, "x"], ["msg", "a1", { status: "error" }]);
    expect(JSON.stringify(store.get("a1"))).toBe(frozen);
  });

  it("snapshot replaces the live state but keeps ended copies waiting for their model", () => {
    const { model, store } = setup();
    model.patch(["start", assistant("a1", 1)], ["end", "a1"], ["start", assistant("a2", 3)]);
    model.custom({ type: "snapshot", live: [assistant("a3", 5, [{ kind: "text", text: "now" }])] });
    expect(store.messages().map((m) => m.id)).toEqual(["a1", "a3"]);
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
