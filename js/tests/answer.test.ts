// Typed answers (output_type=): the pure logic of what the card shows, the "answer" op in the store, and the card
// filling in key by key as the kernel's parse patches arrive, then showing the validated object.

import { describe, expect, it } from "vitest";
import { answerDisplay, isTypedAnswer, normalizeAnswer } from "../src/answer";
import { LiveMessages, type StoreEvent } from "../src/live";
import { asPatchOp, normalizePart } from "../src/normalize";
import type { Message, TextPart, TypedAnswer } from "../src/types";
import { $, FakeModel, assistant, mount } from "./helpers";

function mark(extra: Partial<TypedAnswer> = {}): TypedAnswer {
  return { type_name: "City", state: "unchecked", parsed: {}, value: null, errors: null, refused: [], parse_error: null, ...extra };
}

function answerPart(text: string, extra: Partial<TypedAnswer> = {}): TextPart & { answer: TypedAnswer } {
  return { kind: "text", text, answer: mark(extra) };
}

describe("what a typed answer's card shows", () => {
  it("the parse while it streams, the validated object once valid, the text when it is not JSON", () => {
    const streaming = answerDisplay(answerPart('{"name": "Lis', { parsed: { name: "Lis" } }), true);
    expect(streaming).toMatchObject({ phase: "streaming", label: "answering…", value: { name: "Lis" }, errors: null });
    // Valid: the validated object (a default filled in), not the text's parse.
    const valid = answerPart('{"name": "Lisbon"}', { state: "valid", parsed: { name: "Lisbon" }, value: { name: "Lisbon", population: 0 } });
    expect(answerDisplay(valid, false)).toMatchObject({ phase: "valid", label: "✓ matches City", value: { name: "Lisbon", population: 0 } });
    const prose = answerPart("Sure: {", { parse_error: "invalid JSON at offset 0" });
    expect(answerDisplay(prose, true)).toMatchObject({ value: null, text: "Sure: {" });
    const refused = answerPart("{}", { state: "invalid", errors: "- name: Field required" });
    expect(answerDisplay(refused, false)).toMatchObject({ phase: "invalid", label: "✗ does not match City", errors: "- name: Field required" });
    expect(answerDisplay(answerPart("{"), false).phase).toBe("unchecked"); // its turn ended before the check
  });

  it("says what each earlier answer was told, and that this one is another try", () => {
    const shown = answerDisplay(answerPart("{", { refused: ["- a: x", "- b: y"] }), true);
    expect(shown.label).toBe("answering… (try 3)");
    expect(shown.refused).toEqual([
      { title: "Answer 1 did not match City", errors: "- a: x" },
      { title: "Answer 2 did not match City", errors: "- b: y" },
    ]);
  });

  it("checks the mark's shape and mends a malformed one", () => {
    expect(isTypedAnswer(mark())).toBe(true);
    expect(isTypedAnswer({ ...mark(), parsed: [] })).toBe(false);
    expect(normalizeAnswer({ type_name: 3, refused: ["ok", 4], parsed: "x" })).toEqual(mark({ type_name: "answer", refused: ["ok"] }));
    const part = normalizePart({ kind: "text", text: "{}", answer: { type_name: "City" } }) as TextPart;
    expect(part.answer).toEqual(mark());
  });
});

describe("the answer op", () => {
  it("has five elements, or it is not one", () => {
    expect(asPatchOp(["answer", "m", 0, "x", []])).not.toBeNull();
    expect(asPatchOp(["answer", "m", 0, "x"])).toBeNull();
    expect(asPatchOp(["answer", "m", "0", "x", []])).toBeNull();
    expect(asPatchOp(["answer", "m", 0, "x", {}])).toBeNull();
  });

  it("appends the text and applies the patches to the parse; a patch that does not fit asks for a redraw", () => {
    const events: StoreEvent[] = [];
    const live = new LiveMessages(() => false, (e) => events.push(e));
    live.apply(["start", assistant("a1", 1, [answerPart("")])]);
    live.apply(["answer", "a1", 0, '{"name": "Lis', [["set", ["name"], "Lis"]]]);
    live.apply(["answer", "a1", 0, "bon", [["append", ["name"], "bon"]]]);
    const part = live.get("a1")!.parts[0] as TextPart & { answer: TypedAnswer };
    expect(part.text).toBe('{"name": "Lisbon');
    expect(part.answer.parsed).toEqual({ name: "Lisbon" });
    expect(events.at(-1)).toEqual({ kind: "answer", id: "a1", index: 0, patches: [["append", ["name"], "bon"]] });
    live.apply(["answer", "a1", 0, "", [["append", ["nope"], "x"]]]);
    expect(events.at(-1)).toEqual({ kind: "answer", id: "a1", index: 0, patches: null });
    live.apply(["text", "a1", 0, "ignored?"]); // a plain text op still appends (the kernel sends answer ops here)
    expect(part.text.endsWith("ignored?")).toBe(true);
  });
});

