import { afterEach, describe, expect, it, vi } from "vitest";
import widget from "../src/index";
import { JsonView } from "../src/render/json";
import { $, FakeModel, assistant, call, mount, settle, user } from "./helpers";

describe("JSON view growth", () => {
  it("appends to the same text node; new keys add rows; the card is not re-rendered", async () => {
    const model = new FakeModel({ collapse_tool_calls: false });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [call("c1", "write")])]);
    view.flush();
    const card = $(root, '[data-call-id="c1"]');
    const args = $(card, ".aiw-tool-args .aiw-json");
    model.patch(["args", "a1", "c1", [["set", ["path"], "/tmp/"]]]);
    view.flush();
    const str = $(args, ".aiw-json-str");
    const textNode = str.firstChild as Text;
    expect(textNode.data).toBe("/tmp/");
    for (const piece of ["a", "b", "c.txt"]) {
      model.patch(["args", "a1", "c1", [["append", ["path"], piece]]]);
      view.flush();
    }
    expect($(card, ".aiw-json-str")).toBe(str);
    expect(str.firstChild).toBe(textNode);
    expect(textNode.data).toBe("/tmp/abc.txt");
    model.patch(["args", "a1", "c1", [["set", ["opts"], {}], ["set", ["opts", "mode"], "w"], ["set", ["lines"], []], ["set", ["lines", 0], 1]]]);
    view.flush();
    expect($(root, '[data-call-id="c1"]')).toBe(card);
    expect(str.isConnected).toBe(true);
    expect([...args.querySelectorAll(".aiw-json-key")].map((k) => k.textContent)).toEqual(["path", "opts", "mode", "lines", "0"]);
  });

  it("batches many appends in one frame into one write and clips long strings with a toggle", () => {
    const json = new JsonView({});
    document.body.append(json.el);
    json.apply([["set", ["content"], ""]]);
    const text = json.el.querySelector(".aiw-json-str")!.firstChild as Text;
    const spy = vi.spyOn(text, "appendData");
    json.apply(Array.from({ length: 100 }, () => ["append", ["content"], "0123456789"] as ["append", string[], string]));
    expect(spy).toHaveBeenCalledTimes(1);
    expect(text.data).toHaveLength(1000);
    const str = json.el.querySelector(".aiw-json-str")!;
    expect(str.classList.contains("aiw-json-clip")).toBe(true);
    const more = json.el.querySelector<HTMLButtonElement>(".aiw-json-more")!;
    expect(more.getAttribute("aria-expanded")).toBe("false");
    more.click();
    expect(str.classList.contains("aiw-open")).toBe(true);
    expect(more.getAttribute("aria-expanded")).toBe("true");
  });

  it("re-renders from the value when patches do not fit", () => {
    const json = new JsonView({ a: 1 });
    expect(json.apply([["append", ["nope"], "x"]])).toBe(false);
    json.render({ b: "two" });
    expect(json.el.textContent).toContain("two");
  });
});

describe("patching only what changed", () => {
  it("streaming into a 500-message conversation leaves earlier messages' DOM untouched", async () => {
    const model = new FakeModel({ collapse_tool_calls: false });
    for (let i = 0; i < 500; i++) {
      model.finish(i % 2 ? assistant(`m${i}`, i, [{ kind: "text", text: `reply **${i}**` }], { status: "completed" }) : user(`m${i}`, i, `q${i}`), { notify: false });
    }
    const { view, root } = await mount(model);
    expect(root.querySelectorAll(".aiw-message")).toHaveLength(500);
    model.patch(["start", assistant("live", 500, [{ kind: "text", text: "" }, call("c1", "t")])]);
    view.flush();
    const list = $(root, ".aiw-messages");
    const earlier = [...list.querySelectorAll(".aiw-message")].slice(0, 500);
    const observer = new MutationObserver(() => {});
    for (const m of earlier) observer.observe(m, { subtree: true, childList: true, attributes: true, characterData: true });
    const listObserver = new MutationObserver(() => {});
    listObserver.observe(list, { childList: true });
    const liveEl = $(root, '.aiw-message[data-id="live"]');
    const liveObserver = new MutationObserver(() => {});
    liveObserver.observe(liveEl, { subtree: true, childList: true, characterData: true, attributes: true });

    for (let frame = 0; frame < 30; frame++) {
      const ops: unknown[] = [];
      for (let d = 0; d < 66; d++) ops.push(["text", "live", 0, "word "]); // ~2,000 deltas/s at 30 frames/s
      ops.push(["args", "live", "c1", [frame === 0 ? ["set", ["body"], "x"] : ["append", ["body"], "y"]]]);
      model.patch(...ops);
      view.flush();
    }
    expect(observer.takeRecords()).toEqual([]);
    expect(listObserver.takeRecords()).toEqual([]); // no message element re-sorted or re-appended
    expect(liveObserver.takeRecords().length).toBeGreaterThan(0);
    expect($(liveEl, ".aiw-md").textContent!.trim().length).toBe(30 * 66 * 5 - 1);
    observer.disconnect();
    listObserver.disconnect();
    liveObserver.disconnect();
  });

  it("schedules one animation frame for many ops and renders each text part at most once per frame", async () => {
    const callbacks: FrameRequestCallback[] = [];
    vi.stubGlobal("requestAnimationFrame", (cb: FrameRequestCallback) => callbacks.push(cb));
    vi.stubGlobal("cancelAnimationFrame", () => {});
    vi.resetModules();
    const { ChatView } = await import("../src/view");
    const model = new FakeModel();
    const el = document.createElement("div");
    const view = new ChatView(model.asModel(), el);
    await settle();
    for (let i = 0; i < 5 && callbacks.length; i++) callbacks.splice(0).forEach((cb) => cb(0));
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "" }])]);
    expect(callbacks).toHaveLength(1);
    callbacks.splice(0).forEach((cb) => cb(0));
    const part = el.querySelector(".aiw-md")!;
    const observer = new MutationObserver(() => {});
    observer.observe(part, { childList: true });
    for (let i = 0; i < 200; i++) model.patch(["text", "a1", 0, "x"]);
    expect(callbacks).toHaveLength(1);
    callbacks.splice(0).forEach((cb) => cb(0));
    expect(part.textContent!.trim()).toBe("x".repeat(200));
    expect(observer.takeRecords().length).toBeLessThanOrEqual(2); // one re-render of that part for 200 deltas
    view.destroy();
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });
});

