// One card per tool call: header (toggle with icon, title, args summary; risk, edited, state, elapsed, Cancel),
// then the arguments (a JSON view that grows by patches; code arguments as code), the edited arguments it ran with,
// the approval prompt,
// the decision, the question its server asks the person (awaiting_input) and what they answered, a progress bar,
// the server's log lines, the result, and the tool's MCP App (shown collapsed too, below the header; its text form
// stays). Updates compare against what is shown and touch only what changed.

import { button, h, setAttr, setDisabled, setHidden, setText, toggleClass } from "../dom";
import { RISK_LABELS, stateLabel, summarizeArgs } from "../format";
import type { ArgPatch, JsonObject, OutgoingMessage, Part, ToolCallPart, ToolInfo } from "../types";
import { inputRequestOf } from "../asking";
import { addOpeners } from "./resourceopen";
import { AppFrame, type AppPageInfo } from "./appframe";
import { ApprovalBox } from "./approval";
import { CallLog } from "./calllog";
import { InputBox, answeredText } from "./inputbox";
import { CancelButton, EditedArguments } from "./controls";
import { CellActions } from "./cellactions";
import { cellOf } from "./cellrun";
import { CardArguments } from "./cardargs";
import { CallViewSection, callHeading } from "./callview";
import { otherArguments } from "./codeargs";
import { codeArguments } from "./codeform";
import { focusFree } from "./keys";
import type { PartView } from "./parts";
import { ProgressBar } from "./progress";
import type { WidgetHost } from "../widgets";
import { disposeDisplays } from "./display";
import { outcomeDisplay, renderAfterStop, renderOutcome } from "./result";
import { decisionText, outcomeLine, runTime, whoAllowed } from "./verdict";

/** The states a call ends in: its log then moves into the body (seen when the card is opened). */
const ENDED = new Set(["completed", "failed", "rejected", "cancelled", "skipped"]);

export interface CardContext {
  send(msg: OutgoingMessage): void;
  toolInfo(name: string): ToolInfo | undefined;
  collapseByDefault(): boolean;
  /** Register / unregister a card whose elapsed time ticks (running). */
  setTicking(card: ToolCardView, on: boolean): void;
  /** Register / unregister a card with an open approval prompt or Cancel button (re-enabled on a kernel error). */
  setPrompting(card: ToolCardView, on: boolean): void;
  now(): number; // seconds since the epoch
  /** "Run again" on a finished call: a form below the chat with its arguments (absent: no such button). */
  runAgain?: (callId: string) => void;
  /** Shown in the header instead of the tool's icon and title (a bench entry's latest run: its entry has them). */
  heading?: string;
  /** The host's widget manager, for results that are ipywidgets (absent: their text shows). */
  widgets?: WidgetHost | null;
  /** The page of a tool's MCP App, as the `apps` trait has it (absent: apps are not shown here). */
  appPage?: (toolName: string) => AppPageInfo | undefined;
  /** What Undo put back, for a call whose run was undone (the `_undone` trait); absent: none was. */
  undone?: (callId: string) => string | undefined;
}

const FINISHED = new Set(["completed", "failed", "rejected", "cancelled", "skipped"]);

