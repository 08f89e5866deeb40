// Page side of benchmarks/bench_frontend.py: a fake anywidget model holding a finished conversation, a live reply
// streamed as the kernel would send it (deltas coalesced by the same merge rules as ai_widgets/widget/_bridge.py
// into one patch message per ~33 ms), and the measurements. Exposes `globalThis.bench`.
//
// setupWidget(opts): mounts ai_widgets' front end (/widget.js) on the conversation and prepares the stream.
// setupNaive(opts): the same for a naive renderer that rebuilds the whole conversation per patch.
// stream(): plays the prepared stream and resolves with the measurements.

const LIVE_ID = "msg_live";
const CALL_ID = "call_live";

// ---- deterministic data -------------------------------------------------------------------------------

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const TOPICS = [
  ["pandas", "group a DataFrame by month and sum two columns"],
  ["asyncio", "cancel a task that is waiting on a queue"],
  ["SQL", "find the top three customers per region"],
  ["numpy", "vectorise a loop over pairs of points"],
  ["git", "undo a merge that was already pushed"],
  ["HTTP", "retry requests with exponential backoff"],
  ["regex", "match ISO dates but not times"],
  ["matplotlib", "share the x axis between subplots"],
  ["typing", "annotate a decorator that keeps the signature"],
  ["Docker", "make the image smaller"],
];
const WORDS = (
  "the a of to and in is it that for you this with on as are be can by your data value each when from not " +
  "function result column index list time error case file first then return call use more only also new which"
).split(" ");

function sentence(r, n) {
  const words = [];
  for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(r() * WORDS.length)]);
  const s = words.join(" ");
  return s[0].toUpperCase() + s.slice(1) + ".";
}

function codeBlock(r, lines) {
  const out = ["```python"];
  out.push("def compute(frame, key='month'):");
  for (let i = 0; i < lines; i++) {
    const w = WORDS[Math.floor(r() * WORDS.length)];
    out.push(`    ${w}_${i} = frame.groupby(key)[["${w}", "total"]].sum()  # step ${i}`);
  }
  out.push("    return frame");
  out.push("```");
  return out.join("\n");
}

function assistantMarkdown(r, topic) {
  const parts = [`Here is how to ${topic[1]} with **${topic[0]}**.`, "", sentence(r, 18) + " " + sentence(r, 12), ""];
  if (r() < 0.5) parts.push(`### Steps`, "");
  const items = 3 + Math.floor(r() * 3);
  for (let i = 0; i < items; i++) parts.push(`${i + 1}. ${sentence(r, 6 + Math.floor(r() * 8))} Use \`${topic[0]}.op_${i}()\`.`);
  parts.push("", codeBlock(r, 4 + Math.floor(r() * 8)), "");
  for (let i = 0; i < 3; i++) parts.push(`- ${sentence(r, 5 + Math.floor(r() * 6))}`);
  parts.push("", sentence(r, 20));
  return parts.join("\n");
}

function finishedConversation(count) {
  const r = rng(42);
  const messages = [];
  let t = 1764400000;
  let assistantCount = 0;
  for (let index = 0; index < count; index++) {
    const topic = TOPICS[Math.floor(index / 2) % TOPICS.length];
    t += 7;
    if (index % 2 === 0) {
      messages.push({
        id: `msg_${index}`,
        index,
        role: "user",
        status: "completed",
        finish_reason: null,
        usage: null,
        error: null,
        status_text: null,
        created_at: t,
        parts: [{ kind: "text", text: `How do I ${topic[1]} in ${topic[0]}? ${sentence(r, 10)}` }],
      });
      continue;
    }
    const parts = [];
    if (assistantCount++ % 2 === 0) {
      const withText = r() < 0.5;
      parts.push({ kind: "text", text: `Let me check the ${topic[0]} documentation first.` });
      parts.push({
        kind: "tool_call",
        tool_call_id: `call_${index}`,
        tool_name: "search_docs",
        parsed_arguments: { query: `${topic[0]} ${topic[1]}`, max_results: 5, filters: { version: "latest" } },
        state: "completed",
        progress: null,
        approval_reason: null,
        decision: null,
        decision_reason: null,
        provider_executed: false,
        started_at: t,
        run_started_at: t + 0.1,
        finished_at: t + 0.9,
        outcome: {
          status: "success",
          value: withText
            ? null
            : [1, 2, 3].map((i) => ({ title: `${topic[0]} guide, part ${i}`, score: 0.9 - i / 10, snippet: sentence(r, 12) })),
          text: withText ? `Found **3** pages:\n\n- ${sentence(r, 6)}\n- ${sentence(r, 7)}\n- ${sentence(r, 5)}` : null,
          citations: [{ url: `https://docs.example.org/${topic[0]}/${index}`, title: `${topic[0]} docs`, snippet: null }],
          attachments: [],
          message: null,
          retryable: false,
          error: null,
        },
      });
    }
    parts.push({ kind: "text", text: assistantMarkdown(r, topic) });
    messages.push({
      id: `msg_${index}`,
      index,
      role: "assistant",
      status: "completed",
      finish_reason: "stop",
      usage: { input_tokens: 1200 + index * 40, output_tokens: 350, cached_tokens: 0, reasoning_tokens: 0, requests: 1 },
      error: null,
      status_text: null,
      created_at: t,
      parts,
    });
  }
  return messages;
}

