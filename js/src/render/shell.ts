// The chat shell: kernel-error banners, the message list, the turn banner (error / limit + Continue),
// suggestion chips, the allowed-always list, the input with Send / Stop, the "Run code without asking" switch, and
// the usage line. While a turn runs the input still sends: the message steers that turn (queued for its next step).

import { button, h, setAttr, setDisabled, setHidden, setText } from "../dom";
import { formatUsage, hasUsage, priceUnknown } from "../format";
import { CompletionState, completionItems, insertMention, mentionEndedAt } from "../mention";
import { type PromptItem, SlashState, promptErrors, promptItems } from "../slash";
import type { OutgoingMessage, ToolInfo, Usage } from "../types";
import { CompletionList, InputChips } from "./attachments";
import { Follower } from "./follow";
import { ApprovalKeys, FOCUSABLE, RovingGroup, focusApproval, leaveToNotebook, waitingApprovals } from "./keys";
import { watchWidth } from "./narrow";
import { PendingSends } from "./pending";
import { PromptForm, PromptList } from "./prompts";
import { QueuedList } from "./queued";
import { UnaskedSwitch } from "./unasked";

const MAX_KERNEL_BANNERS = 3;
/** How long a send with attachments waits for the kernel's answer before Send is enabled again. */
const PENDING_SEND_MS = 60_000;

/** Keys that belong to the application, not to a cell: Ctrl/Cmd chords other than Ctrl/Cmd+Enter (run the cell),
 * and Escape. */
export function isAppShortcut(ev: KeyboardEvent): boolean {
  if (ev.key === "Escape") return true;
  return (ev.ctrlKey || ev.metaKey) && ev.key !== "Enter" && ev.key !== "Control" && ev.key !== "Meta";
}

export class Shell {
  readonly root = h("div", "aiw");
  readonly list = h("div", "aiw-messages");
  /** The last child of the list (messages are inserted before it). */
  readonly anchor = h("div", "aiw-anchor");
  /** Keeps the list at its end while content grows, until the person scrolls up ("Jump to latest"). */
  readonly follower = new Follower(this.list);
  /** Messages sent from the input box that the kernel has not taken yet (after the last message). */
  readonly pending = new PendingSends(() => this.updateEmpty());
  /** Messages sent while the turn runs that wait for its next tool boundary (the `_queued` trait). */
  readonly queued = new QueuedList();
  /** "Run code without asking", in the footer. */
  readonly unasked: UnaskedSwitch;
  /** What an empty chat says (hidden once there is a message). */
  private readonly emptyNote = h("div", "aiw-empty");
  private readonly emptyTools = h("p", "aiw-empty-tools");
  /** After New chat: where the conversation before it went. */
  private readonly emptyKept = h("p", "aiw-empty-kept");
  /** New chat: a fresh conversation, the one so far kept as an earlier branch (shown once there are messages). */
  private readonly newChatButton: HTMLButtonElement;
  private hasMessages = false;
  /** Said to screen readers: an approval that appeared. */
  private readonly announcer = h("div", "aiw-announce");
  private readonly groups: RovingGroup[] = [];
  private readonly approvals: ApprovalKeys;
  private readonly unwatchWidth: () => void;
  private readonly kernelBanners = h("div", "aiw-kernel-banners");
  private readonly suggestions = h("div", "aiw-suggestions");
  private readonly allowed = h("div", "aiw-allowed");
  readonly input = h("textarea", "aiw-input");
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly usage = h("div", "aiw-usage");
  /** `@name`: the completion list's state and view, the chips of the names attached, and a send with chips that
   * waits for the kernel's answer (the text and chips stay until it takes the message). */
  private readonly mentions = new CompletionState();
  private readonly mentionList: CompletionList;
  readonly chips: InputChips;
  /** `/`: the list of the MCP servers' prompts, the form of the one chosen, and its send waiting for the kernel
   * (the input's text and the form stay until it answers "sent"; a refusal shows in the form). */
  private readonly slash = new SlashState();
  private readonly promptList: PromptList;
  private readonly promptBox = h("div", "aiw-prompt-box");
  private promptForm: PromptForm | null = null;
  private pendingPrompt: { id: string; text: string } | null = null;
  private describeRequest = 0;
  private sendCount = 0;
  /** Tells this view's sends from another view's (the kernel's answers go to every view of the widget). */
  private readonly viewTag = Math.random().toString(36).slice(2, 10);
  private pendingSend: { id: string; text: string } | null = null;
  private busy = false;
  private shownSuggestions = "";
  private shownAllowed = "";

