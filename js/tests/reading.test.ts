// Reading a conversation: the list follows new content until the person scrolls up, text cut short renders as
// markdown, copy buttons for a reply and a code block, titles for provider-run built-in tools.

import { afterEach, describe, expect, it, vi } from "vitest";
import { builtinToolInfo } from "../src/render/builtin";
import { copyText } from "../src/render/copy";
import { Follower } from "../src/render/follow";
import { closeMarkdown } from "../src/render/mdclose";
import { $, FakeModel, assistant, call, mount } from "./helpers";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("markdown cut short", () => {
  it.each([
    ["*What's the weath", "*What's the weath*"],
    ["**bold** and *it", "**bold** and *it*"],
    ["*a **b", "*a **b***"],
    ["~~gone", "~~gone~~"],
    ["`code sp", "`code sp`"],
    ["Hello **", "Hello "],
    ["see [the docs](https://exa", "see the docs"],
    ["![chart](data:image/png;base64,iVBO", ""],
    ["done.\n\n- item *one", "done.\n\n- item *one*"],
  ])("closes %j", (text, closed) => {
    expect(closeMarkdown(text)).toBe(closed);
  });

  it.each(["2 * 3 = 6", "snake_case_name", "* a list item", "x \\*escaped", "```py\nx = *a", "**Note:** ok"])(
    "leaves %j alone",
    (text) => {
      expect(closeMarkdown(text)).toBe(text);
    },
  );

  it("renders a stopped reply's half-streamed emphasis as markdown; a finished reply exactly as written", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "" }])]);
    view.flush();
    model.patch(["text", "a1", 0, "Sure. *What's the"], ["text", "a1", 0, " weath"]);
    view.flush();
    const text = $(root, '.aiw-message[data-id="a1"] .aiw-text');
    expect(text.querySelector("em")?.textContent).toBe("What's the weath"); // while it streams
    model.patch(["msg", "a1", { status: "cancelled" }]);
    view.flush();
    expect(text.querySelector("em")?.textContent).toBe("What's the weath");
    expect(text.textContent?.trim()).toBe("Sure. What's the weath");

    model.patch(["start", assistant("a2", 1, [{ kind: "text", text: "" }])]);
    view.flush();
    model.patch(["text", "a2", 0, "Use 2 * 3 or *a"], ["msg", "a2", { status: "completed", finish_reason: "stop" }]);
    view.flush();
    const done = $(root, '.aiw-message[data-id="a2"] .aiw-text');
    expect(done.querySelector("em")).toBeNull();
    expect(done.textContent?.trim()).toBe("Use 2 * 3 or *a");
  });

  it("shows a stopped reply opened later (a re-opened notebook) the same way", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "It is **sunn" }], { status: "cancelled" })]);
    view.flush();
    expect($(root, ".aiw-text strong").textContent).toBe("sunn");
  });
});

describe("copy buttons", () => {
  it("copy a finished reply's markdown and a code block's code; neither is part of the text", async () => {
    const writeText = vi.fn(async () => {});
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    const model = new FakeModel();
    const { view, root } = await mount(model);
    const reply = "Here:\n\n```python\nprint('hi')\n```\n\nDone *now*.";
    model.patch(["start", assistant("a1", 0, [{ kind: "text", text: "" }])]);
    view.flush();
    model.patch(["text", "a1", 0, reply]);
    view.flush();
    const message = $(root, '.aiw-message[data-id="a1"]');
    expect($(message, ".aiw-message-actions").hidden).toBe(true); // not while it streams
    model.patch(["msg", "a1", { status: "completed", finish_reason: "stop" }]);
    view.flush();
    expect($(message, ".aiw-message-actions").hidden).toBe(false);
    // The buttons add no text: the message reads as its text part.
    expect([...message.querySelectorAll(".aiw-copy")].map((b) => b.textContent)).toEqual(["", ""]);
    expect(message.textContent).toBe($(message, ".aiw-text").textContent);

    $<HTMLButtonElement>(message, ".aiw-copy-message").click();
    await vi.waitFor(() => expect(writeText).toHaveBeenLastCalledWith(reply));
    await vi.waitFor(() => expect($(message, ".aiw-copy-message").dataset.copied).toBe("true"));
    const code = $<HTMLButtonElement>(message, ".aiw-code-block .aiw-copy-code");
    expect(code.getAttribute("aria-label")).toBe("Copy code");
    code.click();
    await vi.waitFor(() => expect(writeText).toHaveBeenLastCalledWith("print('hi')\n"));
  });

  it("falls back to execCommand without the Clipboard API", async () => {
    vi.stubGlobal("navigator", {});
    const exec = vi.fn(() => true);
    document.execCommand = exec as unknown as typeof document.execCommand;
    expect(await copyText("abc")).toBe(true);
    expect(exec).toHaveBeenCalledWith("copy");
    expect(document.querySelector("textarea[readonly]")).toBeNull();
  });
});

