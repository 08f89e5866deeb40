// Replays what a real ChatWidget sent during scripted turns (fixtures/trace.json, made by the kernel side) and
// checks the two halves of docs/protocol.md against each other.

import { describe, expect, it } from "vitest";
import { storeFor } from "../src/store";
import type { Message, WidgetTraits } from "../src/types";
import { kernelFixture } from "./fixtures/load";
import { $, FakeModel, mount, settle } from "./helpers";

type Event =
  | { kind: "custom"; msg: { type: string; ops?: unknown[][] } }
  | { kind: "trait"; name: keyof WidgetTraits; value: never }
  | { kind: "action"; msg: Record<string, unknown> };

describe("a real kernel trace", () => {
  it("builds live messages equal to the finished ones, and the DOM of the final conversation", async () => {
    const events = kernelFixture<Event[]>("trace.json");
    const model = new FakeModel();
    let i = 0;
    for (; events[i].kind === "trait"; i++) {
      const e = events[i] as Extract<Event, { kind: "trait" }>;
      model.attrs[e.name] = e.value;
    }
    const { view, root } = await mount(model);
    const store = storeFor(model.asModel());
    const finished: Message[] = [];
    let compared = 0;
    let clicked = 0;

    for (; i < events.length; i++) {
      const e = events[i];
      if (e.kind === "trait") {
        model.set(e.name, e.value);
        await settle();
      } else if (e.kind === "custom" && e.msg.type === "patch") {
        for (const op of e.msg.ops ?? []) {
          if (op[0] === "finish") {
            const message = op[2] as Message;
            const live = store.isLive(message.id) ? store.get(message.id) : undefined;
            if (live) {
              expect(JSON.parse(JSON.stringify(live))).toEqual(message);
              compared++;
            }
            finished.push(message);
          }
          model.patch(op); // one op at a time: the live copy as it stands right before its "finish"
        }
      } else if (e.kind === "custom") {
        model.custom(e.msg);
      } else if (e.kind === "action" && e.msg.type === "approve" && e.msg.tool_call_id !== "nope") {
        const card = $(root, `.aiw-tool-card[data-call-id="${String(e.msg.tool_call_id)}"]`);
        expect(card.dataset.state).toBe("awaiting_approval");
        $<HTMLButtonElement>(card, e.msg.decision === "approved_always" ? ".aiw-approve-always" : ".aiw-approve-once").click();
        expect(model.sent.at(-1)).toEqual(e.msg);
        clicked++;
      } else if (e.kind === "action" && e.msg.type === "revoke") {
        $<HTMLButtonElement>(root, `.aiw-allowed-tool[data-tool-name="${String(e.msg.tool_name)}"] .aiw-revoke`).click();
        expect(model.sent.at(-1)).toEqual(e.msg);
        clicked++;
      }
      view.flush();
    }
    expect(compared).toBeGreaterThanOrEqual(5);
    expect(clicked).toBe(2);

    // The final DOM shows the finished conversation.
    const messages = [...root.querySelectorAll<HTMLElement>(".aiw-message")];
    expect(messages.map((m) => m.dataset.id)).toEqual(finished.map((m) => m.id));
    for (const [k, m] of finished.entries()) {
      expect(messages[k].dataset.status).toBe(m.status);
      for (const part of m.parts) {
        if (part.kind !== "tool_call") continue;
        const card = $(messages[k], `.aiw-tool-card[data-call-id="${part.tool_call_id}"]`);
        expect(card.dataset.state).toBe(part.state);
      }
    }
    // The typed answer (the last reply): a card with the validated object, after what the refused first answer was told.
    const answer = $(messages.at(-1)!, ".aiw-answer");
    expect(answer.dataset.state).toBe("valid");
    expect([...answer.querySelectorAll(".aiw-json-key")].map((k) => k.textContent)).toEqual(["city", "sky", "celsius", "tags"]);
    expect($(answer, ".aiw-answer-refused").textContent).toContain("celsius: Field required");
    expect(root.querySelector(".aiw-banner-kernel")!.textContent).toContain("Approval refused");
    expect($(root, ".aiw-stop").hidden).toBe(true);
    expect($(root, ".aiw-usage").textContent).toMatch(/Session: 800 in/);
  });
});