export class ToolCardView implements PartView {
  readonly kind = "tool_call" as const;
  readonly el = h("div", "aiw-part aiw-tool-card");
  private readonly toggle = h("button", "aiw-tool-toggle");
  private readonly icon = h("span", "aiw-tool-icon");
  private readonly title = h("span", "aiw-tool-title");
  private readonly summary = h("span", "aiw-tool-summary");
  private readonly location = h("span", "aiw-tool-location"); // the first file an agent's call touches
  private readonly callKind = h("span", "aiw-badge aiw-call-kind"); // what sort of call an agent says it is
  private readonly risk = h("span", "aiw-badge aiw-risk");
  private readonly provider = h("span", "aiw-badge aiw-provider", "provider");
  private readonly state = h("span", "aiw-badge aiw-state");
  // Who let the call run, one of the three at most (verdict's whoAllowed): seen collapsed.
  private readonly allowed = h("span", "aiw-badge aiw-allowed-by-you", "allowed by you");
  private readonly remembered = h("span", "aiw-badge aiw-remembered", "allowed always");
  private readonly unasked = h("span", "aiw-badge aiw-unasked", "ran without asking");
  private readonly outcomeLine = h("div", "aiw-tool-outcome-line"); // a failure's message: shown collapsed too
  private readonly afterStop = h("div", "aiw-tool-after-stop"); // its thread after the call ended: collapsed too
  private readonly elapsed = document.createTextNode("");
  private readonly body = h("div", "aiw-tool-body");
  private readonly args: CardArguments;
  private readonly edited = new EditedArguments();
  private readonly cancel: CancelButton;
  private readonly cellActions: CellActions; // Copy, Insert as cell, Undo on a finished code call
  private readonly decision = h("div", "aiw-decision");
  private readonly prompt = h("div", "aiw-tool-prompt"); // the approval prompt
  private readonly asking = h("div", "aiw-tool-asking"); // the server's question to the person
  private readonly answered = h("div", "aiw-input-answered"); // what the person answered: shown collapsed too
  private readonly progressSlot = h("div", "aiw-tool-progress"); // shown collapsed too
  private readonly result = h("div", "aiw-tool-result-slot");
  private readonly display = h("div", "aiw-tool-display-slot"); // what the result displays: shown collapsed too
  private readonly actions = h("div", "aiw-tool-actions");
  private readonly appSlot = h("div", "aiw-tool-app-slot"); // the tool's MCP App: shown collapsed too
  private runAgain: HTMLButtonElement | null = null;
  private app: AppFrame | null = null;
  private appAsked = false;
  private approval: ApprovalBox | null = null;
  private approvalAsked: number | null = null; // approval_requested_at of the wait the box decides
  private inputBox: InputBox | null = null;
  private shownRequest = "";
  private progress: ProgressBar | null = null;
  private readonly log = new CallLog(null); // shown collapsed too while the call runs, in the body after
  private part: ToolCallPart;
  private expanded: boolean;
  private shownOutcome: string | null = null;
  private shownDisplay = "";
  private shownAfterStop = "";
  private resultStale = false; // the result slot lags the outcome (collapsed since it changed)
  private ticking = false;
  private prompting = false;
  private readonly callView = new CallViewSection();

  constructor(
    part: ToolCallPart,
    private readonly ctx: CardContext,
  ) {
    this.part = part;
    this.expanded = !ctx.collapseByDefault();
    this.el.dataset.callId = part.tool_call_id;
    this.toggle.type = "button";
    this.toggle.append(this.icon, this.title, this.location, this.summary);
    this.toggle.addEventListener("click", () => {
      this.expanded = !this.isExpanded();
      this.renderExpanded();
    });
    const elapsed = h("span", "aiw-elapsed");
    elapsed.append(this.elapsed);
    const header = h("div", "aiw-tool-header");
    this.cancel = new CancelButton(part.tool_call_id, (msg) => ctx.send(msg));
    this.cellActions = new CellActions(part.tool_call_id, (msg) => ctx.send(msg));
    elapsed.title = "How long it ran";
    header.append(this.toggle, this.callKind, this.risk, this.provider, this.edited.badge, this.cellActions.badge, this.allowed, this.remembered, this.unasked, this.state, elapsed);
    header.append(this.cancel.el);
    // A collapsed card builds its arguments and result when first opened: a long conversation renders fast.
    this.args = new CardArguments(() => this.part, () => this.codeNames());
    this.body.append(this.callView.el, this.args.el, this.edited.el, this.prompt, this.asking, this.decision, this.result, this.cellActions.el, this.actions);
    const runAgain = ctx.runAgain;
    if (runAgain) {
      const again = button("aiw-btn aiw-btn-small aiw-run-again", "Run again", () => {
        // One entry per click: a double click does not open two.
        setDisabled(again, true);
        setTimeout(() => setDisabled(again, false), 800);
        runAgain(this.part.tool_call_id);
      });
      again.title = "Run this call again by hand, with its arguments in a form below the chat (the conversation is not changed)";
      this.runAgain = again;
      this.actions.append(again);
    }
    this.body.id = `aiw-${Math.random().toString(36).slice(2)}`;
    this.toggle.setAttribute("aria-controls", this.body.id);
    this.outcomeLine.hidden = true;
    this.display.hidden = true;
    this.answered.hidden = true;
    this.el.append(header, this.progressSlot, this.log.el, this.answered, this.outcomeLine, this.afterStop, this.body, this.display);
    this.appSlot.hidden = true;
    this.display.after(this.appSlot);
    this.update(part);
  }

