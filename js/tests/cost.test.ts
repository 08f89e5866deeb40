import { describe, expect, it } from "vitest";
import { formatCost, formatUsage } from "../src/format";
import { $, FakeModel, mount } from "./helpers";

describe("cost", () => {
  it("reads in dollars: four places below a dollar, cents above, a floor for the tiny", () => {
    expect(formatCost("0")).toBe("$0");
    expect(formatCost("0.00001")).toBe("<$0.0001");
    expect(formatCost("1.95E-7")).toBe("<$0.0001"); // a Decimal's text may be in exponent form
    expect(formatCost("0.0001")).toBe("$0.0001");
    expect(formatCost("0.00424")).toBe("$0.0042");
    expect(formatCost("0.004")).toBe("$0.004");
    expect(formatCost("0.5")).toBe("$0.50");
    expect(formatCost("0.123456")).toBe("$0.1235");
    expect(formatCost("1")).toBe("$1.00");
    expect(formatCost("1234.567")).toBe("$1,234.57");
    // Unknown (null), missing (an older kernel) or not a cost: nothing, never "$NaN".
    for (const unknown of [null, undefined, "", "NaN", "-1", "lots", "Infinity"]) expect(formatCost(unknown)).toBe("");
    expect(formatUsage({ input_tokens: 1200, output_tokens: 30, cost: "0.00424" })).toBe("1,200 in · 30 out · $0.0042");
    expect(formatUsage({ input_tokens: 1200, output_tokens: 30, cost: null })).toBe("1,200 in · 30 out");
  });

  it("the footer shows each reply's cost and the session's, and says in its title when a price is unknown", async () => {
    const conversation = { input_tokens: 3000, output_tokens: 90, requests: 3, cost: "0.0126" };
    const model = new FakeModel({ _usage: conversation });
    const { view, root } = await mount(model);
    const usage = $(root, ".aiw-usage");
    expect(usage.textContent).toBe("Session: 3,000 in · 90 out · $0.0126 (3 requests)");
    expect(usage.title).toBe("");
    const reply = { input_tokens: 1000, output_tokens: 30, requests: 1, cost: "0.000042" };
    model.patch(["start", { id: "a1", index: 0, role: "assistant", status: "completed", parts: [], usage: reply }]);
    view.flush();
    expect(usage.textContent).toBe("Last turn: 1,000 in · 30 out · <$0.0001 · Session: 3,000 in · 90 out · $0.0126 (3 requests)");
    // A reply from a model without a price: its tokens, no cost, and the conversation's sum unknown too.
    model.patch(["start", { id: "a2", index: 1, role: "assistant", status: "completed", parts: [], usage: { ...reply, cost: null } }]);
    model.set("_usage", { ...conversation, input_tokens: 4000, requests: 4, cost: null });
    view.flush();
    expect(usage.textContent).toBe("Last turn: 1,000 in · 30 out · Session: 4,000 in · 90 out (4 requests)");
    expect(usage.title).toBe("Price unknown for the last turn and the session: no price for this model or provider in genai-prices.");
  });
});