  constructor(private readonly send: (msg: OutgoingMessage) => boolean) {
    this.list.setAttribute("role", "log");
    this.list.setAttribute("aria-label", "Conversation");
    this.list.setAttribute("aria-live", "off");
    this.list.append(this.pending.el, this.queued.el, this.anchor);
    this.unasked = new UnaskedSwitch(send);
    this.announcer.setAttribute("role", "status");
    this.announcer.setAttribute("aria-live", "polite");
    this.emptyNote.append(
      h("p", "aiw-empty-title", "Ask anything: type below and press Enter."),
      this.emptyKept,
      this.emptyTools,
      h("p", "aiw-empty-keys", "Shift+Enter: new line · Tab: a waiting approval · Esc: back to the notebook"),
    );
    this.emptyTools.hidden = true;
    this.emptyKept.hidden = true;
    this.newChatButton = button("aiw-btn aiw-btn-small aiw-new-chat", "New chat", () => this.newChat());
    this.newChatButton.title = "Start a fresh conversation; this one is kept, and its first message's ‹ › switches back";
    this.newChatButton.hidden = true;

    this.input.rows = 2;
    this.input.setAttribute("aria-label", "Message");
    // No key pressed in the widget may reach the notebook's shortcuts: Shift+Enter would re-run this cell and wipe
    // the chat, "d d" in command mode would delete it. Application shortcuts (Ctrl/Cmd+S to save, the command
    // palette) and Escape still work. Lumino (JupyterLab, Notebook 7) matches key bindings from the target up and
    // stops at the suppress attribute, even where it listens in the capture phase: the attribute is set or lifted
    // per key by a window capture listener, which runs before Lumino's. Other hosts get the event stopped here.
    window.addEventListener("keydown", this.gateKeys, true);
    this.root.addEventListener("keydown", (ev) => {
      if (!this.isForApp(ev)) ev.stopPropagation();
      // Escape leaves the widget to the notebook's command mode (Escape, then `b` adds a cell), unless something
      // in the widget used it (a completion list, an edit in place: they prevent its default).
      else if (ev.key === "Escape" && !ev.defaultPrevented && !ev.shiftKey && !ev.ctrlKey && !ev.metaKey && !ev.altKey) leaveToNotebook(this.root);
    });
    this.input.addEventListener("keydown", (ev) => {
      if (ev.isComposing || ev.keyCode === 229) return; // never while an IME composes (229: older engines)
      const plain = !(ev.shiftKey || ev.altKey || ev.ctrlKey || ev.metaKey);
      // The open `/` list takes ArrowUp/Down, Enter and Tab (with a prompt to choose) and Escape (which closes it).
      const chose = plain ? this.slash.key(ev.key) : null;
      if (chose !== null) {
        ev.preventDefault();
        if (chose === "close") ev.stopPropagation(); // not the notebook's Escape (command mode)
        if (chose === "accept") this.acceptPrompt(this.slash.selected);
        else this.renderPromptList();
        return;
      }
      // An open completion list takes ArrowUp/Down, Enter, Tab and Escape (which closes it, keeping the text).
      const done = plain ? this.mentions.key(ev.key) : null;
      if (done !== null) {
        ev.preventDefault();
        if (done === "close") ev.stopPropagation(); // not the notebook's Escape (command mode)
        if (done === "accept") this.acceptMention(this.mentions.selected);
        else this.mentionList.render(this.mentions);
        return;
      }
      // Tab goes to a waiting approval (one key away), else on to Send / Stop.
      if (ev.key === "Tab" && !ev.shiftKey && !ev.altKey && !ev.ctrlKey && !ev.metaKey && focusApproval(this.list)) {
        ev.preventDefault();
        return;
      }
      // Enter sends, Shift+Enter is a new line.
      if (ev.key !== "Enter" || ev.shiftKey) return;
      ev.preventDefault();
      this.submit();
    });
    // A file pasted (a screenshot, a copied file) is attached like `@name`; pasted text stays text.
    this.input.addEventListener("paste", (ev) => {
      const files = [...(ev.clipboardData?.files ?? [])];
      if (!files.length) return;
      ev.preventDefault();
      this.attachFiles(files);
    });
    // So is a file dropped anywhere on the chat.
    this.root.addEventListener("dragover", (ev) => {
      if (!this.takesFiles() || !ev.dataTransfer || ![...ev.dataTransfer.types].includes("Files")) return;
      ev.preventDefault();
      ev.dataTransfer.dropEffect = "copy";
      this.root.classList.add("aiw-drop-target");
    });
    this.root.addEventListener("dragleave", (ev) => {
      if (!(ev.relatedTarget instanceof Node && this.root.contains(ev.relatedTarget))) this.root.classList.remove("aiw-drop-target");
    });
    this.root.addEventListener("drop", (ev) => {
      this.root.classList.remove("aiw-drop-target");
      const files = [...(ev.dataTransfer?.files ?? [])];
      if (!files.length || !this.takesFiles()) return;
      ev.preventDefault();
      this.attachFiles(files);
    });
    this.input.addEventListener("input", () => {
      this.updateButtons();
      this.onMentionInput(true);
      this.onSlashInput();
    });
    // The caret moved without typing: the list follows the @token it is in, or closes.
    for (const name of ["click", "keyup"] as const) {
      this.input.addEventListener(name, (ev) => {
        if (name === "click" || ["ArrowLeft", "ArrowRight", "Home", "End"].includes((ev as KeyboardEvent).key)) {
          this.onMentionInput(false);
          this.onSlashInput();
        }
      });
    }
    this.input.addEventListener("blur", () => {
      this.mentions.close();
      this.mentionList.render(this.mentions);
      this.slash.close();
      this.renderPromptList();
    });
    this.mentionList = new CompletionList(this.input, (index) => this.acceptMention(index));
    this.promptList = new PromptList(this.input, (index) => this.acceptPrompt(index));
    this.promptBox.hidden = true;
    this.chips = new InputChips(() => {
      this.updateButtons(); // a removed file may have held the send
      this.input.focus();
    });
    this.sendButton = button("aiw-btn aiw-btn-primary aiw-send", "Send", () => this.submit());
    this.stopButton = button("aiw-btn aiw-btn-danger aiw-stop", "Stop", () => this.send({ type: "stop" }));
    const inputRow = h("div", "aiw-input-row");
    inputRow.append(this.input, this.sendButton, this.stopButton);

    this.suggestions.setAttribute("aria-label", "Suggestions");
    this.suggestions.hidden = true;
    this.allowed.hidden = true;
    this.usage.setAttribute("aria-live", "off");
    this.usage.hidden = true;
    const footer = h("div", "aiw-footer");
    // The list is in the flow, just above the input: an output area that clips what overflows it (JupyterLab's,
    // a new chat's small widget) cannot cut it off.
    const usageRow = h("div", "aiw-usage-row");
    usageRow.append(this.unasked.el, this.usage, this.newChatButton);
    footer.append(this.suggestions, this.allowed, this.chips.el, this.promptBox, this.promptList.el, this.mentionList.el, inputRow, usageRow);
    const listBox = h("div", "aiw-list-box");
    listBox.append(this.list, this.emptyNote, this.follower.jumpButton);
    this.root.append(this.kernelBanners, listBox, footer, this.announcer);
    // One tab stop each: the conversation (its newest message first; arrows reach every message and control in
    // it), the suggestions, the tools allowed always, the attached names.
    this.groups.push(new RovingGroup(this.list, { items: `.aiw-message, ${FOCUSABLE}`, stops: ".aiw-message", home: "last" }));
    for (const row of [this.suggestions, this.allowed, this.chips.el]) this.groups.push(new RovingGroup(row, { items: "button", home: "first" }));
    this.unwatchWidth = watchWidth(this.root);
    this.approvals = new ApprovalKeys(this.list, {
      focusInput: () => this.focusInput(),
      announce: (text) => setText(this.announcer, text),
    });
    this.updateButtons();
  }