  private isExpanded(): boolean {
    return this.expanded || this.part.state === "awaiting_approval" || this.part.state === "awaiting_input";
  }

  /** Full update from a (possibly new) part object. */
  update(part: Part): void {
    const previous = this.part;
    this.part = part as ToolCallPart;
    if (previous !== part && JSON.stringify(previous.parsed_arguments) !== JSON.stringify(this.part.parsed_arguments)) {
      this.args.changed(null, this.isExpanded());
    }
    this.callView.update(this.part.view);
    this.updateInfo();
    this.updateCall();
    this.updateSummary();
  }

  /** The arguments changed by `patches` (null: re-render from the value). */
  updateArgs(part: ToolCallPart, patches: ArgPatch[] | null): void {
    this.part = part;
    this.args.changed(patches, this.isExpanded());
    this.updateSummary();
    this.updateApp();
  }

  /** Title, icon and risk from the `tools` trait; an agent's own title for the call (its view's), with its kind and
   * first file, in their place where it gives one (the tool's name then in the title's tooltip). */
  updateInfo(): void {
    const info = this.ctx.toolInfo(this.part.tool_name);
    const toolIcon = (typeof info?.icon === "string" && info.icon) || "🔧";
    const heading = this.ctx.heading ? null : callHeading(this.part.view);
    setText(this.icon, this.ctx.heading ? "" : (heading?.icon ?? toolIcon));
    setAttr(this.icon, "title", heading?.kind ?? null);
    setText(this.title, this.ctx.heading ?? heading?.title ?? this.toolTitle());
    setAttr(this.title, "title", heading ? `Tool: ${this.toolTitle()}` : null);
    setText(this.callKind, heading?.kind ?? "");
    setHidden(this.callKind, !heading?.kind);
    setAttr(this.callKind, "data-kind", heading?.kind ?? null);
    setText(this.location, heading?.location ?? "");
    setHidden(this.location, !heading?.location);
    setAttr(this.location, "title", heading?.locations ?? null);
    this.args.infoChanged(this.isExpanded()); // the tool's info came: its code arguments show as code
    const risk = typeof info?.risk === "string" ? info.risk : null;
    setHidden(this.risk, !risk);
    setAttr(this.risk, "data-risk", risk);
    setText(this.risk, risk ? (RISK_LABELS[risk] ?? risk) : "");
    this.updateRunAgain();
    this.updateCellActions();
    this.updateApp();
  }

  /** Copy, Insert as cell and Undo: the code as it ran (the cell's, else the code argument it ran with). */
  private updateCellActions(): void {
    const p = this.part;
    const cell = cellOf(p.outcome);
    const args = this.ranWith();
    const name = Object.keys(this.codeNames()).find((n) => typeof args[n] === "string");
    const code = cell ? cell.code : name ? (args[name] as string) : null;
    this.cellActions.update(p, cell, code, this.ctx.undone?.(p.tool_call_id));
  }

