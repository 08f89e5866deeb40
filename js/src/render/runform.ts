// The form of a tool run by hand: the schema's fields (defaults filled in), Run, and the kernel's answer: each
// problem at its field in the words the model would be told, or one that is no field's under the form.

import { button, h, setDisabled, setText } from "../dom";
import type { Json, JsonObject } from "../types";
import { EditForm } from "./editform";

export class RunForm {
  readonly el = h("div", "aiw-run-form");
  readonly form: EditForm;
  private readonly runButton: HTMLButtonElement;
  private readonly problem = h("p", "aiw-run-error");
  private running = false;
  private asking = false; // the run waits for a person's approval
  private waiting = false; // a Run was sent, the kernel has not answered yet
  /** The arguments of the last Run sent, as JSON (the kernel echoes them in the entry: not new to this form). */
  sent = "";

  constructor(
    schema: Json | undefined,
    values: JsonObject,
    private readonly onRun: (args: JsonObject) => void,
  ) {
    this.form = new EditForm(schema, values, { defaults: true, onSubmit: () => this.run() });
    this.runButton = button("aiw-btn aiw-btn-primary aiw-run", "Run", () => this.run());
    this.runButton.title = "Run the tool with these arguments (Enter in a field)";
    this.problem.setAttribute("role", "alert");
    this.problem.hidden = true;
    const actions = h("div", "aiw-run-actions");
    actions.append(this.runButton, this.problem);
    this.el.append(this.form.el, actions);
  }

  /** Checks the fields and sends the arguments (nothing is sent while a field is invalid or a run goes on). */
  run(): void {
    if (this.running || this.waiting) return;
    const args = this.form.value();
    if (!args) {
      this.showProblem("");
      return;
    }
    this.waiting = true;
    this.sent = JSON.stringify(args);
    this.update();
    this.onRun(args);
  }

  /** The kernel answered a Run (or the entry changed): its problems with the arguments, at their fields. */
  answered(errors: Record<string, string>, problem: string | null): void {
    this.waiting = false;
    this.form.showFieldErrors(errors);
    this.showProblem(problem ?? "");
    this.update();
  }

  /** The kernel refused the Run outright (an error message). */
  refused(): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.update();
  }

  /** A run goes on (`asking`: it waits for approval, on its card below). */
  setRunning(running: boolean, asking = false): void {
    this.running = running;
    this.asking = running && asking;
    this.update();
  }

  get pending(): boolean {
    return this.waiting;
  }

  private showProblem(text: string): void {
    setText(this.problem, text);
    this.problem.hidden = !text;
  }

  private update(): void {
    setDisabled(this.runButton, this.running || this.waiting);
    setText(this.runButton, this.asking ? "Waiting for approval…" : this.running ? "Running…" : "Run");
    this.el.setAttribute("aria-busy", String(this.running || this.waiting));
  }
}