const TOOLS = {
  search_docs: { title: "Search docs", icon: "🔎", risk: "read_only", description: "Searches documentation.", requires_approval: false },
  run_python: { title: "Run Python", icon: "🐍", risk: "normal", description: "Runs Python code.", requires_approval: false },
};

// ---- the live reply: a timed schedule of ops -----------------------------------------------------------

/** Splits text into model-like deltas of 1-7 characters (words, spaces, punctuation). */
function tokens(text, r) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    const n = 1 + Math.floor(r() * 7);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

function longMarkdown(r, minChars) {
  const chunks = [];
  let n = 0;
  let k = 0;
  while (n < minChars) {
    const md = assistantMarkdown(r, TOPICS[k++ % TOPICS.length]) + "\n\n";
    chunks.push(md);
    n += md.length;
  }
  return chunks.join("");
}

function longCode(r, minChars) {
  const lines = ["import pandas as pd", "", "frame = pd.read_csv('sales.csv', parse_dates=['date'])"];
  let n = 0;
  for (let i = 0; n < minChars; i++) {
    const w = WORDS[Math.floor(r() * WORDS.length)];
    const line = `result_${i} = frame.groupby(frame['date'].dt.month)[['${w}', 'total']].sum()`;
    lines.push(line);
    n += line.length + 1;
  }
  lines.push("print(result_0.head())");
  return lines.join("\n");
}

/**
 * Every op of the reply with its time (ms from the start) and whether it is a delta. Deltas arrive at `rate` a
 * second: 30% text, then 10% tool-call arguments (append patches), a 200 ms tool run (state changes, progress,
 * no deltas), then 60% text in a new part.
 */
