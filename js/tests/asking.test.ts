// A call waiting for the person's input (MCP elicitation): the pure logic (the form's starting values, a link's
// domain, refusing links that are not plain web addresses) and the card (its form, Accept / Decline / Cancel, the
// kernel's refusal at the fields, the confirm step before opening a link, what was answered).

import { afterEach, describe, expect, it, vi } from "vitest";
import { formDefaults, inputRequestOf, linkParts } from "../src/asking";
import { fieldSpec } from "../src/render/schema";
import type { InputRequest, ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const SCHEMA = {
  type: "object",
  properties: {
    date: { type: "string", description: "The day" },
    seats: { type: "integer", default: 2 },
    window: { type: "boolean", default: true },
  },
  required: ["date"],
};

const FORM: InputRequest = { message: "Which day? <img src=x onerror=alert(1)>", mode: "form", schema: SCHEMA, url: null, domain: null, asker: "tables" };
const LINK: InputRequest = { message: "Sign in", mode: "url", schema: null, url: "https://login.example.com/a?b=1", domain: "login.example.com", asker: null };

describe("the pure logic", () => {
  it("starts a form from its schema's defaults, and only those", () => {
    expect(formDefaults(SCHEMA)).toEqual({ seats: 2, window: true });
    expect(formDefaults({ type: "object", properties: { a: { type: "string", default: "" } } })).toEqual({ a: "" });
    expect(formDefaults(null)).toEqual({});
    expect(formDefaults({ properties: [1] } as never)).toEqual({});
  });

  it("splits a link around its domain", () => {
    expect(linkParts("https://login.example.com/a?b=1")).toEqual({
      href: "https://login.example.com/a?b=1",
      before: "https://",
      domain: "login.example.com",
      after: "/a?b=1",
    });
    expect(linkParts("http://example.org:8080/x")?.domain).toBe("example.org");
  });

  it("refuses links that are not plain http(s) web addresses", () => {
    for (const bad of [
      "javascript:alert(1)",
      "JavaScript:alert(1)//https://x.com",
      "data:text/html,<b>x</b>",
      "file:///etc/passwd",
      "/relative",
      "https:evil.example",
      "https://bank.example@evil.example/",
      "https://a.example/\"onmouseover=x",
      " https://a.example/",
      "https://a.example/ x",
      "",
      42,
      null,
    ]) {
      expect(linkParts(bad), String(bad)).toBeNull();
    }
  });

  it("makes a choice of a titled single-select (oneOf of consts), as MCP servers send it", () => {
    const choice = { type: "string", oneOf: [{ const: "red", title: "Red" }, { const: "blue", title: "Blue" }] };
    expect(fieldSpec(choice, {})).toMatchObject({ kind: "enum", options: ["red", "blue"] });
    expect(fieldSpec({ type: "string", oneOf: [{ const: "a" }, { type: "string" }] }, {}).kind).toBe("string");
  });

  it("reads a request from the wire, or nothing", () => {
    expect(inputRequestOf(FORM)).toEqual(FORM);
    expect(inputRequestOf({ mode: "other" })).toBeNull();
    expect(inputRequestOf("x")).toBeNull();
  });
});

async function waitingCard(request: InputRequest, extra: Partial<ToolCallPart> = {}) {
  const model = new FakeModel({ _tools: {}, collapse_tool_calls: true });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "book", { state: "awaiting_input", input_request: request, ...extra })])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

function respondSent(model: FakeModel): unknown[] {
  return model.sent.filter((m) => (m as { type?: string }).type === "respond");
}

