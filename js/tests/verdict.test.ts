// What a card says about how its call went (issue 9, items 7, 8, 9, 11): a failure's message without a click,
// a remembered "allow always", the run time apart from the wait for a decision, a labelled result with text as
// text, and the tool-call limit said once.

import { describe, expect, it } from "vitest";
import type { Message, ToolCallPart } from "../src/types";
import { $, FakeModel, assistant, call, mount } from "./helpers";

const TOOLS = {
  rm: { title: "Delete files", icon: "🗑", risk: "destructive", description: "", requires_approval: true },
};

async function cardOf(extra: Partial<ToolCallPart>, collapse = true) {
  const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: collapse });
  const { view, root } = await mount(model);
  model.patch(["start", assistant("a1", 0, [call("c1", "rm", { parsed_arguments: { path: "/tmp/a" }, ...extra })])]);
  view.flush();
  return { model, view, root, card: $(root, '.aiw-tool-card[data-call-id="c1"]') };
}

const TRACEBACK = 'Traceback (most recent call last):\n  File "/home/me/tool.py", line 3, in rm\nValueError: no such file';

describe("a failed call", () => {
  it("shows its failure message while collapsed, once, with the traceback a click away", async () => {
    const { card } = await cardOf({
      state: "failed",
      run_started_at: 1000,
      finished_at: 1000.4,
      outcome: {
        status: "failure",
        message: "The tool rm failed with an internal error.",
        error: { type: "ValueError", message: "no such file", traceback: TRACEBACK },
      },
    });
    expect($(card, ".aiw-tool-body").hidden).toBe(true); // collapsed
    const line = $(card, ".aiw-tool-outcome-line");
    expect(line.hidden).toBe(false);
    expect(line.dataset.kind).toBe("failed");
    expect(line.textContent).toBe("ValueError: no such file");
    $<HTMLButtonElement>(card, ".aiw-tool-toggle").click();
    expect(card.querySelector(".aiw-tool-error-message")).toBeNull(); // not repeated in the body
    expect($(card, ".aiw-tool-error-told").textContent).toBe("Told the model: The tool rm failed with an internal error.");
    expect($(card, "details.aiw-traceback pre").textContent).toBe(TRACEBACK);
    expect(($(card, "details.aiw-traceback") as HTMLDetailsElement).open).toBe(false);
  });

  it("shows nothing under the header for a call that succeeded, was declined or did not run", async () => {
    for (const extra of [
      { state: "skipped", outcome: { status: "failure", message: "Not run: the turn failed." } },
      { state: "completed", outcome: { status: "success", value: 1 } },
      { state: "rejected", decision: "rejected", outcome: { status: "failure", message: "declined" } },
    ] as Partial<ToolCallPart>[]) {
      const { card } = await cardOf(extra);
      expect($(card, ".aiw-tool-outcome-line").hidden).toBe(true);
    }
  });
});

describe("decisions and time", () => {
  it("marks a call that ran because of an earlier Allow always", async () => {
    const { card } = await cardOf({
      state: "completed",
      decision: "approved_always",
      decision_remembered: true,
      run_started_at: 1000,
      finished_at: 1001.2,
      outcome: { status: "success", value: "Deleted." },
    });
    const badge = $(card, ".aiw-remembered");
    expect(badge.hidden).toBe(false); // in the header: seen collapsed
    expect(badge.textContent).toBe("allowed always");
    expect($(card, ".aiw-decision").textContent).toBe("Allowed always earlier in this conversation: not asked again");
    expect($(card, ".aiw-elapsed").textContent).toBe("1.2s");
  });

  it("says nothing of the kind for a call decided by a click, and times the run and the wait apart", async () => {
    const { card } = await cardOf({
      state: "completed",
      decision: "approved",
      approval_requested_at: 1000,
      run_started_at: 1030,
      finished_at: 1031.5,
      outcome: { status: "success", value: "Deleted." },
    });
    expect($(card, ".aiw-remembered").hidden).toBe(true);
    expect($(card, ".aiw-elapsed").textContent).toBe("1.5s"); // the run only, not the 30 s wait
    expect($(card, ".aiw-decision").textContent).toBe("Allowed once after 30s");
  });

  it("says who let it run while collapsed: you, an earlier Allow always, or nobody asked", async () => {
    const cases: [Partial<ToolCallPart>, string | null, string][] = [
      [{ decision: "approved", approval_requested_at: 1000, run_started_at: 1002 }, "allowed by you", "Allowed once after 2.0s"],
      [{ decision: "approved_always", approval_requested_at: 1000, run_started_at: 1001 }, "allowed by you", "Allowed always after 1.0s"],
      [{ decision: "approved_always", decision_remembered: true }, "allowed always", "Ran without asking: a person chose Allow always for this tool earlier"],
      [{ unasked_reason: "KernelTools(ask='never')" }, "ran without asking", "Ran without asking: KernelTools(ask='never')"],
      [{}, null, ""], // a tool that asks nobody
    ];
    for (const [extra, label, title] of cases) {
      const { card } = await cardOf({ state: "completed", outcome: { status: "success", value: 1 }, ...extra });
      expect($(card, ".aiw-tool-body").hidden).toBe(true); // collapsed
      const shown = [...card.querySelectorAll<HTMLElement>(".aiw-allowed-by-you, .aiw-remembered, .aiw-unasked")].filter((b) => !b.hidden);
      expect(shown.map((b) => b.textContent)).toEqual(label ? [label] : []);
      if (label) expect(shown[0].title).toBe(title);
    }
    const declined = await cardOf({ state: "rejected", decision: "rejected", outcome: { status: "failure", message: "no" } });
    expect([...declined.card.querySelectorAll<HTMLElement>(".aiw-allowed-by-you, .aiw-remembered, .aiw-unasked")].every((b) => b.hidden)).toBe(true);
  });

  it("shows its decision badge once the person allows a call that waited", async () => {
    const { model, view, card } = await cardOf({ state: "awaiting_approval", approval_requested_at: 1000 });
    expect($(card, ".aiw-allowed-by-you").hidden).toBe(true);
    model.patch(["call", "a1", "c1", { state: "running", decision: "approved", run_started_at: 1003 }]);
    view.flush();
    expect($(card, ".aiw-allowed-by-you").hidden).toBe(false);
    expect($(card, ".aiw-allowed-by-you").title).toBe("Allowed once after 3.0s");
  });

  it("shows no 0.0s for a call its agent ran whose news came in one piece, and its time when it took some", async () => {
    const quick = await cardOf({ state: "completed", provider_executed: true, run_started_at: 1000, finished_at: 1000.01 });
    expect($(quick.card, ".aiw-elapsed").textContent).toBe("");
    const slow = await cardOf({ state: "completed", provider_executed: true, run_started_at: 1000, finished_at: 1002.5 });
    expect($(slow.card, ".aiw-elapsed").textContent).toBe("2.5s");
    const local = await cardOf({ state: "completed", run_started_at: 1000, finished_at: 1000.01 });
    expect($(local.card, ".aiw-elapsed").textContent).toBe("0.0s"); // the kernel timed its own run
  });

  it("counts no run time for a declined call, and says how long the decision took", async () => {
    const { card } = await cardOf({
      state: "rejected",
      decision: "rejected",
      decision_reason: "not today",
      started_at: 990,
      approval_requested_at: 1000,
      finished_at: 1004,
      outcome: { status: "failure", message: "The person declined this call." },
    });
    expect($(card, ".aiw-elapsed").textContent).toBe("");
    expect($(card, ".aiw-decision").textContent).toBe("Declined after 4.0s: not today");
  });

  it("ticks the run time while the call runs", async () => {
    const now = Date.now() / 1000;
    const { card } = await cardOf({
      state: "running",
      decision: "approved",
      approval_requested_at: now - 60,
      run_started_at: now - 2,
    });
    expect($(card, ".aiw-elapsed").textContent).toMatch(/^2\.\ds$/); // since the run started, not the request
    expect($(card, ".aiw-decision").textContent).toBe("Allowed once after 58s");
  });
});

