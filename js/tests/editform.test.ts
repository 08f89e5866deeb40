import { describe, expect, it } from "vitest";
import { ApprovalBox } from "../src/render/approval";
import { EditForm } from "../src/render/editform";
import type { OutgoingMessage } from "../src/types";

const schema = {
  type: "object",
  properties: {
    path: { type: "string", description: "The file." },
    count: { type: "integer" },
    force: { type: "boolean" },
    mode: { enum: ["fast", "safe"] },
    tags: { type: "array", items: { type: "string" } },
    note: { type: ["string", "null"] },
    meta: { type: "object" },
  },
  required: ["path", "count"],
};

describe("editing arguments before allowing", () => {
  it("builds one field per parameter, filled with what the model sent", () => {
    const form = new EditForm(schema, { path: "/home", count: 3, force: true, mode: "safe", tags: ["a"] });
    const field = (name: string) => form.el.querySelector<HTMLInputElement>(`[data-field="${name}"]`)!;
    expect(field("path").value).toBe("/home");
    expect(field("count").type).toBe("number");
    expect(field("force").checked).toBe(true);
    expect(field("mode").tagName).toBe("SELECT");
    const tags = form.el.querySelectorAll<HTMLInputElement>('[data-field="tags"] .aiw-list-input');
    expect([...tags].map((t) => t.value)).toEqual(["a"]);
    expect(form.el.textContent).toContain("The file.");
    expect(form.value()).toEqual({ path: "/home", count: 3, force: true, mode: "safe", tags: ["a"] });
  });

  it("says at the field what is wrong and gives nothing", () => {
    const form = new EditForm(schema, { path: "/home", count: 3 });
    const count = form.el.querySelector<HTMLInputElement>('[data-field="count"]')!;
    count.value = "1.5";
    const meta = form.el.querySelector<HTMLTextAreaElement>('[data-field="meta"]')!;
    meta.value = "{oops";
    expect(form.value()).toBeNull();
    expect(count.getAttribute("aria-invalid")).toBe("true");
    expect(form.el.textContent).toContain("A whole number.");
    expect(form.el.textContent).toContain("Not valid JSON.");
    count.value = "";
    expect(form.value()).toBeNull();
    expect(form.el.textContent).toContain("Required.");
  });

  it("Edit, change, Allow sends the edited arguments; a refusal shows under the fields", () => {
    const sent: OutgoingMessage[] = [];
    const box = new ApprovalBox("c1", (m) => sent.push(m), "Allow Delete file?", {
      schema: () => schema,
      values: () => ({ path: "/home", count: 1 }),
    });
    document.body.append(box.el);
    box.el.querySelector<HTMLButtonElement>(".aiw-edit-args")!.click();
    const path = box.el.querySelector<HTMLInputElement>('[data-field="path"]')!;
    expect(document.activeElement).toBe(path);
    path.value = "/home/me/tmp";
    box.el.querySelector<HTMLButtonElement>(".aiw-approve-edited")!.click();
    expect(sent).toEqual([
      { type: "approve", tool_call_id: "c1", decision: "approved", arguments: { path: "/home/me/tmp", count: 1 } },
    ]);
    box.refused("Approval refused: the edited arguments are invalid");
    expect(box.el.querySelector(".aiw-edit-refused")!.textContent).toContain("invalid");
    expect(box.el.querySelector<HTMLButtonElement>(".aiw-approve-edited")!.disabled).toBe(false);
    box.el.querySelector<HTMLButtonElement>(".aiw-edit-cancel")!.click();
    expect(box.el.querySelector(".aiw-edit-form")).toBeNull();
    expect(box.el.querySelector<HTMLElement>(".aiw-approve-once")!.closest<HTMLElement>(".aiw-approval-actions")!.hidden).toBe(false);
  });
});
