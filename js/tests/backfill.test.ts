// Opening a long conversation: the store asks for the finished messages the state left out, a chunk at a time,
// and puts them at the start of `history` in place; the view builds the newest messages at once and the earlier
// ones later, newest first.

import { describe, expect, it } from "vitest";
import { BUILD_WHOLE, FIRST_SCREEN, builtAtOnce } from "../src/render/backfill";
import { ChatStore } from "../src/store";
import type { Message } from "../src/types";
import { $, FakeModel, assistant, mount, settle, user } from "./helpers";

const msg = (i: number): Message =>
  i % 2 ? assistant(`m${i}`, i, [{ kind: "text", text: `reply ${i}` }], { status: "completed" }) : user(`m${i}`, i, `q${i}`);

/** A model as a live kernel opens it: the newest `shown` of `count` finished messages in the state. */
function kernelModel(count: number, shown: number): { model: FakeModel; all: Message[] } {
  const all = Array.from({ length: count }, (_, i) => msg(i));
  const model = new FakeModel({
    _history: all.slice(count - shown),
    _older: count > shown ? { count: count - shown, before: all[count - shown].id } : {},
  });
  model.finishedCount = count;
  return { model, all };
}

const olderRequests = (model: FakeModel) => model.sent.filter((m) => (m as { type?: string }).type === "older") as { at: number; before: string }[];
const answer = (model: FakeModel, all: Message[], at: number, size: number) =>
  model.custom({ type: "older", from: Math.max(0, at - size), before: all[at].id, finished: all.slice(Math.max(0, at - size), at) });
const ids = (list: unknown[]) => list.map((m) => (m as Message).id);

describe("backfill: how much is built at once", () => {
  it("builds a short conversation whole and the newest screenful of a long one", () => {
    expect(builtAtOnce(BUILD_WHOLE)).toBe(BUILD_WHOLE);
    expect(builtAtOnce(BUILD_WHOLE + 1)).toBe(FIRST_SCREEN);
    expect(builtAtOnce(5000)).toBe(FIRST_SCREEN);
  });
});

describe("store: the messages the state left out", () => {
  it("asks for them once connected, a chunk at a time, newest first, and puts them in `history` in place", async () => {
    const { model, all } = kernelModel(10, 3);
    const store = new ChatStore(model.asModel());
    store.attach();
    expect(store.missing).toBe(7);
    expect(store.syncMessage()).toEqual({ type: "sync", have: 10, last: "m9" });
    expect(olderRequests(model)).toEqual([]); // not before the kernel answers
    model.custom({ type: "snapshot", from: 10, finished: [], live: [] });
    expect(olderRequests(model)).toEqual([{ type: "older", at: 7, before: "m7" }]);
    answer(model, all, 7, 4);
    expect(store.missing).toBe(3);
    expect(ids(model.attrs._history)).toEqual(["m3", "m4", "m5", "m6", "m7", "m8", "m9"]);
    await settle();
    expect(olderRequests(model).at(-1)).toEqual({ type: "older", at: 3, before: "m3" });
    answer(model, all, 3, 4);
    await settle();
    expect(store.missing).toBe(0);
    expect(olderRequests(model)).toHaveLength(2);
    expect(ids(model.attrs._history)).toEqual(all.map((m) => m.id));
    expect(store.messages().map((m) => m.id)).toEqual(all.map((m) => m.id));
    expect(store.syncMessage()).toEqual({ type: "sync", have: 10, last: "m9" });
  });

  it("counts positions from the conversation's first message: a finish op lands after the ones it holds", () => {
    const { model, all } = kernelModel(10, 3);
    const store = new ChatStore(model.asModel());
    store.attach();
    model.custom({ type: "snapshot", from: 10, finished: [], live: [] });
    model.patch(["finish", 10, msg(10)]);
    expect(ids(model.attrs._history)).toEqual(["m7", "m8", "m9", "m10"]);
    answer(model, all, 7, 7);
    expect(ids(model.attrs._history)).toEqual([...all.map((m) => m.id), "m10"]);
    expect(model.sent.filter((m) => (m as { type?: string }).type === "sync")).toHaveLength(0); // no gap seen
  });

  it("ignores an answer that does not end where its copy starts (another front end's)", () => {
    const { model, all } = kernelModel(10, 3);
    const store = new ChatStore(model.asModel());
    store.attach();
    model.custom({ type: "older", from: 0, before: "m5", finished: all.slice(0, 5) });
    expect(store.missing).toBe(7);
    expect(ids(model.attrs._history)).toEqual(["m7", "m8", "m9"]);
  });

  it("misses nothing from a saved copy that holds the earlier messages before the one `older` names", () => {
    const all = Array.from({ length: 10 }, (_, i) => msg(i));
    const model = new FakeModel({ _history: [...all], _older: { count: 7, before: "m7" } });
    const store = new ChatStore(model.asModel());
    store.attach();
    expect(store.missing).toBe(0);
    model.custom({ type: "snapshot", from: 10, finished: [], live: [] });
    expect(olderRequests(model)).toEqual([]);
    expect(store.syncMessage()).toEqual({ type: "sync", have: 10, last: "m9" });
  });

  it("starts again from a fresh snapshot: drops its copy and asks for what comes before", () => {
    const { model, all } = kernelModel(10, 3);
    const store = new ChatStore(model.asModel());
    store.attach();
    model.custom({ type: "snapshot", from: 8, fresh: true, finished: all.slice(8), live: [] });
    expect(ids(model.attrs._history)).toEqual(["m8", "m9"]);
    expect(store.missing).toBe(8);
    expect(olderRequests(model).at(-1)).toEqual({ type: "older", at: 8, before: "m8" });
  });

  it("a clear forgets the missing ones", () => {
    const { model } = kernelModel(10, 3);
    const store = new ChatStore(model.asModel());
    store.attach();
    model.patch(["clear"]);
    expect(store.missing).toBe(0);
    expect(store.syncMessage()).toEqual({ type: "sync", have: 0 });
  });
});