  /** Focuses the input box where there is one (a turn's view has none: its conversation instead). */
  focusInput(): boolean {
    this.input.focus();
    return document.activeElement === this.input || this.groups[0].focus();
  }

  /** Whether an approval waits in this view (for tests and hosts). */
  get approvalWaiting(): boolean {
    return waitingApprovals(this.list).length > 0;
  }

  /** The empty chat's greeting: shown until the first message (or a message sent, not yet taken). */
  setEmpty(empty: boolean, toolTitles: string[]): void {
    this.hasMessages = !empty;
    if (!empty) setHidden(this.emptyKept, true); // said until the new chat's first message
    setText(this.emptyTools, toolTitles.length ? `It can use: ${toolTitles.join(", ")}.` : "");
    setHidden(this.emptyTools, toolTitles.length === 0);
    this.updateEmpty();
  }

  private updateEmpty(): void {
    setHidden(this.emptyNote, this.hasMessages || this.pending.size > 0);
    setHidden(this.newChatButton, !this.hasMessages);
  }

  /** New chat: the kernel starts a fresh conversation and answers `new_chat` (a turn that runs: refused). */
  private newChat(): void {
    if (this.busy || !this.hasMessages) return;
    this.send({ type: "new_chat" });
  }

  submit(text?: string): void {
    if (text === undefined && this.promptForm) return this.promptForm.submit(); // the chosen prompt's form sends
    const value = text ?? this.input.value;
    if ((this.busy && text !== undefined) || !value.trim() || this.pendingSend || this.pendingPrompt) return;
    const attach = text === undefined ? this.chips.names() : [];
    const files = text === undefined ? this.chips.files() : [];
    if (text === undefined && this.chips.filesProblem() !== null) return; // a file still read, or refused: its chip says
    // Every send has an id, which the kernel's answer ("sent", or an error) echoes.
    const id = `send-${this.viewTag}-${++this.sendCount}`;
    if (attach.length || files.length) {
      // The kernel converts the attachments first: the text and chips stay until it answers "sent" (or an error).
      this.pendingSend = { id, text: value };
      const sent = files.length ? { type: "send" as const, text: value, attach, files, id } : { type: "send" as const, text: value, attach, id };
      if (!this.send(sent)) this.pendingSend = null;
      // A kernel that never answers (it died meanwhile) must not leave Send disabled for good.
      else {
        this.pending.add(id, value);
        setTimeout(() => this.sendRefused(id), PENDING_SEND_MS);
      }
    } else if (this.send({ type: "send", text: value, id })) {
      // Shown at once, marked queued until the kernel takes it (a kernel running a cell takes it after that cell).
      this.pending.add(id, value);
      if (text === undefined) this.input.value = "";
    }
    this.updateButtons();
  }