describe("finishing a message", () => {
  it.each(["with the last ops", "in a patch of its own"])("keeps one element per message (finish %s)", async (when) => {
    const model = new FakeModel({ collapse_tool_calls: false });
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "Hi" }, call("c1", "t", { parsed_arguments: { q: "x" }, state: "running" })])]);
    view.flush();
    const el = $(root, '.aiw-message[data-id="a1"]');
    const card = $(el, ".aiw-tool-card");
    const final = assistant("a1", 0, [{ kind: "text", text: "Hi" }, call("c1", "t", { parsed_arguments: { q: "x" }, state: "completed", outcome: { status: "success", value: 1 } })], { status: "completed" });
    const last = [["call", "a1", "c1", { state: "completed", outcome: { status: "success", value: 1 } }], ["msg", "a1", { status: "completed" }]];
    if (when === "with the last ops") {
      model.patch(...last, ["finish", 0, final]);
    } else {
      model.patch(...last);
      view.flush();
      model.finish(final);
    }
    view.flush();
    expect(root.querySelectorAll(".aiw-message")).toHaveLength(1);
    expect($(root, '.aiw-message[data-id="a1"]')).toBe(el);
    expect($(el, ".aiw-tool-card")).toBe(card);
    expect(el.dataset.status).toBe("completed");
    expect(card.dataset.state).toBe("completed");
  });

  it("removes everything on clear", async () => {
    const model = new FakeModel();
    model.finish(user("u1", 0, "hi"));
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 1)]);
    view.flush();
    model.patch(["clear"]);
    view.flush();
    expect(root.querySelectorAll(".aiw-message")).toHaveLength(0);
  });
});

describe("anywidget entry point", () => {
  it("sends sync once, marks the root rendered, and unsubscribes on cleanup", async () => {
    const model = new FakeModel();
    model.finish(user("u1", 0, "hi"), { notify: false });
    const el = document.createElement("div");
    const cleanup = widget.render({ model: model.asModel(), el });
    expect(model.sent).toEqual([{ type: "sync", have: 1, last: "u1" }]);
    await settle();
    await new Promise((r) => setTimeout(r, 50));
    const root = $(el, ".aiw");
    expect(root.dataset.rendered).toBe("true");
    expect(root.querySelectorAll(".aiw-message")).toHaveLength(1);
    expect(model.listenerCount()).toBeGreaterThan(0);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.querySelector(".aiw")).toBeNull();
  });

  it("two views of one model share the store and both update", async () => {
    const model = new FakeModel();
    const a = await mount(model);
    const b = await mount(model);
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "once" }])]);
    a.view.flush();
    b.view.flush();
    expect($(a.root, ".aiw-md").textContent!.trim()).toBe("once");
    expect($(b.root, ".aiw-md").textContent!.trim()).toBe("once");
    a.view.destroy();
    model.patch(["text", "a1", 0, " more"]);
    b.view.flush();
    expect($(b.root, ".aiw-md").textContent!.trim()).toBe("once more");
  });
});
