/// <reference types="vite/client" />
// A notebook's saved widget state, opened by this code: also one saved before the widget's own traits took a
// leading `_` (tests/fixtures/saved: a real notebook of that version, its bundle's code left out).
import { describe, expect, it } from "vitest";
import type { WidgetTraits } from "../src/types";
import { $, FakeModel, mount } from "./helpers";

const notebooks = import.meta.glob<string>("../../tests/fixtures/saved/*.ipynb", { eager: true, query: "?raw", import: "default" });

/** The saved state of the notebook's chat (the AnyModel that is not the bundle holding the front-end code). */
function savedChatState(name: string): Record<string, unknown> {
  const nb = JSON.parse(notebooks[`../../tests/fixtures/saved/${name}`]);
  const models = Object.values(nb.metadata.widgets["application/vnd.jupyter.widget-state+json"].state) as {
    model_name: string;
    state: Record<string, unknown>;
  }[];
  const chats = models.filter((m) => m.model_name === "AnyModel" && !("code" in m.state));
  expect(chats).toHaveLength(1);
  return chats[0].state;
}

/** A model holding exactly `state`, as the widget manager makes one from saved state (no defaults added). */
function modelOf(state: Record<string, unknown>): FakeModel {
  const model = new FakeModel();
  model.attrs = { ...state } as unknown as WidgetTraits;
  return model;
}

describe("saved state", () => {
  it("shows the conversation of a notebook saved when the widget's traits had no leading underscore", async () => {
    const state = savedChatState("chat_with_public_traits.ipynb");
    expect(state).toHaveProperty("history");
    expect(state).not.toHaveProperty("_history");
    const model = modelOf(state);
    const { root } = await mount(model);
    const msgs = [...root.querySelectorAll(".aiw-message")];
    expect(msgs.map((m) => [m.getAttribute("data-role"), m.getAttribute("data-status")])).toEqual([
      ["user", "completed"],
      ["assistant", "completed"],
    ]);
    expect(msgs[0].textContent).toContain("What's the weather in Paris?");
    expect(msgs[1].textContent).toContain("light rain");
    // The tool's title comes from the saved `tools`, the conversation's cost from the saved `usage`.
    expect($(msgs[1], ".aiw-tool-title").textContent).toBe("Weather");
    expect($(root, ".aiw-usage").textContent).toMatch(/\d/);
    expect(root.classList.contains("aiw-turn")).toBe(false);
    // Read only: nothing is written under the old names or the new ones.
    expect(Object.keys(model.attrs).sort()).toEqual(Object.keys(state).sort());
  });

  it("reads the new name when a state has both", async () => {
    const state = savedChatState("chat_with_public_traits.ipynb");
    const model = modelOf({ ...state, _history: [], _scope: "turn" });
    const { root } = await mount(model);
    expect(root.querySelectorAll(".aiw-message")).toHaveLength(0);
    expect(root.classList.contains("aiw-turn")).toBe(true);
  });
});