function schedule(rate, seconds, created) {
  const r = rng(7);
  const total = Math.round(rate * seconds);
  const textA = Math.round(total * 0.3);
  const argsN = Math.round(total * 0.1);
  const textB = total - textA - argsN;
  const text = tokens(longMarkdown(r, (textA + textB) * 4.2), r);
  const code = tokens(longCode(r, argsN * 4.2), r);
  const items = [];
  let t = 0;
  let ti = 0;
  const step = 1000 / rate;
  const op = (o, delta = false) => items.push({ t, op: o, delta });
  const call = (fields) => ({
    state: "streaming",
    progress: null,
    outcome: null,
    approval_reason: null,
    decision: null,
    decision_reason: null,
    provider_executed: false,
    run_started_at: null,
    finished_at: null,
    ...fields,
  });

  op(["start", { id: LIVE_ID, index: created.index, role: "assistant", status: "in_progress", finish_reason: null,
    usage: null, error: null, status_text: "Thinking…", created_at: created.at, parts: [] }]);
  t += 120; // time to first token
  op(["msg", LIVE_ID, { status: "in_progress", status_text: null, finish_reason: null, usage: null, error: null }]);
  op(["part", LIVE_ID, 0, { kind: "text", text: "" }]);
  for (let i = 0; i < textA; i++, t += step) op(["text", LIVE_ID, 0, text[ti++ % text.length]], true);
  op(["part", LIVE_ID, 1, { kind: "tool_call", tool_call_id: CALL_ID, tool_name: "run_python", parsed_arguments: {},
    ...call({ started_at: created.at + 1 }) }]);
  op(["args", LIVE_ID, CALL_ID, [["set", ["code"], ""]]]);
  for (let i = 0; i < argsN; i++, t += step) {
    op(["args", LIVE_ID, CALL_ID, [["append", ["code"], code[i % code.length]]]], true);
  }
  op(["args", LIVE_ID, CALL_ID, [["set", ["timeout_seconds"], 30]]]);
  op(["call", LIVE_ID, CALL_ID, call({ state: "pending" })]);
  const runStart = created.at + 3;
  t += 40;
  op(["call", LIVE_ID, CALL_ID, call({ state: "running", run_started_at: runStart })]);
  for (const f of [0.25, 0.5, 0.75]) {
    t += 40;
    op(["call", LIVE_ID, CALL_ID, call({ state: "running", run_started_at: runStart, progress: { fraction: f, message: `Processed ${f * 100}% of rows` } })]);
  }
  t += 40;
  op(["call", LIVE_ID, CALL_ID, call({ state: "completed", run_started_at: runStart, finished_at: runStart + 0.2,
    outcome: { status: "success", value: null, text: "```\n   month  total\n0      1  1204.5\n1      2   980.1\n```",
      citations: [], attachments: [], message: null, retryable: false, error: null } })]);
  op(["part", LIVE_ID, 2, { kind: "text", text: "" }]);
  for (let i = 0; i < textB; i++, t += step) op(["text", LIVE_ID, 2, text[ti++ % text.length]], true);
  op(["msg", LIVE_ID, { status: "completed", status_text: null, finish_reason: "stop",
    usage: { input_tokens: 30000, output_tokens: total, cached_tokens: 0, reasoning_tokens: 0, requests: 2 }, error: null }]);
  return { items, deltas: total };
}

// Same rules as PatchStream.push / join_patches in ai_widgets/widget/_bridge.py.
function pushMerged(ops, op) {
  const last = ops[ops.length - 1];
  if (last && last[0] === op[0]) {
    const kind = op[0];
    if (kind === "text" && last[1] === op[1] && last[2] === op[2]) return void (last[3] += op[3]);
    if (kind === "args" && last[1] === op[1] && last[2] === op[2]) {
      for (const p of op[3]) {
        const prev = last[3][last[3].length - 1];
        const same = prev && p[0] === "append" && prev[1].join("\u0000") === p[1].join("\u0000");
        if (same && (prev[0] === "append" || (prev[0] === "set" && typeof prev[2] === "string"))) prev[2] += p[2];
        else last[3].push([p[0], [...p[1]], p[2]]);
      }
      return;
    }
    if (kind === "call" && last[1] === op[1] && last[2] === op[2]) return void Object.assign(last[3], op[3]);
    if (kind === "msg" && last[1] === op[1]) return void Object.assign(last[2], op[2]);
  }
  ops.push(JSON.parse(JSON.stringify(op)));
}

/**
 * The patch messages the kernel would send: ops merged per ~33 ms window of kernel time (PatchStream flushes
 * 1/30 s after the first op it buffers). Each has its send time and how many deltas it carries.
 */
function coalesce(items) {
  const interval = 1000 / 30;
  const patches = [];
  let cur = null;
  for (const it of items) {
    if (!cur || it.t >= cur.due) {
      cur = { due: it.t + interval, ops: [], deltas: 0 };
      patches.push(cur);
    }
    pushMerged(cur.ops, it.op);
    if (it.delta) cur.deltas++;
  }
  return patches;
}

/**
 * Plays the patches in real time (a timer set to the next send time): each patch is delivered in its own task once
 * its send time has come (a front end that falls behind gets them queued, as from the websocket). Also records
 * animation-frame times and long tasks.
 */
