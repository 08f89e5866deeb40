// Files pasted or dropped into the input box: a chip each (read in the background, Send waiting meanwhile), sent
// base64 in the send's `files` like `@name` chips; a file over the limits gets a chip that says why and holds the
// send until it is removed; a view without an input box takes none.

import { describe, expect, it } from "vitest";
import { MAX_PASTED_BYTES, MAX_PASTED_FILES } from "../src/render/attachments";
import { $, FakeModel, mount, settle } from "./helpers";

const PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));

function paste(target: HTMLElement, files: File[], kind: "paste" | "drop" = "paste"): Event {
  const ev = new Event(kind, { bubbles: true, cancelable: true });
  const data = { files, types: files.length ? ["Files"] : ["text/plain"], dropEffect: "none" };
  Object.defineProperty(ev, kind === "paste" ? "clipboardData" : "dataTransfer", { value: data });
  target.dispatchEvent(ev);
  return ev;
}

async function connected() {
  const model = new FakeModel();
  const { view, root } = await mount(model);
  model.custom({ type: "snapshot", live: [] }); // a kernel answered
  view.flush();
  const input = $<HTMLTextAreaElement>(root, ".aiw-input");
  input.value = "what is in these?";
  input.dispatchEvent(new Event("input", { bubbles: true }));
  return { model, view, root, input, send: $<HTMLButtonElement>(root, ".aiw-send") };
}

const sends = (model: FakeModel) => model.sent.filter((m) => (m as { type: string }).type === "send") as Record<string, unknown>[];

async function read(): Promise<void> {
  for (let i = 0; i < 5; i++) await settle(); // FileReader answers in a later task
}

describe("pasted and dropped files", () => {
  it("attach a pasted image and a dropped text file as chips, sent base64 with the message", async () => {
    const { model, root, input, send } = await connected();
    const ev = paste(input, [new File([PNG], "image.png", { type: "image/png" })]);
    expect(ev.defaultPrevented).toBe(true); // not pasted as text
    const chip = $(root, ".aiw-chip-pasted");
    expect(chip.querySelector(".aiw-chip-kind")!.textContent).toBe("…");
    expect(send.disabled).toBe(true); // still being read
    await read();
    expect(send.disabled).toBe(false);
    expect(chip.querySelector(".aiw-chip-name")!.textContent).toBe("image.png");
    expect(chip.querySelector(".aiw-chip-kind")!.textContent).toBe("image");
    expect(chip.querySelector<HTMLImageElement>("img.aiw-chip-thumb")!.src.startsWith("data:image/png;base64,")).toBe(true);
    const dropped = paste($(root, ".aiw-messages"), [new File(["a,b\n1,2\n"], "data.csv", { type: "text/csv" })], "drop");
    expect(dropped.defaultPrevented).toBe(true);
    paste(input, [new File([PNG], "image.png", { type: "image/png" })]); // the same name again
    await read();
    expect([...root.querySelectorAll(".aiw-chip-pasted .aiw-chip-name")].map((n) => n.textContent)).toEqual(["image.png", "data.csv", "image (2).png"]);
    send.click();
    const [sent] = sends(model);
    expect(sent.text).toBe("what is in these?");
    expect(sent.attach).toEqual([]);
    const files = sent.files as { name: string; media_type: string; data: string }[];
    expect(files.map((f) => [f.name, f.media_type])).toEqual([["image.png", "image/png"], ["data.csv", "text/csv"], ["image (2).png", "image/png"]]);
    expect(Uint8Array.from(atob(files[0].data), (c) => c.charCodeAt(0))).toEqual(PNG);
    expect(atob(files[1].data)).toBe("a,b\n1,2\n");
    // The chips stay until the kernel takes the message.
    expect(root.querySelectorAll(".aiw-chip-pasted").length).toBe(3);
    model.custom({ type: "sent", id: sent.id });
    expect(root.querySelectorAll(".aiw-chip-pasted").length).toBe(0);
    expect(input.value).toBe("");
  });

  it("leave pasted text as text", async () => {
    const { root, input } = await connected();
    expect(paste(input, []).defaultPrevented).toBe(false);
    expect(root.querySelector(".aiw-chip-pasted")).toBeNull();
  });

  it("refuse a file over the limit with a chip that says why, and send once it is removed", async () => {
    const { model, root, input, send } = await connected();
    const big = new File([new Uint8Array(MAX_PASTED_BYTES + 1)], "huge.bin", { type: "" });
    paste(input, [big, new File(["hi"], "note.txt", { type: "text/plain" })]);
    await read();
    const chip = $(root, ".aiw-chip-pasted.aiw-chip-error");
    expect(chip.title).toBe("huge.bin is 5.0 MB: a file may be at most 5.0 MB.");
    expect(chip.querySelector(".aiw-chip-kind")!.textContent).toBe("cannot attach");
    expect(send.disabled).toBe(true);
    expect(send.title).toContain("Remove it to send.");
    send.click();
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    expect(sends(model)).toEqual([]);
    $<HTMLButtonElement>(chip, ".aiw-chip-remove").click();
    expect(send.disabled).toBe(false);
    send.click();
    const files = sends(model)[0].files as { name: string; media_type: string }[];
    expect(files.map((f) => [f.name, f.media_type])).toEqual([["note.txt", "text/plain"]]);
  });

  it("take at most the number of files a message carries", async () => {
    const { root, input } = await connected();
    paste(input, Array.from({ length: MAX_PASTED_FILES + 1 }, (_, i) => new File(["x"], `f${i}.txt`, { type: "text/plain" })));
    await read();
    const refused = [...root.querySelectorAll<HTMLElement>(".aiw-chip-pasted.aiw-chip-error")];
    expect(refused.map((c) => c.title)).toEqual([`Too many files: a message takes at most ${MAX_PASTED_FILES}.`]);
  });

  it("are not taken by a view without a kernel", async () => {
    const model = new FakeModel();
    const { root } = await mount(model); // no kernel answered: a saved notebook
    const ev = paste($(root, ".aiw-messages"), [new File(["x"], "a.txt", { type: "text/plain" })], "drop");
    expect(ev.defaultPrevented).toBe(false);
    expect(root.querySelector(".aiw-chip-pasted")).toBeNull();
  });
});
