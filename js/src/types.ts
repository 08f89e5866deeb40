// The data the kernel sends (docs/protocol.md). Every string in here is untrusted.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type MessageStatus = "in_progress" | "completed" | "limit_reached" | "error" | "cancelled";
export type ToolCallState =
  | "streaming"
  | "pending"
  | "awaiting_approval"
  | "awaiting_input"
  | "running"
  | "completed"
  | "failed"
  | "rejected"
  | "cancelled"
  | "skipped";
export type Decision = "approved" | "approved_always" | "rejected";

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
  requests?: number;
  cache_write_tokens?: number;
  /** USD, the decimal's text (exact); null when the price of some request is unknown. */
  cost?: string | null;
}

export interface TextPart {
  kind: "text";
  text: string;
  /** A user message's attachment: its text view (`Attached pandas DataFrame \`df\`:` and the rows), shown folded
   * under its chip. */
  attachment?: boolean;
  /** Set when the text is a typed answer's JSON (`output_type=`): it shows as an object, not as markdown. */
  answer?: TypedAnswer | null;
}

/** A file in a user message (its bytes stay in the kernel): shown as a chip, a raster image with its message's
 * thumbnail. */
export interface FilePart {
  kind: "file";
  media_type: string;
  name?: string | null;
  size?: number | null;
  url?: string | null;
}

/** The mark on a typed answer's text part (docs/protocol.md, "Typed answers"). */
export interface TypedAnswer {
  type_name: string;
  /** "unchecked": arriving (or its turn ended before the check); "valid"; "invalid": refused, the turn ended. */
  state: "unchecked" | "valid" | "invalid" | string;
  /** The lenient parse of the text so far (`answer` ops patch it as the text streams). */
  parsed: JsonObject;
  /** The validated object (defaults and coercions applied), once valid; else null. */
  value: Json;
  /** Why it was refused (state "invalid"), as the model was told. */
  errors: string | null;
  /** The errors of the turn's earlier answers, refused and asked for again, oldest first. */
  refused: string[];
  /** Why the text is not a JSON object (prose, a code fence), or null: then the text is shown as it is. */
  parse_error: string | null;
}

export interface ReasoningPart {
  kind: "reasoning";
  text: string;
}

export interface Citation {
  url?: string | null;
  title?: string | null;
  snippet?: string | null;
}

export interface Attachment {
  mime_type?: string | null;
  data?: string | null;
  url?: string | null;
  name?: string | null;
}

/** What a tool's result shows, as a notebook would (ToolOutcome.display): mime type -> data (base64 for images). */
export interface DisplayBundle {
  data?: { [mime: string]: Json } | null;
  metadata?: JsonObject | null;
  /** What the model reads of it (a frame's text view, its text/plain). */
  text?: string | null;
}

export interface ToolError {
  type?: string | null;
  message?: string | null;
  traceback?: string | null;
}

/** One output of code run as a notebook cell (CellOutput): printed text, a display, the value, or the error. */
export interface CellOutput {
  kind: "stream" | "display" | "result" | "error" | string;
  name?: "stdout" | "stderr" | string | null;
  /** A stream's text, or an error's traceback. */
  text?: string;
  display?: DisplayBundle | null;
}

/** Code a tool ran as a notebook cell (CellRun): the code as it ran, its outputs in order, what it changed. */
export interface CellRun {
  code: string;
  language?: string;
  edited?: boolean;
  outputs?: CellOutput[];
  created?: string[];
  rebound?: string[];
  deleted?: string[];
  mutated?: string[];
  /** Where it was stopped ("line 3 of the code"), when it was stopped before it ended. */
  stopped_at?: string | null;
}

export interface Outcome {
  status: "success" | "failure";
  value?: Json;
  text?: string | null;
  citations?: Citation[] | null;
  attachments?: Attachment[] | null;
  message?: string | null;
  retryable?: boolean;
  error?: ToolError | null;
  display?: DisplayBundle | null;
  /** The code the call ran as a notebook cell, with its outputs and changes. */
  cell?: CellRun | null;
}

export interface Progress {
  fraction?: number | null;
  message?: string | null;
}

/** What a sync tool's thread did after its call had ended (cancelled, stopped, timed out): it was discarded. */
export interface LateResult {
  kind: "returned" | "raised" | string;
  /** A short text of what it returned, or the exception ("Type: message"); clipped, untrusted. */
  preview?: string | null;
}