  /** The tool's MCP App: its frame once the page is there (asked of the kernel once), fed the call's state. */
  private updateApp(): void {
    const info = this.ctx.toolInfo(this.part.tool_name);
    const uri = typeof info?.app === "string" && info.app.startsWith("ui://") ? info.app : null;
    if (!uri || !this.ctx.appPage || this.part.provider_executed) return;
    const page = this.ctx.appPage(this.part.tool_name);
    if (!this.app) {
      this.app = new AppFrame(this.part.tool_call_id, (msg) => this.ctx.send(msg), () => ({
        name: this.part.tool_name,
        info: this.ctx.toolInfo(this.part.tool_name),
      }));
      this.appSlot.append(this.app.el);
      this.appSlot.hidden = false;
    }
    if (!page || page.uri !== uri) {
      if (!this.appAsked) {
        this.appAsked = true;
        this.ctx.send({ type: "app_open", tool_call_id: this.part.tool_call_id });
      }
      return;
    }
    this.app.setPage(page);
    this.app.update(this.part.state, this.ranWith() as JsonObject, this.part.outcome);
  }

  private toolTitle(): string {
    const info = this.ctx.toolInfo(this.part.tool_name);
    return (typeof info?.title === "string" && info.title) || this.part.tool_name;
  }

  /** Run again: on a finished call of a tool the kernel has (not one the provider ran). */
  private updateRunAgain(): void {
    if (!this.runAgain) return setHidden(this.actions, true);
    const p = this.part;
    const shown = FINISHED.has(p.state) && !p.provider_executed && this.ctx.toolInfo(p.tool_name)?.parameters !== undefined;
    setHidden(this.actions, !shown);
  }

