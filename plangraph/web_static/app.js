// plangraph chat page: one card per plan step, streamed over POST /plangraph/stream (LangServe SSE).
// Reads GET /conversations and GET /conversations/{id}; no libraries, no other origin.
"use strict";

const STATUS_COLORS = {
  "待初始化": "#f3f4f6", "待运行": "#dbeafe", "运行中": "#fef08a",
  "待用户输入中": "#fed7aa", "完成": "#bbf7d0", "失败": "#fecaca",
};
const STATUS_TEXT = { waiting: "等待您的回答", running: "运行中", done: "已完成", failed: "有步骤失败", empty: "" };

const state = { id: null, view: null, progress: {}, notes: [], streaming: false, refreshing: null, again: false };
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function newId() {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return "c-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function showError(message) {
  const banner = $("#banner");
  banner.textContent = message;
  banner.hidden = !message;
}

async function api(path) {
  const response = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (response.status === 401) { location.href = "/login"; throw new Error("未登录"); }
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}

async function errorText(response) {
  try {
    const body = await response.json();
    return typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
  } catch (_) {
    return `HTTP ${response.status}`;
  }
}

// --- conversations list ------------------------------------------------------------------------

function when(seconds) {
  const d = new Date(seconds * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getMonth() + 1}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

async function loadConversations() {
  const data = await api("/conversations");
  if (!data) return;
  $("#who").textContent = `已登录：${data.user}`;
  $("#who").append(" · ", el("a", { href: "/logout" }, "退出"));
  const list = $("#conversations");
  list.replaceChildren();
  if (!data.conversations.length) list.append(el("li", { class: "empty" }, "还没有会话"));
  for (const c of data.conversations) {
    const item = el("li", { class: c.conversationId === state.id ? "current" : "" },
      el("a", { href: `#c=${encodeURIComponent(c.conversationId)}`, "data-conversation": c.conversationId },
        el("span", { class: "req" }, c.request || c.conversationId),
        el("span", { class: `meta status-${c.status}` }, `${c.statusText} · ${when(c.updatedAt)}`)));
    list.append(item);
  }
}

// --- one conversation --------------------------------------------------------------------------

async function openConversation(id) {
  state.id = id;
  state.view = null;
  state.progress = {};
  state.notes = [];
  showError("");
  render();
  if (id) await refresh();
  await loadConversations();
}

// A conversation still running in another tab or after a reload: look again until it stops.
setInterval(() => {
  if (!state.streaming && state.view && state.view.status === "running" && !document.hidden) refresh();
}, 2000);

async function refresh() {
  // One request at a time; a refresh asked for meanwhile runs once the current one is done.
  if (state.refreshing) { state.again = true; return state.refreshing; }
  state.refreshing = (async () => {
    do {
      state.again = false;
      const id = state.id;
      const view = id ? await api(`/conversations/${encodeURIComponent(id)}`) : null;
      if (id === state.id) { state.view = view; render(); }
    } while (state.again);
  })();
  try { await state.refreshing; } finally { state.refreshing = null; }
}

function render() {
  const thread = $("#thread");
  const view = state.view;
  thread.replaceChildren();
  if (!state.id || (!view && !state.notes.length)) {
    thread.append(el("p", { id: "welcome" }, $("#welcome")?.textContent || "输入您的需求，例如“帮我生成一份光伏经济测算报告”。"));
    return;
  }
  if (view && view.request) thread.append(el("div", { class: "bubble user" }, view.request));
  for (const note of state.notes) thread.append(el("div", { class: "note" }, note));
  if (!view || !view.steps.length) return;
  thread.append(el("div", { class: `conversation-status status-${view.status}` }, STATUS_TEXT[view.status] || ""));
  thread.append(graphFigure(view));
  const cards = el("div", { id: "cards" });
  for (const step of view.steps) cards.append(stepCard(step));
  thread.append(cards);
  if (view.status === "done" || view.status === "failed") thread.append(summaryCard(view));
}

function stepCard(step) {
  const card = el("article", { class: `card status-${step.status}`, "data-seq": step.seqNo, "data-status": step.status },
    el("header", {},
      el("span", { class: "title" }, `步骤 ${step.seqNo} · ${step.agentName}`),
      el("span", { class: "badge" }, step.label)),
    el("p", { class: "requirement" }, step.requirement));
  card.querySelector(".badge").dataset.label = step.label;
  const lines = state.progress[step.seqNo] || [];
  if (lines.length) card.append(el("ul", { class: "progress" }, lines.map((t) => el("li", {}, t))));
  if (step.output && step.status !== "interrupted") card.append(outputBlock(step.output));
  const figures = step.artifacts.filter((url) => /\.(png|svg|jpe?g)$/i.test(url));
  if (figures.length) {
    card.append(el("div", { class: "figures" }, figures.map((url) =>
      el("a", { href: url, target: "_blank" }, el("img", { src: url, alt: url.split("/").pop(), loading: "lazy" })))));
  }
  const files = step.artifacts.filter((url) => !figures.includes(url));
  if (files.length) card.append(el("p", { class: "files" }, files.map((url) => fileLink(url))));
  if (step.question) card.append(questionBox(step));
  return card;
}

function outputBlock(text) {
  // Agent output is plain text with Markdown tables: the tables become HTML tables, the rest stays text.
  const box = el("div", { class: "output" });
  let lines = [], rows = [];
  const flushText = () => { if (lines.length) box.append(el("pre", {}, lines.join("\n"))); lines = []; };
  const flushTable = () => {
    const cells = rows.filter((r) => !/^\|[\s|:-]+\|$/.test(r))
      .map((r) => r.replace(/^\||\|$/g, "").split("|").map((c) => c.trim()));
    if (cells.length) {
      const [head, ...body] = cells;
      box.append(el("table", {}, el("thead", {}, el("tr", {}, head.map((c) => el("th", {}, c)))),
        el("tbody", {}, body.map((r) => el("tr", {}, r.map((c) => el("td", {}, c)))))));
    }
    rows = [];
  };
  for (const line of text.split("\n")) {
    if (line.trim().startsWith("|")) { flushText(); rows.push(line.trim()); }
    else { flushTable(); lines.push(line); }
  }
  flushText(); flushTable();
  return box;
}

function fileLink(url) {
  const name = url.split("/").pop();
  const kind = name.endsWith(".html") ? "打开报告（HTML）" : name.endsWith(".md") ? "报告（Markdown）" : name;
  return el("a", { class: `file ${name.split(".").pop()}`, href: url, target: "_blank", rel: "noopener" }, kind);
}

function questionBox(step) {
  const input = el("textarea", { class: "answer", rows: "2", placeholder: "在这里回答，然后点“提交回答”", required: "" });
  const form = el("form", { class: "question", onsubmit: (event) => {
    event.preventDefault();
    const answer = input.value.trim();
    if (answer) turn({ resume: answer }, state.id);
  } },
  el("p", { class: "ask" }, step.question),
  input,
  el("button", { type: "submit", class: "answer-button" }, "提交回答"));
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  return form;
}

function summaryCard(view) {
  const links = view.steps.flatMap((s) => s.artifacts);
  const first = (view.summary || "").split("\n")[0];
  return el("section", { class: "card summary" },
    el("header", {}, el("span", { class: "title" }, "总结")),
    el("p", {}, first),
    links.length ? el("p", { class: "files" }, links.map((url) => fileLink(url))) : null,
    el("details", {}, el("summary", {}, "完整总结"), el("pre", {}, view.summary)));
}

// --- the plan as a graph -----------------------------------------------------------------------

function graphFigure(view) {
  const figure = el("figure", { class: "plan-graph" });
  const drawn = () => figure.replaceChildren(drawPlan(view.steps), el("figcaption", {}, "计划图"));
  if (view.graph) {
    const img = el("img", { src: `${view.graph}?v=${Date.now()}`, alt: "计划图（Graphviz）" });
    img.addEventListener("error", drawn);  // Graphviz failed: draw it here instead
    figure.append(img, el("figcaption", {}, "计划图"));
  } else {
    drawn();
  }
  return figure;
}

function drawPlan(steps) {
  // Layers by longest dependency chain; one box per step, arrows from dependencies.
  const NS = "http://www.w3.org/2000/svg";
  const depth = {};
  const bySeq = Object.fromEntries(steps.map((s) => [s.seqNo, s]));
  const level = (s, seen = new Set()) => {
    if (depth[s.seqNo] !== undefined) return depth[s.seqNo];
    if (seen.has(s.seqNo)) return 0;
    seen.add(s.seqNo);
    const deps = s.dependsOn.map((d) => bySeq[d]).filter(Boolean);
    return (depth[s.seqNo] = deps.length ? 1 + Math.max(...deps.map((d) => level(d, seen))) : 0);
  };
  steps.forEach((s) => level(s));
  const rows = {};
  steps.forEach((s) => (rows[depth[s.seqNo]] = rows[depth[s.seqNo]] || []).push(s));
  const W = 170, H = 52, GX = 30, GY = 36;
  const widest = Math.max(...Object.values(rows).map((r) => r.length));
  const width = widest * (W + GX) + GX, height = Object.keys(rows).length * (H + GY) + GY;
  const pos = {};
  Object.entries(rows).forEach(([d, row]) => row.forEach((s, i) => {
    const offset = (width - row.length * (W + GX) + GX) / 2;
    pos[s.seqNo] = { x: offset + i * (W + GX), y: GY / 2 + Number(d) * (H + GY) };
  }));
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "drawn-plan");
  const make = (tag, attrs, text) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text) node.textContent = text;
    svg.append(node);
    return node;
  };
  const defs = make("defs", {});
  const marker = document.createElementNS(NS, "marker");
  Object.entries({ id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto" })
    .forEach(([k, v]) => marker.setAttribute(k, v));
  const tip = document.createElementNS(NS, "path");
  tip.setAttribute("d", "M0,0 L10,5 L0,10 z");
  marker.append(tip);
  defs.append(marker);
  for (const s of steps) {
    for (const d of s.dependsOn) {
      if (!pos[d]) continue;
      make("line", { x1: pos[d].x + W / 2, y1: pos[d].y + H, x2: pos[s.seqNo].x + W / 2, y2: pos[s.seqNo].y,
        class: "edge", "marker-end": "url(#arrow)" });
    }
  }
  for (const s of steps) {
    const { x, y } = pos[s.seqNo];
    make("rect", { x, y, width: W, height: H, rx: 8, fill: STATUS_COLORS[s.label] || "#fff", class: "node", "data-seq": s.seqNo });
    make("text", { x: x + W / 2, y: y + 21, "text-anchor": "middle", class: "node-title" }, `${s.seqNo} · ${s.agentName}`);
    make("text", { x: x + W / 2, y: y + 40, "text-anchor": "middle", class: "node-label" }, s.label);
  }
  return svg;
}

// --- a turn, streamed --------------------------------------------------------------------------

async function* sseEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      let event = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      yield { event, data: data.length ? JSON.parse(data.join("\n")) : null };
    }
    if (done) return;
  }
}