  // ---- @name -------------------------------------------------------------------------------------------

  /** The text or caret changed: a whole `@name` ended by a space attaches it; the list follows the @token. */
  private onMentionInput(typed: boolean): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    if (typed && this.input.selectionEnd === caret) {
      const ended = mentionEndedAt(this.input.value, caret);
      if (ended !== null) this.attach(ended);
    }
    const ask = this.mentions.update(this.input.value, caret);
    if (ask) this.send({ type: "complete", prefix: ask.prefix, request: ask.request });
    this.mentionList.render(this.mentions);
  }

  private acceptMention(index: number): void {
    const item = this.mentions.items[index];
    const token = this.mentions.token;
    this.mentions.close();
    this.mentionList.render(this.mentions);
    if (!item || !token) return;
    const { text, caret } = insertMention(this.input.value, token, item.name);
    this.input.value = text;
    this.input.setSelectionRange(caret, caret);
    this.input.focus();
    this.updateButtons();
    this.attach(item.name);
  }

  /** Whether this view has an input box to attach files to (not the asking cell's view of one turn, a tool's form
   * alone, or a saved notebook without a kernel). */
  private takesFiles(): boolean {
    return !["aiw-turn", "aiw-bench-only", "aiw-offline"].some((c) => this.root.classList.contains(c));
  }

  /** Files pasted or dropped: a chip each, read in the background; Send waits until they are read. */
  attachFiles(files: File[]): void {
    if (!this.takesFiles()) return;
    this.chips.addFiles(files, () => this.updateButtons());
    this.input.focus();
  }

  /** Adds a chip for `name` and asks the kernel what it shows. */
  attach(name: string): void {
    if (this.chips.add(name)) this.send({ type: "describe", name, request: ++this.describeRequest });
  }

  // ---- /prompt -----------------------------------------------------------------------------------------

  /** The text or caret changed: the `/` list opens (asking the kernel for the prompts), follows the query, or
   * closes. */
  private onSlashInput(): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    const ask = this.slash.update(this.input.value, caret);
    if (ask) this.send({ type: "prompts", request: ask.request });
    this.renderPromptList();
  }

  private renderPromptList(): void {
    this.promptList.render(this.slash);
    if (!this.slash.open) this.input.setAttribute("aria-controls", this.mentionList.id);
  }

  /** A prompt chosen in the list: `/name` in the input; one with arguments opens its form, one without is sent. */
  private acceptPrompt(index: number): void {
    const item = this.slash.items[index];
    this.slash.close();
    this.renderPromptList();
    if (!item) return;
    const rest = this.input.value.replace(/^\/\S*/, "");
    this.input.value = `/${item.name}${rest}`;
    this.updateButtons();
    if (item.arguments.length) this.openPromptForm(item);
    else this.sendPrompt(item, {});
  }

  private openPromptForm(item: PromptItem): void {
    const form = new PromptForm(
      item,
      (args) => this.sendPrompt(item, args),
      () => {
        this.closePromptForm();
        this.input.focus();
      },
    );
    this.promptForm = form;
    this.promptBox.replaceChildren(form.el);
    setHidden(this.promptBox, false);
    form.focusFirst();
  }

  private closePromptForm(): void {
    this.promptForm = null;
    this.promptBox.replaceChildren();
    setHidden(this.promptBox, true);
    if (this.pendingPrompt) this.pendingPrompt = null; // its answer, if it comes, changes nothing here
    this.updateButtons();
  }

  private sendPrompt(item: PromptItem, args: Record<string, string>): void {
    if (this.pendingPrompt) return;
    const id = `prompt-${this.viewTag}-${++this.sendCount}`;
    if (!this.send({ type: "prompt", name: item.name, arguments: args, id })) return;
    this.pendingPrompt = { id, text: this.input.value };
    this.promptForm?.setWaiting(id);
    this.updateButtons();
    // A kernel that never answers (it died meanwhile) must not leave the form waiting for good.
    setTimeout(() => this.promptRefused(id, "The kernel did not answer: send it again, or check the kernel."), PENDING_SEND_MS);
  }

  /** The kernel refused a prompt's send: its form shows why (at the fields) and keeps what was typed; whether it
   * did (without a form the banner says it, and the input keeps its text). */
  promptRefused(id: string | undefined, message: string, fields?: Record<string, string>): boolean {
    if (id === undefined || this.pendingPrompt?.id !== id) return false;
    this.pendingPrompt = null;
    this.updateButtons();
    if (!this.promptForm) return false;
    this.promptForm.refused(message, fields);
    return true;
  }

  /** The kernel's answer to `complete`, `describe`, `prompts` or a send (`sent`). */
  kernelReply(msg: Record<string, unknown>): void {
    if (msg.type === "prompts") {
      if (this.slash.receive(msg.request, promptItems(msg.items), promptErrors(msg.errors))) this.renderPromptList();
    } else if (msg.type === "sent" && typeof msg.id === "string" && msg.id === this.pendingPrompt?.id) {
      if (this.input.value === this.pendingPrompt.text) this.input.value = "";
      this.pendingPrompt = null;
      if (this.promptForm) this.closePromptForm();
      this.updateButtons();
      this.scrollToEnd();
    } else if (msg.type === "completions") {
      if (this.mentions.receive(msg.request, msg.prefix, completionItems(msg.items))) this.mentionList.render(this.mentions);
    } else if (msg.type === "attachment") {
      this.chips.describe(msg);
    } else if (msg.type === "new_chat") {
      const kept = typeof msg.kept === "number" ? msg.kept : 0;
      if (kept > 0) {
        setText(this.emptyKept, "Started a new chat. The previous one is kept: once you send a message here, ‹ › on it switches back.");
        setHidden(this.emptyKept, false);
      }
    } else if (msg.type === "returned" && typeof msg.text === "string") {
      this.giveBack(msg.text); // a stop handed back what waited for the next step: not sent, nothing lost
    } else if (msg.type === "sent" && typeof msg.id === "string") {
      this.pending.taken(msg.id);
      if (this.pendingSend?.id !== msg.id) return;
      if (this.input.value === this.pendingSend.text) this.input.value = "";
      this.chips.clear();
      this.pendingSend = null;
      this.updateButtons();
    }
  }

  /** The kernel refused a send: one with attachments keeps its text and chips, and may be sent again; a plain one's
   * text goes back into the input box (the banner says why). Without an id: a turn the kernel took failed to start,
   * and the texts of the sends it took go back. */
  sendRefused(id?: string): void {
    if (id === undefined) {
      for (const text of this.pending.failed()) this.giveBack(text);
      return;
    }
    const text = this.pending.refused(id);
    if (this.pendingSend?.id !== id) {
      if (text !== null) this.giveBack(text);
      return;
    }
    this.pendingSend = null;
    this.updateButtons();
  }

  /** Puts a message's text back into the input box (before what is typed there now). */
  private giveBack(text: string): void {
    if (this.input.value === text) return;
    this.input.value = this.input.value.trim() ? `${text}\n${this.input.value}` : text;
    this.updateButtons();
  }

  /** Keys the widget leaves to the application; Escape too, unless it closes a list or the prompt's form. */
  private isForApp(ev: KeyboardEvent): boolean {
    const inForm = this.promptForm !== null && ev.target instanceof Node && this.promptForm.el.contains(ev.target);
    return isAppShortcut(ev) && !(ev.key === "Escape" && (this.mentions.open || this.slash.open || inForm));
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    setAttr(this.list, "aria-busy", String(busy));
    this.updateButtons();
  }

  private updateButtons(): void {
    // While a turn runs, Send steers it: the message waits for the turn's next step.
    const filesProblem = this.chips.filesProblem();
    setDisabled(this.sendButton, !this.input.value.trim() || this.pendingSend !== null || this.pendingPrompt !== null || filesProblem !== null);
    const title = filesProblem ?? (this.busy ? "Send now: the model gets it at its next step, with the results of the tools it runs" : "");
    if (this.sendButton.title !== title) this.sendButton.title = title;
    setHidden(this.stopButton, !this.busy);
    setDisabled(this.stopButton, !this.busy);
    setDisabled(this.newChatButton, this.busy);
    for (const chip of this.suggestions.children) setDisabled(chip as HTMLButtonElement, this.busy);
  }

  setPlaceholder(text: string): void {
    if (this.input.placeholder !== text) this.input.placeholder = text;
  }

  /** Suggestion chips: they stay after the first message (a menu of things to try), disabled while a turn runs. */
  setSuggestions(list: string[]): void {
    const items = list.filter((s) => typeof s === "string" && s.trim());
    const key = JSON.stringify(items);
    if (key !== this.shownSuggestions) {
      this.shownSuggestions = key;
      this.suggestions.replaceChildren(
        ...items.map((text) => button("aiw-suggestion", text, () => this.submit(text))),
      );
      this.updateButtons();
    }
    setHidden(this.suggestions, items.length === 0);
  }

  /** The tools allowed always, each with a Revoke button. */
  setAllowed(names: string[], info: (name: string) => ToolInfo | undefined): void {
    const items = names.filter((n) => typeof n === "string");
    const titles = items.map((n) => (typeof info(n)?.title === "string" && info(n)!.title) || n);
    const key = JSON.stringify([items, titles]);
    if (key === this.shownAllowed) return;
    this.shownAllowed = key;
    const chips = items.map((name, i) => {
      const chip = h("span", "aiw-allowed-tool");
      chip.dataset.toolName = name;
      const revoke = button("aiw-btn aiw-btn-small aiw-revoke", "Revoke", () => {
        setDisabled(revoke, true);
        this.send({ type: "revoke", tool_name: name });
      });
      revoke.setAttribute("aria-label", `Revoke "allow always" for ${titles[i]}`);
      chip.append(h("span", "aiw-allowed-name", titles[i]), revoke);
      return chip;
    });
    this.allowed.replaceChildren(...(chips.length ? [h("span", "aiw-allowed-label", "Allowed always:"), ...chips] : []));
    setHidden(this.allowed, chips.length === 0);
  }

  /** Usage of the last turn and of the session (every branch, and the chats before a New chat). */
  setUsage(lastTurn: Usage | null | undefined, conversation: Usage | null | undefined): void {
    const parts: string[] = [];
    if (hasUsage(lastTurn)) parts.push(`Last turn: ${formatUsage(lastTurn)}`);
    if (hasUsage(conversation)) {
      const requests = conversation?.requests ? ` (${conversation.requests} request${conversation.requests === 1 ? "" : "s"})` : "";
      parts.push(`Session: ${formatUsage(conversation)}${requests}`); // every branch and earlier chat included
    }
    setText(this.usage, parts.join(" · "));
    setHidden(this.usage, parts.length === 0);
    const unknown = [priceUnknown(lastTurn) && "the last turn", priceUnknown(conversation) && "the session"];
    const which = unknown.filter(Boolean).join(" and ");
    // Only the cost's absence needs saying: "price unknown" for whatever has none, why in a word.
    const title = which ? `Price unknown for ${which}: no price for this model or provider in genai-prices.` : "";
    if (this.usage.title !== title) this.usage.title = title;
  }

  /** Empties the input box if it still holds `text` (a message the kernel took after all). */
  clearInputIf(text: string): void {
    if (this.input.value !== text) return;
    this.input.value = "";
    this.updateButtons();
  }

  /** A refused action, as a dismissible banner; returned, so that it can be taken back. */
  showError(message: string): HTMLElement {
    const banner = h("div", "aiw-banner aiw-banner-kernel");
    banner.setAttribute("role", "alert");
    const close = button("aiw-banner-close", "×", () => banner.remove());
    close.setAttribute("aria-label", "Dismiss");
    banner.append(h("span", "aiw-banner-text", message), close);
    this.kernelBanners.append(banner);
    while (this.kernelBanners.children.length > MAX_KERNEL_BANNERS) this.kernelBanners.firstElementChild?.remove();
    return banner;
  }

  /** Scrolls the message list to the end and follows it again (after the first render, after sending). */
  scrollToEnd(): void {
    this.follower.jumpToEnd();
  }

  private readonly gateKeys = (ev: KeyboardEvent): void => {
    if (!(ev.target instanceof Node) || !this.root.contains(ev.target)) return;
    if (this.isForApp(ev)) this.root.removeAttribute("data-lm-suppress-shortcuts");
    else this.root.setAttribute("data-lm-suppress-shortcuts", "true");
  };

  destroy(): void {
    window.removeEventListener("keydown", this.gateKeys, true);
    for (const group of this.groups) group.destroy();
    this.approvals.destroy();
    this.unwatchWidth();
    this.pending.clear();
    this.follower.destroy();
    this.root.remove();
  }
}