  /** State, decision, approval prompt, progress, outcome, elapsed. */
  updateCall(): void {
    const p = this.part;
    setAttr(this.el, "data-state", p.state);
    setAttr(this.state, "data-state", p.state);
    setText(this.state, stateLabel(p.state));
    setHidden(this.provider, !p.provider_executed);
    const code = this.codeNames();
    const edited = this.edited.update(p.edited_arguments, (args) => otherArguments(args, code));
    this.args.callChanged(!!edited, this.isExpanded());
    // An agent's edit shows as its diff, a command as its terminal: their arguments (the path and the whole new
    // text, the command and its directory) would say it again.
    setHidden(this.args.el, !!p.view?.content?.some((item) => item.type === "diff" || item.type === "terminal"));
    this.cancel.update(p.state);
    this.renderExpanded();

    // The approval prompt: exactly while the call waits.
    if (p.state === "awaiting_approval") {
      const question = p.approval_reason || `Allow ${this.toolTitle()}?`;
      // Each wait for a decision gets its own box: a running call's server may ask (sampling) right after the
      // call was allowed, before a frame showed it running, and the old box's buttons are spent.
      if (this.approval && this.approvalAsked !== p.approval_requested_at) {
        this.approval.el.remove();
        this.approval = null;
      }
      this.approvalAsked = p.approval_requested_at ?? null;
      if (!this.approval) {
        // Waiting while it runs: its server asks to use the model (sampling), allowed or declined as asked, no Edit.
        // Nor for a call its agent describes (ACP): the protocol has no room for changed arguments.
        const sampling = p.run_started_at != null;
        this.approval = new ApprovalBox(
          p.tool_call_id,
          (msg) => this.ctx.send(msg),
          question,
          sampling || p.view
            ? undefined
            : {
                schema: () => this.ctx.toolInfo(this.part.tool_name)?.parameters,
                values: () => this.part.parsed_arguments,
                code: () => this.codeNames(),
              },
          !p.view,
        );
        this.prompt.append(this.approval.el);
        const box = this.approval;
        // After this flush has put the card into the document; never take the focus from typing, nor from the
        // notebook (it is announced, and one Tab from the input box).
        queueMicrotask(() => box === this.approval && box.el.isConnected && focusFree(box.el) && box.focusFirst());
      } else {
        this.approval.setQuestion(question);
      }
    } else if (this.approval) {
      this.approval.el.remove();
      this.approval = null;
    }
    this.updateAsking();
    const prompting = this.approval !== null || this.inputBox !== null || this.cancel.visible;
    if (prompting !== this.prompting) {
      this.prompting = prompting;
      this.ctx.setPrompting(this, prompting);
    }

    this.updateRunAgain();
    this.updateCellActions();

    const decided = decisionText(p);
    setText(this.decision, decided);
    setAttr(this.decision, "data-decision", p.decision ?? null);
    setHidden(this.decision, !decided);
    const who = whoAllowed(p);
    for (const [kind, badge] of [["you", this.allowed], ["always", this.remembered], ["unasked", this.unasked]] as const) {
      const shown = who?.kind === kind;
      setHidden(badge, !shown);
      if (shown && badge.title !== who.title) badge.title = who.title;
    }

    if (p.state === "running") {
      if (!this.progress) {
        this.progress = new ProgressBar(p.progress);
        this.progressSlot.append(this.progress.el);
      } else {
        this.progress.update(p.progress);
      }
    } else if (this.progress) {
      this.progress.el.remove();
      this.progress = null;
    }

    this.log.update(p.log_lines);
    const ended = ENDED.has(p.state);
    if (ended && this.log.el.parentElement !== this.body) this.body.insertBefore(this.log.el, this.result);
    else if (!ended && this.log.el.parentElement !== this.el) this.progressSlot.after(this.log.el);

    const outcome = p.outcome ? JSON.stringify(p.outcome) + p.state : null;
    if (outcome !== this.shownOutcome) {
      this.shownOutcome = outcome;
      const line = outcomeLine(p);
      setText(this.outcomeLine, line?.text ?? "");
      setAttr(this.outcomeLine, "data-kind", line?.kind ?? null);
      setHidden(this.outcomeLine, !line);
      const cell = p.outcome?.cell ?? null; // code run as a cell: its outputs show collapsed too
      const display = p.outcome?.status === "success" || cell ? JSON.stringify([p.outcome?.display ?? null, cell?.outputs ?? null, cell?.stopped_at ?? null]) : "";
      if (display !== this.shownDisplay) {
        this.shownDisplay = display; // a state change alone keeps the shown display (and a live widget's view)
        this.renderDisplay();
      }
      this.resultStale = true;
    }
    if (this.resultStale && this.isExpanded()) this.renderResult();

    const afterStop = p.stopping === true || p.late ? JSON.stringify([p.stopping === true, p.late ?? null]) : "";
    if (afterStop !== this.shownAfterStop) {
      this.shownAfterStop = afterStop;
      const shown = renderAfterStop(p);
      this.afterStop.replaceChildren(...(shown ? [shown] : []));
    }

    const running = p.state === "running" && typeof p.run_started_at === "number";
    if (running !== this.ticking) {
      this.ticking = running;
      this.ctx.setTicking(this, running);
    }
    this.tick();
    this.updateApp();
  }

  /** The server's question while the call waits for input (a new question: a new form); once it stops waiting,
   * the compact line of what the person answered from this view. */
  private updateAsking(): void {
    const p = this.part;
    const request = p.state === "awaiting_input" ? inputRequestOf(p.input_request) : null;
    const key = request ? JSON.stringify(request) : "";
    if (key !== this.shownRequest) {
      this.shownRequest = key;
      const answer = this.inputBox?.answer ?? null;
      this.inputBox?.el.remove();
      this.inputBox = null;
      if (answer) {
        setText(this.answered, answeredText(answer) ?? "");
        setAttr(this.answered, "data-action", answer.action);
      }
      if (request) {
        const box = new InputBox(p.tool_call_id, (msg) => this.ctx.send(msg), request);
        this.inputBox = box;
        this.asking.append(box.el);
        setText(this.answered, "");
        queueMicrotask(() => box === this.inputBox && box.el.isConnected && focusFree(box.el) && box.focusFirst());
      }
      setHidden(this.answered, !this.answered.textContent);
    }
  }