describe("the typed answer's card", () => {
  it("fills in key by key as the answer streams, without redrawing, then shows the validated object", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [answerPart("")])]);
    view.flush();
    const card = $(root, ".aiw-answer");
    expect(card.dataset.state).toBe("streaming");
    expect($(card, ".aiw-answer-type").textContent).toBe("City");
    expect($(card, ".aiw-answer-state").textContent).toBe("answering…");
    model.patch(["answer", "a1", 0, '{"name": "Lis', [["set", ["name"], "Lis"]]]);
    view.flush();
    const name = $(card, ".aiw-json-str");
    expect(name.textContent).toBe("Lis");
    model.patch(["answer", "a1", 0, 'bon", "population": 5', [["append", ["name"], "bon"]]]);
    model.patch(["answer", "a1", 0, "45000, ", [["set", ["population"], 545000]]]);
    view.flush();
    expect($(root, ".aiw-answer")).toBe(card);
    expect($(card, ".aiw-json-str")).toBe(name); // patched in place, not redrawn
    expect([...card.querySelectorAll(".aiw-json-key")].map((k) => k.textContent)).toEqual(["name", "population"]);
    expect(card.textContent).toContain("Lisbon");
    expect($(card, ".aiw-answer-raw").hidden).toBe(true);

    // Checked: the kernel replaces the part; the card shows the validated object (its default filled in).
    const text = '{"name": "Lisbon", "population": 545000}';
    const parsed = { name: "Lisbon", population: 545000 };
    const valid = answerPart(text, { state: "valid", parsed, value: { ...parsed, country: "Portugal" } });
    model.patch(["part", "a1", 0, valid]);
    const finished: Message = assistant("a1", 0, [valid], { status: "completed" });
    model.finish(finished);
    view.flush();
    const done = $(root, ".aiw-answer");
    expect(done.dataset.state).toBe("valid");
    expect($(done, ".aiw-answer-state").textContent).toBe("✓ matches City");
    expect([...done.querySelectorAll(".aiw-json-key")].map((k) => k.textContent)).toEqual(["name", "population", "country"]);
    expect(done.querySelector(".aiw-md")).toBeNull(); // never markdown
  });

  it("shows what the refused answers were told above the new one, and a refused last answer's errors", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    const refused = answerPart('{"name": 3}', {
      state: "invalid",
      parsed: { name: 3 },
      errors: "- name: Input should be a valid string",
      refused: ["- population: Field required"],
    });
    model.finish(assistant("a1", 0, [refused], { status: "error", error: "The answer did not match City" }));
    view.flush();
    const card = $(root, ".aiw-answer");
    expect(card.dataset.state).toBe("invalid");
    expect($(card, ".aiw-answer-refused").textContent).toContain("Answer 1 did not match City; asked again:- population: Field required");
    expect($(card, ".aiw-answer-errors").hidden).toBe(false);
    expect($(card, ".aiw-answer-errors").textContent).toContain("Does not match City:- name: Input should be a valid string");
    expect(card.textContent).toContain("3");
  });

  it("shows text that is not JSON as it is, and text that is no answer as markdown", async () => {
    const model = new FakeModel();
    const { view, root } = await mount(model);
    model.patch(["start", assistant("a1", 0, [answerPart("Let me **check** <img src=x onerror=alert(1)>", { parse_error: "invalid JSON at offset 0" })])]);
    view.flush();
    const raw = $(root, ".aiw-answer-raw");
    expect(raw.hidden).toBe(false);
    expect(raw.textContent).toBe("Let me **check** <img src=x onerror=alert(1)>");
    expect(root.querySelector(".aiw-answer img")).toBeNull();
    // The response called a tool: the kernel unmarks its text, which becomes an ordinary markdown part.
    model.patch(["part", "a1", 0, { kind: "text", text: "Let me **check**" }]);
    view.flush();
    expect(root.querySelector(".aiw-answer")).toBeNull();
    expect($(root, ".aiw-md strong").textContent).toBe("check");
  });
});