function play(patches, deliver) {
  return new Promise((resolve) => {
    const longTasks = [];
    let observer = null;
    if (PerformanceObserver.supportedEntryTypes?.includes("longtask")) {
      observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration)));
      observer.observe({ type: "longtask" });
    }
    const frames = [];
    let stopFrames = false;
    const onFrame = (ts) => {
      frames.push(ts);
      if (!stopFrames) requestAnimationFrame(onFrame);
    };
    requestAnimationFrame(onFrame);
    const stats = { patches: patches.length, ops: 0, deltas: 0, maxLagMs: 0 };
    let next = 0;
    const t0 = performance.now();
    const tick = () => {
      // One patch per task, as each websocket message is its own task.
      if (next < patches.length && patches[next].due <= performance.now() - t0) {
        const p = patches[next++];
        stats.maxLagMs = Math.max(stats.maxLagMs, performance.now() - t0 - p.due);
        stats.ops += p.ops.length;
        stats.deltas += p.deltas;
        deliver({ type: "patch", ops: p.ops });
      }
      if (next < patches.length) {
        setTimeout(tick, Math.max(0, patches[next].due - (performance.now() - t0)));
      } else {
        stats.streamMs = performance.now() - t0;
        stats.scheduledMs = patches[patches.length - 1].due;
        // Let the last frames flush, then collect.
        setTimeout(() => {
          stopFrames = true;
          observer?.takeRecords?.().forEach((e) => longTasks.push(e.duration));
          observer?.disconnect();
          const gaps = [];
          for (let i = 1; i < frames.length; i++) gaps.push(frames[i] - frames[i - 1]);
          resolve({ ...stats, frameGaps: gaps, longTasks, longTaskSupported: observer !== null });
        }, 300);
      }
    };
    setTimeout(tick, patches[0].due);
  });
}

// ---- the fake anywidget model ---------------------------------------------------------------------------

class Emitter {
  constructor() {
    this.handlers = new Map();
  }
  on(name, cb) {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name).add(cb);
  }
  off(name, cb) {
    if (!name) this.handlers.clear();
    else if (!cb) this.handlers.delete(name);
    else this.handlers.get(name)?.delete(cb);
  }
  emit(name, ...args) {
    for (const cb of [...(this.handlers.get(name) ?? [])]) cb(...args);
  }
}

class FakeModel extends Emitter {
  constructor(messages) {
    super();
    this.sent = [];
    this.attrs = {
      history: messages, // the finished messages, in the state a view opens with
      live: [],
      tools: TOOLS,
      usage: { input_tokens: 900000, output_tokens: 90000, cached_tokens: 0, reasoning_tokens: 0, requests: 375 },
      busy: false,
      allowed_always: [],
      suggestions: [],
      collapse_tool_calls: true,
      placeholder: "Message the model…",
      kernel_mode: "bench",
      compact: false,
    };
  }
  get(key) {
    return this.attrs[key];
  }
  set(key, value) {
    this.attrs[key] = value;
    this.emit(`change:${key}`);
  }
  save_changes() {}
  send(content) {
    this.sent.push(content);
    // The kernel answers a view's sync with what it lacks (nothing: it has every finished message, none is live).
    if (content?.type === "sync") {
      setTimeout(() => this.custom({ type: "snapshot", from: content.have, finished: [], live: [] }), 0);
    }
  }
  custom(msg) {
    this.emit("msg:custom", msg, []);
  }
}

/**
 * A model as a live kernel opens it: its state holds only the newest `screen` finished messages and `older` says
 * how many come before; `older` requests are answered a chunk at a time (as JSON text parsed again, as from the
 * websocket), like ai_widgets/widget/_window.py (by count only).
 */
class ChunkedModel extends FakeModel {
  constructor(messages, { screen = 40, chunk = 400 } = {}) {
    super(messages.slice(-screen));
    this.all = messages;
    this.chunk = chunk;
    this.attrs.older = messages.length > screen ? { count: messages.length - screen, before: messages[messages.length - screen].id } : {};
    this.answeredBytes = 0;
  }
  send(content) {
    this.sent.push(content);
    if (content?.type === "sync") {
      setTimeout(() => this.custom({ type: "snapshot", from: content.have, finished: [], live: [] }), 0);
    } else if (content?.type === "older") {
      const at = content.at;
      const from = Math.max(0, at - this.chunk);
      const text = JSON.stringify({ type: "older", from, before: content.before, finished: this.all.slice(from, at) });
      this.answeredBytes += text.length;
      setTimeout(() => this.custom(JSON.parse(text)), 0);
    }
  }
}

// ---- runs -------------------------------------------------------------------------------------------------

const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let pending = null; // what setup*() prepared for stream()