export interface ToolCallPart {
  kind: "tool_call";
  tool_call_id: string;
  tool_name: string;
  parsed_arguments: JsonObject;
  /** What the person changed the arguments to before allowing the call (it ran with these), or null. */
  edited_arguments?: JsonObject | null;
  state: ToolCallState;
  progress?: Progress | null;
  /** The last lines (at most 20) the call's MCP server logged while it ran, oldest first; untrusted text. */
  log_lines?: string[];
  approval_reason?: string | null;
  decision?: Decision | null;
  decision_reason?: string | null;
  /** The call ran unasked because of an earlier "allow always" (`decision` is then "approved_always"). */
  decision_remembered?: boolean;
  /** Why the call ran without asking when the approval policy would have asked ("Run code without asking is on",
   * "KernelTools(ask='never')"), or null. */
  unasked_reason?: string | null;
  provider_executed?: boolean;
  started_at?: number | null;
  approval_requested_at?: number | null;
  run_started_at?: number | null;
  finished_at?: number | null;
  outcome?: Outcome | null;
  /** Display only (never the call's record): the call ended while its sync tool's thread still ran, and that
   * thread has not returned yet. Set on a finished message too (AFTER_STOP_FIELDS). */
  stopping?: boolean;
  /** Display only: what that thread returned or raised after the call ended (discarded), or null. */
  late?: LateResult | null;
  /** What the call's server asks the person while the call is "awaiting_input" (else null). */
  input_request?: InputRequest | null;
  /** What an agent tells about a call it runs (ACP): title, kind, files, text, diffs, terminals; absent otherwise. */
  view?: CallView | null;
}

/** A call as its agent describes it (docs/protocol.md, the tool_call part's "view"). */
export interface CallView {
  title?: string | null;
  kind?: string | null;
  locations?: { path: string; line?: number | null }[];
  content?: CallViewItem[];
}

export type CallViewItem =
  | { type: "text"; text: string }
  | { type: "diff"; path: string; old_text: string | null; new_text: string }
  | {
      type: "terminal";
      terminal_id: string;
      command?: string | null;
      cwd?: string | null;
      output?: string;
      exit_code?: number | null;
      signal?: string | null;
    };

/** A running call's question to the person (an MCP server's elicitation): data, never markup. */
export interface InputRequest {
  /** What the server says, shown as text. */
  message: string;
  mode: "form" | "url";
  /** For a form: a flat JSON Schema; the form starts from its defaults. */
  schema: JsonObject | null;
  /** For a link: the http(s) URL the person may open, and its host. */
  url: string | null;
  domain: string | null;
  /** Who asks (the server's name), or null. */
  asker: string | null;
}

export type InputAction = "accept" | "decline" | "cancel";

/** One step of an agent's plan. */
export interface PlanEntry {
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority: "high" | "medium" | "low";
}

/** An agent's plan (ACP): the latest checklist it sent, replaced in place as it goes. */
export interface PlanPart {
  kind: "plan";
  entries: PlanEntry[];
}

export type Part = TextPart | ReasoningPart | ToolCallPart | FilePart | PlanPart;

export interface Message {
  id: string;
  index: number;
  role: "user" | "assistant" | string;
  status: MessageStatus;
  finish_reason?: string | null;
  usage?: Usage | null;
  error?: string | null;
  /** What kind of failure or limit ended the reply (the kernel's ErrorKind: "request", "max_iterations", ...). */
  error_kind?: string | null;
  /** The troubleshooting page's entry for that error (a link), or null. */
  error_help?: string | null;
  status_text?: string | null;
  created_at?: number | null;
  parts: Part[];
  /** A user message's images: part index -> a small PNG `data:` URL for its chip. */
  thumbnails?: Record<string, unknown> | null;
  /** Where this message's place has alternatives (edits, regenerates): which one is shown, of how many. */
  branch?: Branch | null;
}

/** The alternatives at a message's place (the `< 1/2 >` switcher): `active` counts from 0. */
export interface Branch {
  active: number;
  count: number;
}

export interface ToolInfo {
  title?: string | null;
  icon?: string | null;
  risk?: "read_only" | "normal" | "destructive" | string | null;
  description?: string | null;
  requires_approval?: boolean;
  /** The tool's parameters (JSON Schema): the fields of the Edit form. */
  parameters?: Json;
  /** The ui:// page of its MCP App, which its cards show (the `apps` trait has the page). */
  app?: string | null;
  /** Arguments its cards show as code, by name, with their language: the tool runs code. */
  code_arguments?: Record<string, string>;
}

/** The synced traits of a ChatWidget (kernel -> front end only). The ones behind `_` are the widget's own state,
 * the others settings a user gives; a notebook saved before the `_` has the same state under the names without it
 * (`readTrait` reads those). */
