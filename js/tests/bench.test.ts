// Running a tool by hand: the form from a tool's schema (each field type, defaults, enums, lists, nested JSON,
// validation as the person types, Enter to run), the kernel's errors at their fields, the bench below the chat with
// its latest run's card, "Run again" on a finished card, and run_tool's form alone.

import { describe, expect, it } from "vitest";
import { RunForm } from "../src/render/runform";
import type { BenchEntry, JsonObject, OutgoingMessage, ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string", description: "The city." },
    days: { type: "integer", default: 3, minimum: 1 },
    ratio: { type: "number" },
    metric: { type: "boolean", default: true },
    unit: { enum: ["celsius", "fahrenheit"], type: "string", default: "celsius" },
    tags: { type: "array", items: { type: "string" }, default: ["a", "b"] },
    counts: { type: "array", items: { type: "integer" } },
    to: { $ref: "#/$defs/Address" },
    note: { anyOf: [{ type: "string" }, { type: "null" }], default: null, description: "Optional." },
    limit: { type: ["integer", "null"], default: null },
  },
  required: ["city", "to"],
  $defs: { Address: { type: "object", properties: { street: { type: "string" } }, required: ["street"] } },
};

function form(values: JsonObject = {}, schema: unknown = SCHEMA) {
  const sent: JsonObject[] = [];
  const f = new RunForm(schema as never, values, (args) => sent.push(args));
  document.body.append(f.el);
  const field = <T extends HTMLElement = HTMLInputElement>(name: string) => $<T>(f.el, `[data-field="${name}"]`);
  const error = (name: string) => field(name).closest(".aiw-edit-row")!.querySelector(".aiw-edit-error")!.textContent;
  return { f, sent, field, error };
}

const typeInto = (input: HTMLInputElement | HTMLTextAreaElement, value: string) => {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
};