async function setupWidget({ messages: count, rate, seconds }) {
  const { default: widget } = await import("/widget.js");
  const messages = finishedConversation(count);
  const model = new FakeModel(messages);
  const el = document.getElementById("app");
  const t0 = performance.now();
  widget.render({ model, el });
  const buildMs = performance.now() - t0; // building the view's DOM, before any style, layout or paint
  while (!document.querySelector(".aiw[data-rendered=true]")) await nextFrame();
  await nextFrame();
  const renderMs = performance.now() - t0;
  const list = document.querySelector(".aiw .aiw-messages");
  const firstScreen = list.querySelectorAll(":scope > .aiw-message").length;
  // The earlier messages are built when the page is idle: the stream starts once they all are.
  const waited = performance.now();
  while (list.querySelectorAll(":scope > .aiw-message").length < count || list.querySelector(".aiw-older-note")) {
    if (performance.now() - waited > 20000) throw new Error(`built ${list.querySelectorAll(":scope > .aiw-message").length} of ${count} messages`);
    await sleep(20);
  }
  const allBuiltMs = performance.now() - t0;
  const earlier = [...list.querySelectorAll(":scope > .aiw-message")];
  model.set("busy", true); // the kernel sets busy as the turn starts (before the measured stream)
  const { items, deltas } = schedule(rate, seconds, { index: count, at: 1764400000 + count * 7 + 7 });
  const patches = coalesce(items);
  await sleep(300);

  // Mutations inside the earlier messages (must be none), and to the list itself other than adding the reply.
  const counts = { outside: 0, listOther: 0, liveAdded: 0 };
  const classify = (records) => {
    for (const rec of records) {
      if (rec.target === list) {
        const onlyLive =
          rec.type === "childList" &&
          rec.removedNodes.length === 0 &&
          [...rec.addedNodes].every((n) => n instanceof HTMLElement && n.dataset.id === LIVE_ID);
        if (onlyLive) counts.liveAdded += rec.addedNodes.length;
        else counts.listOther++;
      } else {
        counts.outside++;
      }
    }
  };
  const mo = new MutationObserver(classify);
  for (const m of earlier) mo.observe(m, { subtree: true, attributes: true, characterData: true, childList: true });
  mo.observe(list, { attributes: true, childList: true });

  pending = async () => {
    globalThis.__aiwStats = { frames: 0, flushMs: [] };
    globalThis.__aiwCollectStats = true;
    const played = await play(patches, (msg) => model.custom(msg));
    globalThis.__aiwCollectStats = false;
    classify(mo.takeRecords());
    mo.disconnect();
    const liveEl = list.querySelector(`:scope > [data-id="${LIVE_ID}"]`);
    const stats = globalThis.__aiwStats;
    return {
      renderMs,
      buildMs,
      firstScreen,
      allBuiltMs,
      scheduledDeltas: deltas,
      ...played,
      updateMs: stats.flushMs,
      updates: stats.frames,
      mutationsOutside: counts.outside,
      listMutationsOther: counts.listOther,
      liveAdded: counts.liveAdded,
      liveChars: liveEl ? liveEl.textContent.length : 0,
      messageElements: list.querySelectorAll(":scope > .aiw-message").length,
    };
  };
}

// The naive front end: keeps the conversation as data and rebuilds the list's innerHTML on every patch.

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

function partText(p) {
  if (p.kind !== "tool_call") return p.text;
  const outcome = p.outcome ? `\n→ ${p.outcome.text ?? JSON.stringify(p.outcome.value)}` : "";
  return `${p.tool_name}(${JSON.stringify(p.parsed_arguments)}) [${p.state}]${outcome}`;
}

function naiveHtml(messages) {
  let html = "";
  for (const m of messages) {
    html += `<div class="msg" data-role="${esc(m.role)}"><b>${esc(m.role)}</b>`;
    for (const p of m.parts) html += `<pre>${esc(partText(p))}</pre>`;
    html += "</div>";
  }
  return html;
}