describe("provider-run built-in tools", () => {
  it("get a title and an icon; a local call of the same name and a registered tool keep theirs", async () => {
    expect(builtinToolInfo("Web_Search")?.title).toBe("Web search");
    expect(builtinToolInfo("get_weather")).toBeUndefined();
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch([
      "start",
      assistant("a1", 0, [call("c1", "web_search", { provider_executed: true }), call("c2", "web_search"), call("c3", "file_search", { provider_executed: true })]),
    ]);
    view.flush();
    const titles = () => [...root.querySelectorAll(".aiw-tool-header")].map((h) => [$(h, ".aiw-tool-icon").textContent, $(h, ".aiw-tool-title").textContent]);
    expect(titles()).toEqual([
      ["🔍", "Web search"],
      ["🔧", "web_search"],
      ["🗂️", "File search"],
    ]);
    model.set("_tools", { file_search: { title: "My file search", icon: "📁" } });
    view.flush();
    expect(titles()[2]).toEqual(["📁", "My file search"]);
  });
});

describe("following the conversation", () => {
  /** A list with a fake layout: `content` px of content in a 100 px box. */
  function fakeList(): { list: HTMLElement; grow: (px: number) => void } {
    const list = document.createElement("div");
    let content = 50;
    let top = 0;
    const max = () => Math.max(0, content - 100);
    Object.defineProperty(list, "clientHeight", { get: () => 100 });
    Object.defineProperty(list, "scrollHeight", { get: () => Math.max(content, 100) });
    Object.defineProperty(list, "scrollTop", { get: () => top, set: (v: number) => (top = Math.min(Math.max(0, v), max())) });
    return { list, grow: (px) => (content += px) };
  }

  const scrollTo = (list: HTMLElement, top: number) => {
    list.scrollTop = top;
    list.dispatchEvent(new Event("scroll"));
  };

  it("follows from the first overflow, stops when the person scrolls up, and Jump to latest resumes", () => {
    const { list, grow } = fakeList();
    const f = new Follower(list);
    grow(500); // a long first reply while the list is at its top
    f.contentChanged();
    expect(list.scrollTop).toBe(450);
    expect(f.jumpButton.hidden).toBe(true);
    scrollTo(list, 300); // the person reads back
    expect(f.following).toBe(false);
    expect(f.jumpButton.hidden).toBe(false);
    grow(200);
    f.contentChanged();
    expect(list.scrollTop).toBe(300); // left where they are
    f.jumpButton.click();
    expect(list.scrollTop).toBe(650);
    expect(f.following).toBe(true);
    expect(f.jumpButton.hidden).toBe(true);
    grow(100);
    f.contentChanged();
    expect(list.scrollTop).toBe(750);
  });

  it("follows again when the person scrolls back to the end; a wheel turned up stops at once", () => {
    const { list, grow } = fakeList();
    const f = new Follower(list);
    grow(500);
    f.contentChanged();
    list.dispatchEvent(new WheelEvent("wheel", { deltaY: -40 }));
    expect(f.following).toBe(false);
    scrollTo(list, 100);
    scrollTo(list, 450);
    expect(f.following).toBe(true);
    expect(f.jumpButton.hidden).toBe(true);
  });

  it("sending a message scrolls to the end and follows", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    const list = $(root, ".aiw-messages");
    model.patch(); // the kernel is there
    expect($(root, ".aiw-list-box .aiw-jump").hidden).toBe(true);
    view.shell.follower.following = false;
    const input = $<HTMLTextAreaElement>(root, ".aiw-input");
    input.value = "hi";
    input.dispatchEvent(new Event("input"));
    $<HTMLButtonElement>(root, ".aiw-send").click();
    expect(view.shell.follower.following).toBe(true);
    expect(list.scrollTop).toBe(list.scrollHeight - list.clientHeight);
  });
});