describe("the form of a tool run by hand", () => {
  it("has a field of the right kind for each parameter, defaults filled in, required marked, hints shown", () => {
    const { f, field } = form({ city: "Oslo" });
    expect(field("city").type).toBe("text");
    expect(field("city").value).toBe("Oslo");
    expect(field("days").type).toBe("number");
    expect(field("days").step).toBe("1");
    expect(field("days").value).toBe("3");
    expect(field("ratio").step).toBe("any");
    expect(field("metric").type).toBe("checkbox");
    expect(field("metric").checked).toBe(true);
    const unit = field<HTMLSelectElement>("unit");
    expect(unit.tagName).toBe("SELECT");
    expect([...unit.options].map((o) => o.text)).toEqual(["(none)", "celsius", "fahrenheit"]);
    expect(unit.selectedOptions[0].text).toBe("celsius");
    const tags = f.el.querySelectorAll<HTMLInputElement>('[data-field="tags"] .aiw-list-input');
    expect([...tags].map((t) => t.value)).toEqual(["a", "b"]);
    const to = field<HTMLTextAreaElement>("to");
    expect(to.tagName).toBe("TEXTAREA"); // a nested object ($ref followed): JSON
    expect(to.placeholder).toBe('{"street": …}');
    expect(field("note").type).toBe("text"); // anyOf with null: an optional string
    expect(field("limit").type).toBe("number");
    const names = [...f.el.querySelectorAll(".aiw-edit-name")].map((n) => n.textContent);
    expect(names).toContain("city *");
    expect(names).toContain("to *");
    expect(names).toContain("days");
    expect(f.el.textContent).toContain("The city.");
    expect(f.el.textContent).toContain("Optional.");
  });

  it("sends what the fields hold; optional empty fields are left out", () => {
    const { f, sent, field } = form({ city: "Oslo", to: { street: "Main 1" } });
    $<HTMLButtonElement>(f.el, ".aiw-run").click();
    expect(sent).toEqual([
      { city: "Oslo", days: 3, metric: true, unit: "celsius", tags: ["a", "b"], to: { street: "Main 1" } },
    ]);
    expect($<HTMLButtonElement>(f.el, ".aiw-run").disabled).toBe(true); // until the kernel answers
    f.answered({}, null);
    field("ratio").value = "0.5";
    field<HTMLSelectElement>("unit").value = "1";
    field("metric").checked = false;
    $<HTMLButtonElement>(f.el, '[data-field="tags"] .aiw-list-remove').click();
    $<HTMLButtonElement>(f.el, ".aiw-list-add").click();
    const added = f.el.querySelectorAll<HTMLInputElement>('[data-field="counts"] .aiw-list-input');
    expect(added).toHaveLength(0);
    $<HTMLButtonElement>(f.el, '[data-field="counts"] .aiw-list-add').click();
    f.el.querySelector<HTMLInputElement>('[data-field="counts"] .aiw-list-input')!.value = "7";
    $<HTMLButtonElement>(f.el, ".aiw-run").click();
    expect(sent[1]).toEqual({
      city: "Oslo",
      days: 3,
      ratio: 0.5,
      metric: false,
      unit: "fahrenheit",
      tags: ["b"],
      counts: [7],
      to: { street: "Main 1" },
    });
  });

  it("checks what a field can tell as the person types, and sends nothing while a field is wrong", () => {
    const { f, sent, field, error } = form({ city: "Oslo" });
    const to = field<HTMLTextAreaElement>("to");
    typeInto(to, '{"street": ');
    expect(error("to")).toBe("Not valid JSON.");
    expect(to.getAttribute("aria-invalid")).toBe("true");
    typeInto(to, "[1]");
    expect(error("to")).toBe('An object, in JSON: {"key": value}.');
    typeInto(to, '{"street": "x"}');
    expect(error("to")).toBe("");
    typeInto(field("days"), "2.5");
    expect(error("days")).toBe("A whole number.");
    $<HTMLButtonElement>(f.el, ".aiw-run").click();
    expect(sent).toEqual([]);
    typeInto(field("days"), "");
    expect(error("days")).toBe(""); // empty while typing: no nagging; optional, so left out
    typeInto(field("city"), "");
    $<HTMLButtonElement>(f.el, ".aiw-run").click();
    expect(sent).toEqual([{ city: "", metric: true, unit: "celsius", tags: ["a", "b"], to: { street: "x" } }]);
  });

  it("shows the kernel's problems at their fields and one that is no field's under the form", () => {
    const { f, field, error } = form({ city: "Oslo", to: {} });
    $<HTMLButtonElement>(f.el, ".aiw-run").click();
    f.answered({ to: "street: Field required", days: "Input should be greater than or equal to 1 (got 0)" }, null);
    expect(error("to")).toBe("street: Field required");
    expect(error("days")).toBe("Input should be greater than or equal to 1 (got 0)");
    expect(field("to").getAttribute("aria-invalid")).toBe("true");
    expect($<HTMLButtonElement>(f.el, ".aiw-run").disabled).toBe(false);
    typeInto(field("days"), "4"); // fixing a field clears its message
    expect(error("days")).toBe("");
    f.answered({}, "Invalid arguments for x: (arguments): something. Correct them and call again.");
    expect($(f.el, ".aiw-run-error").textContent).toContain("(arguments): something");
    expect(error("to")).toBe("");
  });

  it("runs on Enter in a one-line field (not in a text area), and on Ctrl+Enter anywhere", () => {
    const { f, sent, field } = form({ city: "Oslo", to: { street: "x" } });
    const enter = (el: HTMLElement, init: KeyboardEventInit = {}) =>
      el.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true, ...init }));
    enter(field<HTMLTextAreaElement>("to"));
    expect(sent).toHaveLength(0);
    enter(field("city"), { shiftKey: true });
    expect(sent).toHaveLength(0);
    enter(field("city"));
    expect(sent).toHaveLength(1);
    f.answered({}, null);
    enter(field<HTMLTextAreaElement>("to"), { ctrlKey: true });
    expect(sent).toHaveLength(2);
  });

  it("a tool without parameters says so; text from the schema is text", () => {
    const { f } = form({}, { type: "object", properties: {} });
    expect(f.el.textContent).toContain("This tool takes no arguments.");
    const evil = form({}, { type: "object", properties: { x: { type: "string", description: "<img src=x onerror=alert(1)>" } } });
    expect(evil.f.el.querySelector("img")).toBeNull();
    expect(evil.f.el.textContent).toContain("<img src=x onerror=alert(1)>");
  });
});

// ---- the bench in a view ----------------------------------------------------------------------------------------

const TOOLS = {
  weather: {
    title: "Weather",
    icon: "🌦",
    risk: "read_only",
    description: "Gets the <b>weather</b>.",
    parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer", default: 1 } }, required: ["city"] },
  },
};