describe("a result", () => {
  it("is labelled, and a string value shows as plain text, not as a JSON string", async () => {
    const text = "Deleted 3 files.\n<img src=x onerror=alert(1)> stays text";
    const { card } = await cardOf({ state: "completed", outcome: { status: "success", value: text } }, false);
    const result = $(card, ".aiw-tool-result");
    expect($(result, ".aiw-section-label").textContent).toBe("Result");
    const plain = $(result, ".aiw-result-plain");
    expect(plain.textContent).toBe(text);
    expect(plain.querySelector("img")).toBeNull();
    expect(result.querySelector(".aiw-json")).toBeNull();
  });

  it("is labelled when it is JSON or markdown text", async () => {
    const { root } = await cardOf({ state: "completed", outcome: { status: "success", value: { n: 1 } } }, false);
    expect($(root, ".aiw-tool-result .aiw-section-label").textContent).toBe("Result");
    expect($(root, ".aiw-tool-result .aiw-json").textContent).toContain("n");
    const md = await cardOf({ state: "completed", outcome: { status: "success", text: "**ok**" } }, false);
    expect($(md.root, ".aiw-tool-result .aiw-section-label").textContent).toBe("Result");
    expect($(md.root, ".aiw-tool-result strong").textContent).toBe("ok");
  });
});

describe("the tool-call limit", () => {
  it("is said once: the sentence in the reply's error, no note, the unrun call marked not run", async () => {
    const model = new FakeModel({ _tools: TOOLS, collapse_tool_calls: true });
    const { view, root } = await mount(model);
    const sentence =
      "Paused at the limit of 1 round of tool calls per turn (max_iterations); Continue runs the call the model asked for next.";
    const reply: Message = {
      ...assistant("a1", 0, [
        call("c1", "rm", {
          state: "skipped",
          outcome: { status: "failure", message: "Not run: this turn reached its limit of 1 round of tool calls." },
        }),
      ]),
      status: "limit_reached",
      error: sentence,
    };
    model.patch(["start", reply]);
    view.flush();
    const message = $(root, '.aiw-message[data-id="a1"]');
    expect($(message, ".aiw-note").hidden).toBe(true);
    expect($(message, ".aiw-state").textContent).toBe("not run");
    expect($(message, ".aiw-tool-outcome-line").hidden).toBe(true); // why: in the card's body, not once per card
    $<HTMLButtonElement>(message, ".aiw-tool-toggle").click(); // a collapsed card builds its body when opened
    expect($(message, ".aiw-tool-error-message").textContent).toBe(
      "Not run: this turn reached its limit of 1 round of tool calls.",
    );
    const error = $(message, ".aiw-reply-error"); // in the reply, with Continue: no banner says it again
    expect(error.hidden).toBe(false);
    expect(error.textContent?.match(/limit of 1 round/g)?.length).toBe(1);
    expect($(error, ".aiw-error-action").dataset.label).toBe("Continue");
    expect(root.textContent?.match(/rounds? of tool calls per turn/g)?.length).toBe(1);
  });
});
