// `/` in the input box, the DOM: the list of the MCP servers' prompts under the typed `/query` (loading, none, a
// server that failed), and the form of a chosen prompt's arguments (the project's EditForm: names, descriptions,
// required marks) with Send and Cancel and the kernel's refusal at the fields. Everything a server wrote is set
// as text. The state and the filter are `../slash`.

import { button, h, setDisabled, setHidden, setText } from "../dom";
import { type PromptItem, type SlashState, promptArguments, promptSchema } from "../slash";
import { EditForm } from "./editform";

let listCount = 0;

/** The list under the `/query`: the prompts that match, the selected one highlighted, then notes. */
export class PromptList {
  readonly el = h("ul", "aiw-prompts");
  readonly id = `aiw-prompts-${++listCount}`;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly onPick: (index: number) => void,
  ) {
    this.el.id = this.id;
    this.el.setAttribute("role", "listbox");
    this.el.setAttribute("aria-label", "Prompts of the MCP servers");
    this.el.hidden = true;
  }

  /** Shows `state` (hidden when it is closed). */
  render(state: SlashState): void {
    const open = state.open;
    this.el.hidden = !open;
    if (!open) {
      this.el.replaceChildren();
      if (this.input.getAttribute("aria-controls") === this.id) {
        this.input.setAttribute("aria-expanded", "false");
        this.input.removeAttribute("aria-activedescendant");
      }
      return;
    }
    this.input.setAttribute("aria-controls", this.id);
    this.input.setAttribute("aria-expanded", "true");
    const rows: HTMLElement[] = state.items.map((item, i) => this.option(item, i, i === state.selected));
    if (!state.items.length) {
      const none = state.loaded || state.all.length ? `No prompt matches /${state.query ?? ""}.` : "Asking the servers for their prompts…";
      rows.push(this.note(state.loaded && !state.all.length && !state.errors.length ? "No MCP server of this chat offers prompts." : none));
    } else if (!state.loaded) rows.push(this.note("Asking the servers again…"));
    for (const error of state.errors) rows.push(this.note(`${error.server || "A server"} could not list its prompts: ${error.message}`, true));
    this.el.replaceChildren(...rows);
    const selected = state.items.length ? (this.el.children[state.selected] as HTMLElement | undefined) : undefined;
    this.input.setAttribute("aria-activedescendant", selected?.id ?? "");
    selected?.scrollIntoView?.({ block: "nearest" });
  }

  private option(item: PromptItem, index: number, selected: boolean): HTMLElement {
    const li = h("li", "aiw-prompt-option");
    li.id = `${this.id}-${index}`;
    li.dataset.name = item.name;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", String(selected));
    const about = [item.title, item.description].filter(Boolean).join(": ");
    li.append(h("span", "aiw-prompt-label", `/${item.name}`), h("span", "aiw-prompt-about", about || item.server));
    li.title = [about, `from ${item.server}`].filter(Boolean).join("\n");
    // mousedown, not click: the input keeps its focus and caret.
    li.addEventListener("mousedown", (ev) => {
      ev.preventDefault();
      this.onPick(index);
    });
    return li;
  }

  private note(text: string, error = false): HTMLElement {
    const li = h("li", `aiw-prompt-note${error ? " aiw-prompt-error" : ""}`, text);
    li.setAttribute("role", "presentation");
    return li;
  }
}

/** The form of a chosen prompt's arguments, above the input box. */
export class PromptForm {
  readonly el = h("div", "aiw-prompt-form");
  private readonly form: EditForm;
  private readonly sendButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly problem = h("p", "aiw-prompt-problem");
  /** The id of the send that waits for the kernel's answer (null: none). */
  waitingFor: string | null = null;

  constructor(
    readonly item: PromptItem,
    private readonly onSend: (args: Record<string, string>) => void,
    private readonly onCancel: () => void,
  ) {
    this.el.setAttribute("role", "group");
    this.el.setAttribute("aria-label", `Arguments of the prompt /${item.name}`);
    const head = h("p", "aiw-prompt-head");
    head.append(h("span", "aiw-prompt-name", `/${item.name}`));
    if (item.title) head.append(h("span", "aiw-prompt-title", item.title));
    head.append(h("span", "aiw-prompt-server", `from ${item.server}`));
    this.el.append(head);
    if (item.description) this.el.append(h("p", "aiw-prompt-description", item.description));
    this.form = new EditForm(promptSchema(item), {}, { onSubmit: () => this.submit() });
    this.sendButton = button("aiw-btn aiw-btn-primary aiw-prompt-send", "Send", () => this.submit());
    this.sendButton.title = "Render the prompt and send it (Enter in a field)";
    this.cancelButton = button("aiw-btn aiw-prompt-cancel", "Cancel", () => this.onCancel());
    this.cancelButton.title = "Close the form (Escape); the input box keeps its text";
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape") return;
      ev.preventDefault(); // the form's Escape, not the notebook's
      ev.stopPropagation();
      this.onCancel();
    });
    const actions = h("div", "aiw-approval-actions aiw-prompt-actions");
    actions.append(this.sendButton, this.cancelButton);
    this.problem.setAttribute("role", "alert");
    this.problem.hidden = true;
    this.el.append(this.form.el, actions, this.problem);
  }

  /** Checks the fields and sends the arguments (not while a send waits, or a field says what is wrong). */
  submit(): void {
    if (this.waitingFor !== null) return;
    const values = this.form.value();
    if (!values) return;
    const args = promptArguments(values);
    // A required argument left blank is not given (MCP's required): said at its field, nothing sent.
    const missing = Object.fromEntries(this.item.arguments.filter((a) => a.required && !(a.name in args)).map((a) => [a.name, "Required."]));
    this.form.showFieldErrors(missing);
    if (Object.keys(missing).length) return;
    this.showProblem("");
    this.onSend(args);
  }

  /** A send went out (`id`) or its answer came (null): the form waits, or takes typing again. */
  setWaiting(id: string | null): void {
    this.waitingFor = id;
    setDisabled(this.sendButton, id !== null);
    setText(this.sendButton, id !== null ? "Sending…" : "Send");
    this.form.setDisabled(id !== null);
    this.el.setAttribute("aria-busy", String(id !== null));
  }

  /** The kernel refused the send: its problems at their fields, else its message under the form; what was typed
   * stays. */
  refused(message: string, fields?: Record<string, string>): void {
    this.setWaiting(null);
    const atFields = fields ?? {};
    this.form.showFieldErrors(atFields);
    this.showProblem(Object.keys(atFields).length ? "" : message);
  }

  focusFirst(): void {
    if (this.item.arguments.length) this.form.focusFirst();
    else this.sendButton.focus();
  }

  private showProblem(text: string): void {
    setText(this.problem, text);
    setHidden(this.problem, !text);
  }
}