function entry(extra: Partial<BenchEntry> = {}): BenchEntry {
  return {
    id: "bench_1",
    tool_name: "weather",
    arguments: { city: "Lisbon" },
    source: "call_1",
    message: null,
    running: false,
    errors: {},
    error: null,
    attempt: 0,
    ...extra,
  };
}

const ran = (extra: Partial<ToolCallPart> = {}) =>
  assistant("m_b", 0, [call("b_call", "weather", { parsed_arguments: { city: "Oslo" }, state: "running", run_started_at: 1, ...extra })]);

describe("the bench", () => {
  it("shows an entry below the chat: its form, Run sends its arguments, the latest run's card updates", async () => {
    const model = new FakeModel({ _tools: TOOLS });
    const { view, root } = await mount(model);
    const bench = $(root, ".aiw-bench");
    expect(bench.hidden).toBe(true);
    model.set("_bench", [entry()]);
    view.flush();
    expect(bench.hidden).toBe(false);
    expect(root.lastElementChild).toBe(bench); // below the chat and its input
    const item = $(bench, '.aiw-bench-entry[data-bench-id="bench_1"]');
    expect($(item, ".aiw-tool-title").textContent).toBe("Weather");
    expect($(item, ".aiw-bench-description").textContent).toBe("Gets the <b>weather</b>.");
    expect(item.querySelector("b")).toBeNull();
    const city = $<HTMLInputElement>(item, '[data-field="city"]');
    expect(city.value).toBe("Lisbon");
    city.value = "Oslo";
    $<HTMLButtonElement>(item, ".aiw-run").click();
    expect(model.sent.at(-1)).toEqual({ type: "bench_run", id: "bench_1", arguments: { city: "Oslo", days: 1 } });

    // The kernel takes them: running, then the run's card with its progress and result.
    model.set("_bench", [entry({ arguments: { city: "Oslo", days: 1 }, attempt: 1, running: true, message: ran() })]);
    view.flush();
    expect(city.value).toBe("Oslo");
    expect($<HTMLButtonElement>(item, ".aiw-run").disabled).toBe(true);
    expect($<HTMLButtonElement>(item, ".aiw-run").textContent).toBe("Running…");
    const card = $(item, '.aiw-bench-run .aiw-tool-card[data-call-id="b_call"]');
    expect(card.dataset.state).toBe("running");
    expect($(card, ".aiw-tool-body").hidden).toBe(false); // open: not collapsed like the chat's cards
    expect(card.querySelector(".aiw-run-again")).toBeNull();
    expect($(card, ".aiw-tool-title").textContent).toBe("Latest run"); // the entry's header names the tool
    const done = ran({ state: "completed", finished_at: 2, outcome: { status: "success", value: { sky: "clear" } } });
    model.set("_bench", [entry({ arguments: { city: "Oslo", days: 1 }, attempt: 1, message: { ...done, status: "completed" } })]);
    view.flush();
    expect($(item, ".aiw-bench-run .aiw-tool-card")).toBe(card); // the same card, updated
    expect(card.dataset.state).toBe("completed");
    expect(card.textContent).toContain("clear");
    expect($<HTMLButtonElement>(item, ".aiw-run").disabled).toBe(false);

    // Errors from the kernel show at their fields; Close sends bench_close.
    model.set("_bench", [entry({ arguments: { city: "" }, attempt: 2, errors: { city: "String should have at least 1 character" } })]);
    view.flush();
    expect(city.value).toBe(""); // another view's arguments: the form shows them
    expect(item.querySelector(".aiw-edit-error")!.textContent).toBe("String should have at least 1 character");
    expect(item.querySelector(".aiw-bench-run .aiw-tool-card")).toBeNull();
    $<HTMLButtonElement>(item, ".aiw-bench-close").click();
    expect(model.sent.at(-1)).toEqual({ type: "bench_close", id: "bench_1" });
    model.set("_bench", []);
    view.flush();
    expect(bench.hidden).toBe(true);
    expect(root.querySelector(".aiw-bench-entry")).toBeNull();
  });

  it("a Run the kernel refuses can be pressed again; approval buttons of a bench run send approve", async () => {
    const model = new FakeModel({ _tools: TOOLS });
    const { view, root } = await mount(model);
    model.set("_bench", [entry()]);
    view.flush();
    const run = $<HTMLButtonElement>(root, ".aiw-run");
    run.click();
    expect(run.disabled).toBe(true);
    model.custom({ type: "error", message: "Run refused: there is no bench entry 'bench_1'" });
    view.flush();
    expect(run.disabled).toBe(false);
    model.set("_bench", [entry({ attempt: 1, running: true, message: ran({ state: "awaiting_approval", approval_reason: "Allow?" }) })]);
    view.flush();
    $<HTMLButtonElement>(root, ".aiw-bench-run .aiw-approve-once").click();
    expect(model.sent.at(-1)).toEqual({ type: "approve", tool_call_id: "b_call", decision: "approved" });
  });

  it("Run again on a finished card of the chat asks for an entry, and the entry that comes is focused", async () => {
    const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: false });
    const { view, root } = await mount(model);
    model.patch([
      "start",
      assistant("a1", 0, [
        call("call_1", "weather", { state: "completed", parsed_arguments: { city: "Lisbon" }, outcome: { status: "success", value: 1 } }),
        call("call_2", "weather", { state: "running", run_started_at: 1 }),
        call("call_3", "web_search", { state: "completed", provider_executed: true, outcome: { status: "success", value: 1 } }),
        call("call_4", "gone", { state: "failed", outcome: { status: "failure", message: "x" } }),
      ]),
    ]);
    view.flush();
    const actions = (id: string) => $(root, `.aiw-tool-card[data-call-id="${id}"] .aiw-tool-actions`);
    expect(actions("call_1").hidden).toBe(false);
    expect(actions("call_2").hidden).toBe(true); // not finished
    expect(actions("call_3").hidden).toBe(true); // the provider ran it
    expect(actions("call_4").hidden).toBe(true); // no such tool in the kernel
    $<HTMLButtonElement>(root, '.aiw-tool-card[data-call-id="call_1"] .aiw-run-again').click();
    expect(model.sent.at(-1)).toEqual({ type: "bench_open", tool_call_id: "call_1" });
    model.set("_bench", [entry()]);
    view.flush();
    await Promise.resolve();
    expect(document.activeElement).toBe($(root, '.aiw-bench-entry [data-field="city"]'));
    expect($(root, ".aiw-bench-origin").textContent).toBe("from the model's call");
  });

  it("run_tool's form alone: no conversation, no input, no close button, no Run again", async () => {
    const model = new FakeModel({ _tools: TOOLS, _scope: "bench", compact: true });
    const { view, root } = await mount(model);
    model.set("_bench", [entry({ source: null })]);
    view.flush();
    expect(root.classList.contains("aiw-bench-only")).toBe(true);
    expect(root.querySelector(".aiw-bench-close")).toBeNull();
    expect($(root, ".aiw-bench-origin").textContent).toBe("");
    model.set("_bench", [entry({ source: null, attempt: 1, message: { ...ran({ state: "completed", outcome: { status: "success", value: 1 } }), status: "completed" } })]);
    view.flush();
    expect(root.querySelector(".aiw-run-again")).toBeNull();
  });

  it("ignores malformed entries", async () => {
    const model = new FakeModel({ _tools: TOOLS });
    const { view, root } = await mount(model);
    model.set("_bench", [null, { id: 3 }, { id: "x" }, entry({ id: "ok", message: "nope" as never, errors: { city: 5 } as never })]);
    view.flush();
    expect(root.querySelectorAll(".aiw-bench-entry")).toHaveLength(1);
    const sent: OutgoingMessage[] = model.sent as OutgoingMessage[];
    expect(sent.some((m) => m.type.startsWith("bench"))).toBe(false);
  });
});

describe("the Run button", () => {
  it("says what a run waits for", () => {
    const { f } = form({ city: "Oslo", to: { street: "x" } });
    const run = f.el.querySelector<HTMLButtonElement>("button.aiw-btn-primary")!;
    expect(run.textContent).toBe("Run");
    f.setRunning(true);
    expect(run.textContent).toBe("Running…");
    expect(run.disabled).toBe(true);
    f.setRunning(true, true);
    expect(run.textContent).toBe("Waiting for approval…");
    f.setRunning(false, true); // not running: nothing to wait for
    expect(run.textContent).toBe("Run");
    expect(run.disabled).toBe(false);
  });
});