function onChunk(chunk) {
  if (chunk.index < 0) {
    // Planner and finalizer text; the finalizer's summary is shown in the summary card instead.
    if (!state.view || !state.view.steps.length) { state.notes.push(chunk.content); render(); }
    return;
  }
  const known = state.view && state.view.steps.some((s) => s.seqNo === chunk.index);
  if (!chunk.agentChatResponse) {
    (state.progress[chunk.index] = state.progress[chunk.index] || []).push(chunk.content);
    const list = document.querySelector(`.card[data-seq="${chunk.index}"]`);
    if (known && list) {
      let ul = list.querySelector(".progress");
      if (!ul) { ul = el("ul", { class: "progress" }); list.querySelector(".requirement").after(ul); }
      ul.append(el("li", {}, chunk.content));
    }
  }
  if (!known || chunk.agentChatResponse) refresh();
  else if (state.view.steps.find((s) => s.seqNo === chunk.index).status !== "in_progress") refresh();
}

async function turn(input, conversationId) {
  if (state.streaming) return;
  state.streaming = true;
  document.body.classList.add("streaming");
  showError("");
  const id = conversationId || newId();
  if (id !== state.id) {
    state.id = id; state.view = null; state.progress = {}; state.notes = [];
    history.replaceState(null, "", `#c=${encodeURIComponent(id)}`);
  }
  if (input.messages) {
    state.view = { request: input.messages[0].content, steps: [], status: "running" };
    state.progress = {};
    state.notes = [];
    render();
  }
  try {
    const response = await fetch("/plangraph/stream", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ input, config: { configurable: { thread_id: id } } }),
    });
    if (response.status === 401) { location.href = "/login"; return; }
    if (!response.ok) { showError(await errorText(response)); return; }
    for await (const { event, data } of sseEvents(response)) {
      if (event === "error") { showError(`出错了：${data && data.message ? data.message : "服务器错误"}`); break; }
      if (event !== "data" || !data) continue;
      if ("index" in data) onChunk(data);
    }
  } catch (error) {
    showError(`连接中断：${error.message}（进度已保存，刷新页面可查看）`);
  } finally {
    state.streaming = false;
    state.notes = [];
    try {
      await refresh();
      await loadConversations();
    } finally {
      document.body.classList.remove("streaming");  // the page shows the turn's final state
    }
  }
}

// --- wiring ------------------------------------------------------------------------------------

function fromHash() {
  const match = location.hash.match(/^#c=(.+)$/);
  return match ? decodeURIComponent(match[1]) : null;
}

document.addEventListener("DOMContentLoaded", () => {
  $("#composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("#request").value.trim();
    if (!text) return;
    $("#request").value = "";
    // A request goes to the open conversation (so "其他参数不变…" builds on it); "新会话" starts another.
    turn({ messages: [{ role: "user", content: text }] }, state.id);
  });
  $("#request").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("#composer").requestSubmit(); }
  });
  $("#new-conversation").addEventListener("click", () => {
    history.replaceState(null, "", location.pathname);
    openConversation(null);
    $("#request").focus();
  });
  window.addEventListener("hashchange", () => {
    const id = fromHash();
    if (id && id !== state.id && !state.streaming) openConversation(id);
  });
  openConversation(fromHash()).catch((error) => showError(error.message));
});