describe("a form in the card", () => {
  afterEach(() => vi.restoreAllMocks());

  it("shows the message as text and a form from the defaults; Accept sends what the person typed", async () => {
    const { model, card } = await waitingCard(FORM);
    expect(card.classList.contains("aiw-collapsed")).toBe(false); // open while it waits, even collapsed by default
    const message = $(card, ".aiw-input-message");
    expect(message.textContent).toBe("tables asks: Which day? <img src=x onerror=alert(1)>");
    expect(message.querySelector("img")).toBeNull();
    expect($<HTMLInputElement>(card, '[data-field="seats"]').value).toBe("2");
    expect($<HTMLInputElement>(card, '[data-field="window"]').checked).toBe(true);
    const date = $<HTMLInputElement>(card, '[data-field="date"]');
    date.value = "2026-12-24";
    date.dispatchEvent(new Event("input"));
    date.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true })); // Enter accepts
    expect(respondSent(model)).toEqual([
      { type: "respond", tool_call_id: "c1", action: "accept", content: { date: "2026-12-24", seats: 2, window: true } },
    ]);
    expect($<HTMLButtonElement>(card, ".aiw-input-accept").disabled).toBe(true);
  });

  it("shows the kernel's refusal at its field, not in the banner, and keeps what was typed", async () => {
    const { model, view, root, card } = await waitingCard(FORM);
    const date = $<HTMLInputElement>(card, '[data-field="date"]');
    date.value = "someday";
    $<HTMLButtonElement>(card, ".aiw-input-accept").click();
    model.custom({ type: "error", message: "Answer refused: …", tool_call_id: "c1", fields: { date: "not a date", x: 1 } });
    view.flush();
    const row = date.closest(".aiw-edit-row")!;
    expect(row.querySelector(".aiw-edit-error")!.textContent).toBe("not a date");
    expect(root.querySelector(".aiw-banner-kernel")).toBeNull();
    expect(date.value).toBe("someday");
    expect($<HTMLButtonElement>(card, ".aiw-input-accept").disabled).toBe(false);
    // Escape leaves the form as it was.
    date.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(date.value).toBe("someday");
  });

  it("a refusal for another call leaves this form waiting", async () => {
    const { model, view, root, card } = await waitingCard(FORM);
    $<HTMLInputElement>(card, '[data-field="date"]').value = "d";
    $<HTMLButtonElement>(card, ".aiw-input-accept").click();
    model.custom({ type: "error", message: "Answer refused: other", tool_call_id: "c2", fields: {} });
    view.flush();
    expect($<HTMLButtonElement>(card, ".aiw-input-accept").disabled).toBe(true);
    expect(root.querySelector(".aiw-banner-kernel")?.textContent).toContain("Answer refused: other"); // no card took it
  });

  it("says compactly what was answered once the call runs again", async () => {
    const { model, view, card } = await waitingCard(FORM);
    $<HTMLButtonElement>(card, ".aiw-input-decline").click();
    expect(respondSent(model)).toEqual([{ type: "respond", tool_call_id: "c1", action: "decline" }]);
    model.patch(["call", "a1", "c1", { state: "running", input_request: null }]);
    view.flush();
    expect(card.querySelector(".aiw-input-ask")).toBeNull();
    const answered = $(card, ".aiw-input-answered");
    expect(answered.hidden).toBe(false);
    expect(answered.textContent).toBe("You declined to answer");
  });
});

describe("a link in the card", () => {
  afterEach(() => vi.restoreAllMocks());

  it("shows the domain emphasised and opens only after the confirm step in the card", async () => {
    const opened = vi.spyOn(window, "open").mockImplementation(() => null);
    const confirmed = vi.spyOn(window, "confirm");
    const { model, card } = await waitingCard(LINK);
    expect($(card, ".aiw-link-domain").textContent).toBe("login.example.com");
    expect($(card, ".aiw-input-link").textContent).toBe("https://login.example.com/a?b=1");
    expect(card.querySelector(".aiw-input-link a")).toBeNull(); // text, never a link
    $<HTMLButtonElement>(card, ".aiw-input-open").click();
    expect(opened).not.toHaveBeenCalled();
    const confirm = $(card, ".aiw-input-confirm");
    expect(confirm.hidden).toBe(false);
    expect(confirm.textContent).toContain("login.example.com");
    $<HTMLButtonElement>(card, ".aiw-input-open-yes").click();
    expect(opened).toHaveBeenCalledWith("https://login.example.com/a?b=1", "_blank", "noopener,noreferrer");
    expect(confirmed).not.toHaveBeenCalled();
    expect(confirm.hidden).toBe(true);
    $<HTMLButtonElement>(card, ".aiw-input-accept").click();
    expect(respondSent(model)).toEqual([{ type: "respond", tool_call_id: "c1", action: "accept" }]);
  });

  it("never offers to open a javascript: link", async () => {
    const opened = vi.spyOn(window, "open").mockImplementation(() => null);
    const { card } = await waitingCard({ ...LINK, url: "javascript:alert(1)", domain: null });
    expect(card.querySelector(".aiw-input-open")).toBeNull();
    expect(card.textContent).not.toContain("javascript:");
    expect(opened).not.toHaveBeenCalled();
    expect($<HTMLButtonElement>(card, ".aiw-input-cancel").hidden).toBe(false);
  });
});