export interface WidgetTraits {
  /** The finished messages, oldest first (raw: normalise before use). Kept current in place by the store. */
  _history: unknown[];
  /** How many finished messages come before `before` (the first one the kernel's state carried) that the state
   * left out: the store asks for them (`older`). Empty when none are. */
  _older?: { count?: number; before?: string };
  /** The live messages as this front end last had them (the kernel never sets it; for saved state). */
  _live: unknown[];
  _tools: Record<string, ToolInfo>;
  _usage: Usage;
  _busy: boolean;
  /** Messages sent while the turn runs, waiting for its next tool boundary (raw: checked where used). */
  _queued?: unknown[];
  /** "Run code without asking" is on (set by the kernel only). */
  _run_unasked?: boolean;
  _allowed_always: string[];
  suggestions: string[];
  collapse_tool_calls: boolean;
  placeholder: string;
  _kernel_mode: string;
  /** The model that holds the front-end code (read by the loader, `_esm`). */
  _bundle_model?: string;
  compact: boolean;
  /** "chat": the whole conversation with its input; "turn": one turn, in the cell that asked for it; "bench": one
   * tool run by hand (run_tool), its bench entry alone. */
  _scope: string;
  /** Tools run by hand (raw: normalise before use). */
  _bench: unknown[];
  /** The id of the static transcript the kernel shows after this view's output (absent: none), which a live view
   * hides. */
  _transcript_id?: string;
  /** How the last request was shortened to fit the model's context window; empty when it carried everything. */
  _context_cut?: Partial<ContextCut>;
  /** The pages of the MCP Apps the cards show, by tool name (raw: checked where used). */
  _apps?: Record<string, unknown>;
  /** The calls whose run was undone (Undo on the card): call id -> what was put back (raw: checked where used). */
  _undone?: Record<string, unknown>;
}

/** How a request was shortened to fit the model's context window (the session's ContextCut). */
export interface ContextCut {
  /** The first message the request carried: the marker goes before it. */
  first_sent_id: string;
  left_out_messages: number;
  left_out_turns: number;
  shortened_results: number;
  left_out_tokens: number;
  sent_tokens: number;
  window: number;
}

/** One tool run by hand: its form's arguments and its latest run (docs/protocol.md, "The bench"). */
export interface BenchEntry {
  id: string;
  tool_name: string;
  /** What the form shows: the arguments it was opened with, then those of the latest Run. */
  arguments: JsonObject;
  /** The call it was opened from ("Run again"), or null. */
  source: string | null;
  /** Asked for by the MCP App in the card of `source` (its own tools/call), not by the person. */
  by_app?: boolean;
  /** The latest run's reply (one tool call), or null before the first. */
  message: Message | null;
  running: boolean;
  /** The kernel's problems with the arguments, by field, as the model would be told them. */
  errors: Record<string, string>;
  /** A problem that is no one field's (the model's whole message), or why the run could not start. */
  error: string | null;
  /** How many Runs the kernel has answered. */
  attempt: number;
}

/** An argument patch: `[op, path, value]`. */
export type ArgPatch = ["set" | "append", (string | number)[], unknown];

/**
 * Kernel -> front end: one op of a `{type: "patch"}` message (docs/protocol.md). A positional tuple on the wire
 * (each delta costs a few bytes); typed here as a union discriminated by its first element.
 */
export type PatchOp =
  | ["start", unknown] // a message in progress, whole
  | ["msg", string, Record<string, unknown>] // its changed fields (MESSAGE_FIELDS)
  | ["part", string, number, unknown] // a part added or replaced at an index
  | ["text", string, number, string] // text appended to a text or reasoning part
  | ["answer", string, number, string, ArgPatch[]] // text appended to a typed answer's part, and its parse's patches
  | ["args", string, string, ArgPatch[]] // a call's argument patches
  | ["call", string, string, Record<string, unknown>] // a call's changed fields (CALL_FIELDS, AFTER_STOP_FIELDS)
  | ["finish", number, unknown] // finished message number n, whole: it replaces the live copy
  | ["clear"]
  | ["cut", number]; // the finished messages from number n on left the active path (an edit, regenerate, switch)

/** Front end -> kernel. */
export type OutgoingMessage =
  | { type: "sync"; have: number; last?: string }
  | { type: "older"; at: number; before: string }
  | { type: "send"; text: string; attach?: string[]; files?: { name: string; media_type: string; data: string }[]; id?: string }
  | { type: "complete"; prefix: string; request: number }
  | { type: "describe"; name: string; request: number }
  | { type: "prompts"; request: number }
  | { type: "prompt"; name: string; arguments: Record<string, string>; id: string }
  | { type: "stop" }
  | { type: "run_unasked"; on: boolean }
  | { type: "approve"; tool_call_id: string; decision: Decision; reason?: string; arguments?: JsonObject }
  | { type: "cancel"; tool_call_id: string; reason?: string }
  | { type: "respond"; tool_call_id: string; action: InputAction; content?: JsonObject }
  | { type: "app_open"; tool_call_id: string }
  | { type: "resource_open"; tool_call_id: string; uri: string }
  | { type: "app_call"; tool_call_id: string; request: number; name: string; arguments: JsonObject }
  | { type: "revoke"; tool_name: string }
  | { type: "continue" }
  | { type: "edit"; message_id: string; text: string }
  | { type: "regenerate" }
  | { type: "switch_branch"; message_id: string; index: number }
  | { type: "new_chat" }
  | { type: "bench_open"; tool_call_id: string }
  | { type: "bench_run"; id: string; arguments: JsonObject }
  | { type: "bench_close"; id: string }
  | { type: "undo_call"; tool_call_id: string }
  | { type: "insert_cell"; tool_call_id: string };