function applyNaive(messages, op) {
  const live = messages[messages.length - 1];
  switch (op[0]) {
    case "start":
      messages.push(JSON.parse(JSON.stringify(op[1])));
      break;
    case "msg":
      Object.assign(live, op[2]);
      break;
    case "part":
      live.parts[op[2]] = JSON.parse(JSON.stringify(op[3]));
      break;
    case "text":
      live.parts[op[2]].text += op[3];
      break;
    case "args": {
      const call = live.parts.find((p) => p.tool_call_id === op[2]);
      for (const [kind, path, value] of op[3]) {
        let target = call.parsed_arguments;
        for (const key of path.slice(0, -1)) target = target[key] ??= {};
        const key = path[path.length - 1];
        target[key] = kind === "append" ? (target[key] ?? "") + value : value;
      }
      break;
    }
    case "call":
      Object.assign(live.parts.find((p) => p.tool_call_id === op[2]), op[3]);
      break;
  }
}

async function setupNaive({ messages: count, rate, seconds }) {
  const messages = finishedConversation(count);
  const el = document.getElementById("app");
  el.style.cssText = "max-height: 640px; overflow-y: auto; font: 14px/1.5 system-ui, sans-serif";
  const t0 = performance.now();
  el.innerHTML = naiveHtml(messages);
  el.scrollTop = el.scrollHeight;
  await nextFrame();
  await nextFrame();
  const renderMs = performance.now() - t0;
  const { items, deltas } = schedule(rate, seconds, { index: count, at: 1764400000 + count * 7 + 7 });
  const patches = coalesce(items);
  await sleep(300);

  pending = async () => {
    const updateMs = [];
    const played = await play(patches, (msg) => {
      const start = performance.now();
      for (const op of msg.ops) applyNaive(messages, op);
      el.innerHTML = naiveHtml(messages);
      updateMs.push(performance.now() - start);
      el.scrollTop = el.scrollHeight; // keep the newest text in view (forces layout; not in updateMs)
    });
    return { renderMs, scheduledDeltas: deltas, ...played, updateMs, updates: updateMs.length };
  };
}

/**
 * Opening a conversation of `count` finished messages: from a saved notebook's state (`live` false: the state holds
 * them all) or from a live kernel (the newest in the state, the rest asked for). Measures the first render (until
 * `data-rendered`, and the next frame), then how long until every message is built, and the longest gap between
 * frames meanwhile.
 */
async function openConversation({ messages: count, live }) {
  const { default: widget } = await import("/widget.js");
  const messages = finishedConversation(count);
  const model = live ? new ChunkedModel(messages) : new FakeModel(messages);
  const el = document.getElementById("app");
  const frames = [];
  let framing = true;
  const onFrame = (ts) => {
    frames.push(ts);
    if (framing) requestAnimationFrame(onFrame);
  };
  const t0 = performance.now();
  widget.render({ model, el });
  const buildMs = performance.now() - t0;
  while (!document.querySelector(".aiw[data-rendered=true]")) await nextFrame();
  await nextFrame();
  const renderMs = performance.now() - t0;
  const list = document.querySelector(".aiw .aiw-messages");
  const built = () => list.querySelectorAll(":scope > .aiw-message:not(.aiw-unbuilt)").length;
  const firstScreen = built();
  const newest = [...list.querySelectorAll(":scope > .aiw-message:not(.aiw-unbuilt)")].pop()?.dataset.id;
  const box = list.getBoundingClientRect();
  const lastRect = list.querySelector(`:scope > [data-id="msg_${count - 1}"]`)?.getBoundingClientRect();
  const newestInView = !!lastRect && lastRect.bottom <= box.bottom + 2 && lastRect.bottom > box.top;
  requestAnimationFrame(onFrame);
  while (built() < count || list.querySelector(".aiw-older-note")) {
    if (performance.now() - t0 > 30000) break;
    await sleep(10);
  }
  const allBuiltMs = performance.now() - t0;
  framing = false;
  const gaps = [];
  for (let i = 1; i < frames.length; i++) gaps.push(frames[i] - frames[i - 1]);
  return {
    buildMs,
    renderMs,
    firstScreen,
    newest,
    newestInView,
    allBuiltMs,
    builtAtEnd: built(),
    maxFrameGapMs: gaps.length ? Math.max(...gaps) : 0,
    answeredBytes: model.answeredBytes ?? 0,
    olderRequests: model.sent.filter((m) => m?.type === "older").length,
  };
}

/** Runs the stream prepared by setupWidget / setupNaive (separate, so the browser's counters cover only it). */
function stream() {
  const run = pending;
  pending = null;
  return run();
}

globalThis.bench = { setupWidget, setupNaive, stream, openConversation };