describe("view: a long conversation", () => {
  it("builds the newest messages at once, the earlier ones later, newest first, in order", async () => {
    const model = new FakeModel();
    for (let i = 0; i < 300; i++) model.finish(msg(i), { notify: false });
    const { root } = await mount(model);
    const list = $(root, ".aiw-messages");
    const order = () => [...list.querySelectorAll<HTMLElement>(".aiw-message")].map((e) => e.dataset.id);
    expect(order()).toEqual(Array.from({ length: 300 }, (_, i) => `m${i}`)); // every place held, in order
    const built = () => [...list.querySelectorAll<HTMLElement>(".aiw-message:not(.aiw-unbuilt)")].map((e) => e.dataset.id);
    expect(built()).toEqual(Array.from({ length: FIRST_SCREEN }, (_, i) => `m${300 - FIRST_SCREEN + i}`));
    expect(list.querySelector(".aiw-older-note")?.textContent).toContain("Loading");
    for (let i = 0; i < 200 && built().length < 300; i++) await new Promise((r) => setTimeout(r, 20));
    expect(built()).toHaveLength(300);
    expect(order()).toEqual(Array.from({ length: 300 }, (_, i) => `m${i}`));
    expect(list.querySelector(".aiw-older-note")).toBeNull();
    expect(list.textContent).toContain("q0");
  });

  it("puts the chunks the store gets above the messages shown, and says so in a saved copy without them", async () => {
    const { model, all } = kernelModel(200, 40);
    const { root } = await mount(model);
    const list = $(root, ".aiw-messages");
    expect(list.querySelectorAll(".aiw-message")).toHaveLength(40);
    expect(list.querySelector(".aiw-older-note")?.textContent).toMatch(/160 earlier messages are not in this saved copy/);
    model.custom({ type: "snapshot", from: 200, finished: [], live: [] });
    answer(model, all, 160, 100);
    expect(list.querySelector(".aiw-older-note")?.textContent).toMatch(/Loading/);
    const order = () => [...list.querySelectorAll<HTMLElement>(".aiw-message")].map((e) => e.dataset.id);
    expect(order()).toEqual(Array.from({ length: 140 }, (_, i) => `m${60 + i}`));
    answer(model, all, 60, 100);
    expect(order()).toEqual(all.map((m) => m.id));
    for (let i = 0; i < 200 && list.querySelector(".aiw-unbuilt, .aiw-older-note"); i++) await new Promise((r) => setTimeout(r, 20));
    expect(list.querySelector(".aiw-unbuilt, .aiw-older-note")).toBeNull();
  });

  it("puts a message finished while earlier ones wait at the end, built", async () => {
    const model = new FakeModel();
    for (let i = 0; i < 100; i++) model.finish(msg(i), { notify: false });
    const { view, root } = await mount(model);
    const list = $(root, ".aiw-messages");
    expect(list.querySelector('[data-id="m3"]')?.classList.contains("aiw-unbuilt")).toBe(true);
    model.patch(["finish", 100, msg(100)]);
    view.flush();
    const order = [...list.querySelectorAll<HTMLElement>(".aiw-message")].map((e) => e.dataset.id);
    expect(order.at(-1)).toBe("m100");
    expect(order).toHaveLength(101);
    expect(list.querySelector('[data-id="m100"]')?.classList.contains("aiw-unbuilt")).toBe(false);
  });
});