  /** Updates only the elapsed-time text node: how long the call ran (the wait for a decision is not counted). */
  tick(): void {
    const text = runTime(this.part, this.ctx.now());
    if (this.elapsed.data !== text) this.elapsed.data = text;
  }

  /** The approval prompt, if open, the question's answer buttons and the Cancel button: re-enabled when the kernel
   * refuses an action; whether this card showed the refusal itself (an answer to its question). */
  enablePrompt(message?: string, callId?: string, fields?: Record<string, string>): boolean {
    this.approval?.refused(message);
    const mine = callId === undefined ? !!message?.includes("'respond'") : callId === this.part.tool_call_id;
    const shown = mine && !!this.inputBox?.refused(message, fields);
    this.cancel.enable();
    return shown; // the card showed the message: the view need not
  }

  private renderResult(): void {
    this.resultStale = false;
    const p = this.part;
    disposeDisplays(this.result);
    const outcome = p.outcome
      ? renderOutcome(p.outcome, p.state, !!outcomeLine(p), this.ctx.widgets ?? null, false)
      : null;
    this.result.replaceChildren(...(outcome ? [outcome] : []));
    if (outcome) addOpeners(outcome, p.tool_call_id, (msg) => this.ctx.send(msg));
  }

  /** A figure, table or widget the result displays: built when the outcome arrives (not when the card is first
   * opened), because it is what the person wants to see of a plotting tool's card, collapsed or not. */
  private renderDisplay(): void {
    disposeDisplays(this.display);
    const p = this.part;
    const shown = p.outcome ? outcomeDisplay(p.outcome, this.ctx.widgets ?? null) : null;
    this.display.replaceChildren(...(shown ? [shown] : []));
    setHidden(this.display, !shown);
    this.placeDisplay();
  }

  /** A code run's outputs read as a notebook cell's: open, right under its code and the decision, before what it
   * changed and its buttons; closed, under the header. Any other tool's display stays under the body. */
  private placeDisplay(): void {
    const inBody = this.isExpanded() && cellOf(this.part.outcome) !== null;
    if (inBody && this.display.nextSibling !== this.result) this.body.insertBefore(this.display, this.result);
    else if (!inBody && this.display.previousSibling !== this.body) this.body.after(this.display);
  }

  private renderExpanded(): void {
    const open = this.isExpanded();
    if (open) this.args.shown();
    if (open && this.resultStale) this.renderResult();
    setAttr(this.toggle, "aria-expanded", String(open));
    toggleClass(this.el, "aiw-collapsed", !open);
    setHidden(this.body, !open);
    this.placeDisplay();
    this.updateSummary();
  }

  /** The one-line args summary, kept current only while collapsed (where it shows); it follows a string that is
   * still streaming. The JSON view shows the newest lines of long strings while the arguments stream. */
  private updateSummary(): void {
    const live = this.part.state === "streaming";
    this.args.setLive(live);
    if (!this.isExpanded()) setText(this.summary, summarizeArgs(this.ranWith(), 80, live));
  }

  /** The tool's code arguments (name -> language), from its info. */
  private codeNames(): Record<string, string> {
    return this.part.provider_executed ? {} : codeArguments(this.ctx.toolInfo(this.part.tool_name));
  }

  /** The arguments the call runs with: the person's edit, else the model's. */
  private ranWith(): ToolCallPart["parsed_arguments"] {
    const edited = this.part.edited_arguments;
    return edited && typeof edited === "object" && !Array.isArray(edited) ? edited : this.part.parsed_arguments;
  }

  destroy(): void {
    this.app?.destroy();
    this.cellActions.destroy();
    disposeDisplays(this.result);
    disposeDisplays(this.display);
    if (this.ticking) this.ctx.setTicking(this, false);
    if (this.prompting) this.ctx.setPrompting(this, false);
  }
}
