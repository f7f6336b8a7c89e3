// The Tascer viewer: reads the JSON API of `tascer serve` (docs/viewer.md).
// Plain JavaScript, no framework and no build step. Everything shown is
// put in with textContent, never as HTML.
"use strict";

const TOKEN_KEY = "tascer-serve-token";
const LIVE_EVERY_MS = 3000;
const PAGE = 50;

// The token: from the URL `tascer serve` printed (then taken out of the
// address bar), else from this tab's storage.
function takeToken() {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get("token");
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

const token = takeToken();
let liveTimer = null;

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + token } });
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try { message = (await response.json()).error || message; } catch (_) { /* not JSON */ }
    throw new ApiError(response.status, message);
  }
  return response;
}

async function apiJson(path) {
  return (await api(path)).json();
}

// el("td", {class: "num"}, "12", child…): an element with attributes and
// children (strings become text nodes).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function pill(text, kind) {
  return el("span", { class: "pill " + (kind || text || "") }, text || "?");
}

function time(ts) {
  return ts ? ts.replace("T", " ").slice(0, 19) : "";
}

function money(usd) {
  return typeof usd === "number" ? "$" + usd.toFixed(4) : "";
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

function show(...nodes) {
  const view = document.getElementById("view");
  view.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
}

function showError(err) {
  const text = err.status === 401
    ? "The access token is missing or wrong. Open the URL `tascer serve` printed (it ends in ?token=…)."
    : String(err.message || err);
  show(el("p", { class: "notice", "data-testid": "error" }, text));
}

// ---- the session list --------------------------------------------------

function filtersFromHash(params) {
  const keys = ["q", "status", "model", "since", "until", "offset"];
  return Object.fromEntries(keys.map((k) => [k, params.get(k) || ""]));
}

function sessionRow(s) {
  const label = s.title || s.first_prompt || "(no prompt)";
  return el("tr", { "data-testid": "session-row", "data-session": s.id },
    el("td", { class: "mono small" }, time(s.updated_at)),
    el("td", {}, pill(s.status)),
    el("td", { class: "small" }, s.model),
    el("td", { class: "num" }, s.num_turns),
    el("td", { class: "num" }, money(s.total_cost_usd)),
    el("td", {}, el("a", { href: "#/session/" + encodeURIComponent(s.id) }, label.slice(0, 120)),
      el("div", { class: "muted small mono" }, s.id)));
}

function sessionTable(sessions) {
  return el("table", { "data-testid": "sessions" },
    el("thead", {}, el("tr", {}, ["Updated", "Status", "Model", "Turns", "Cost", "Prompt or title"].map((h) => el("th", {}, h)))),
    el("tbody", {}, sessions.map(sessionRow)));
}

function filterForm(f) {
  const field = (name, label, attrs) => el("label", {}, label, el("input", { name, value: f[name], ...attrs }));
  const status = el("select", { name: "status" },
    ["", "open", "success", "error", "error_max_turns", "error_during_execution"].map((v) =>
      el("option", { value: v, selected: v === f.status }, v || "any")));
  const form = el("form", { class: "filters", "data-testid": "filters" },
    field("q", "Search", { type: "search", placeholder: "words in the prompt, id, directory" }),
    el("label", {}, "Status", status),
    field("model", "Model", { placeholder: "exact model" }),
    field("since", "Created since", { placeholder: "2026-11-01 or 7d" }),
    field("until", "Created before", { placeholder: "2026-12-01" }),
    el("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) params.set(k, v);
    location.hash = "#/?" + params.toString();
  });
  return form;
}

async function refreshLive(box) {
  try {
    const live = await apiJson("/api/live");
    const items = live.sessions.map((s) => el("li", {},
      pill("open"), " ", el("a", { href: "#/session/" + encodeURIComponent(s.id) }, (s.first_prompt || s.id).slice(0, 80)),
      el("span", { class: "muted small" }, " · updated " + time(s.updated_at) + " · " + s.num_turns + " turn(s)")));
    box.replaceChildren(el("strong", {}, "Open sessions (refreshed every few seconds)"),
      items.length ? el("ul", { class: "plain" }, items) : el("div", { class: "muted" }, "none running"));
    setStatus("live · " + time(live.now));
  } catch (err) {
    box.replaceChildren(el("span", { class: "muted" }, "live sessions: " + err.message));
  }
}

async function listView(params) {
  const f = filtersFromHash(params);
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) query.set(k, v);
  query.set("limit", PAGE);
  const page = await apiJson("/api/sessions?" + query.toString());
  const live = el("div", { class: "live", "data-testid": "live" }, "…");
  const offset = Number(f.offset || 0);
  const go = (to) => { const p = new URLSearchParams(query); p.delete("limit"); p.set("offset", to); return "#/?" + p.toString(); };
  show(
    el("h2", {}, "Sessions"),
    live,
    filterForm(f),
    el("p", { class: "muted small", "data-testid": "total" }, page.total + " session(s) match"),
    page.sessions.length ? sessionTable(page.sessions) : el("p", {}, "No sessions match."),
    el("div", { class: "pager" },
      offset > 0 ? el("a", { href: go(Math.max(0, offset - PAGE)) }, "← newer") : null,
      offset + PAGE < page.total ? el("a", { href: go(offset + PAGE) }, "older →") : null));
  await refreshLive(live);
  liveTimer = setInterval(() => refreshLive(live), LIVE_EVERY_MS);
}

// ---- one session -------------------------------------------------------

function verifyBadge(v) {
  if (v.ok) {
    const r = v.report || {};
    const signed = r.signed ? ", head signature valid" : ", head not signed with a trusted key";
    return el("div", { class: "badge ok", "data-testid": "verify-badge", "data-ok": "true" },
      "✓ Ledger verified: " + (r.entries_checked ?? "?") + " entries intact" + signed);
  }
  const broken = v.report && v.report.first_broken;
  const detail = broken
    ? "First broken entry: #" + broken.seq + " (" + ((broken.reason && broken.reason.type) || "?") + "): " + broken.detail
    : (v.lines || []).join(" ");
  return el("div", { class: "badge bad", "data-testid": "verify-badge", "data-ok": "false" },
    "✗ LEDGER BROKEN — this session's record does not verify",
    el("span", { class: "detail", "data-testid": "first-broken" }, detail));
}

function decisionText(d) {
  if (!d) return el("span", { class: "muted small" }, "no decision recorded");
  const who = d.decider_kind ? (d.decider ? d.decider_kind + " " + d.decider : d.decider_kind) : "?";
  return el("span", { "data-testid": "decision" },
    pill(d.decision || "?", d.decision), " by ", el("code", {}, who),
    d.reason ? el("span", { class: "muted small" }, " — " + d.reason.split("\n")[0]) : null);
}

function diffBlock(text) {
  return el("pre", { class: "diff" }, text.split("\n").map((line) => {
    const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
    return el("span", { class: kind }, line + "\n");
  }));
}

function gateList(title, gates) {
  if (!gates || !gates.length) return null;
  return el("div", { class: "small" }, title + ": ",
    gates.map((g) => [pill(g.gate, g.passed ? "ok" : "bad"), " "]));
}

function callCard(c) {
  const hooks = c.hooks.map((h) => el("li", {}, pill(h.outcome || "?", h.outcome === "success" ? "ok" : "bad"), " ",
    h.event + " hook ", el("code", {}, (h.hook || "").slice(0, 100)), h.duration_ms != null ? " · " + h.duration_ms + " ms" : ""));
  const reviews = c.reviews.map((r) => el("li", {}, "reviewer ", el("code", {}, r.reviewer), ": ",
    pill(r.verdict, r.verdict === "allow" ? "ok" : r.verdict === "deny" ? "bad" : ""), " ", el("span", { class: "muted small" }, r.reason)));
  const evidence = c.evidence.map((e) => el("div", {},
    el("div", { class: "small muted" }, e.kind + " " + e.digest.slice(0, 19) + "…" + (e.truncated ? " (cut)" : "")),
    e.text == null ? el("div", { class: "notice small" }, e.error || "not readable")
      : e.text === "" ? el("div", { class: "muted small" }, "(empty)")
      : e.kind === "diff" ? diffBlock(e.text) : el("pre", {}, e.text)));
  const output = c.output == null ? null : el("details", {}, el("summary", { class: "small" }, "output"),
    el("pre", {}, typeof c.output === "string" ? c.output : JSON.stringify(c.output, null, 2)));
  return el("div", { class: "call " + c.status, "data-testid": "call", "data-tool": c.tool, "data-status": c.status },
    el("div", { class: "call-head" },
      el("span", { class: "tool" }, c.tool), pill(c.status),
      el("span", { class: "muted small" }, time(c.started_at) + (c.duration_ms != null ? " · " + c.duration_ms + " ms" : "")),
      el("span", { class: "muted small mono" }, c.tool_use_id)),
    el("pre", {}, JSON.stringify(c.input, null, 2)),
    el("div", {}, "Permission: ", decisionText(c.decision)),
    gateList("Gates before", c.pre_gates), gateList("Gates after", c.post_gates),
    hooks.length ? el("ul", { class: "plain small" }, hooks) : null,
    reviews.length ? el("ul", { class: "plain small" }, reviews) : null,
    evidence, output);
}

function messageEvents(messages, calls) {
  const byId = new Map(calls.map((c) => [c.tool_use_id, c]));
  const events = [];
  for (const m of messages) {
    if (m.type === "user" && typeof m.message.content === "string") {
      events.push(el("div", { class: "event prompt" }, el("strong", {}, "Prompt "), m.message.content));
    } else if (m.type === "assistant") {
      for (const block of m.message.content || []) {
        if (block.type === "text" && block.text.trim()) events.push(el("div", { class: "event text" }, block.text));
        if (block.type === "tool_use") {
          const call = byId.get(block.id);
          byId.delete(block.id);
          events.push(call ? callCard(call) : el("div", { class: "event" }, "tool call " + block.name + " (not in the ledger)"));
        }
      }
    } else if (m.type === "result") {
      events.push(el("div", { class: "event result" }, "Result: " + m.subtype + " · " + m.num_turns + " turn(s) · " + money(m.total_cost_usd)));
    }
  }
  for (const call of byId.values()) events.push(callCard(call));
  return events;
}

async function downloadAttestation(id, button) {
  try {
    const blob = await (await api("/api/sessions/" + encodeURIComponent(id) + "/attestation")).blob();
    const link = el("a", { href: URL.createObjectURL(blob), download: id + ".intoto.jsonl" });
    document.body.append(link);
    link.click();
    link.remove();
    button.textContent = "Attestation downloaded";
  } catch (err) {
    button.replaceWith(el("span", { class: "notice small" }, "No attestation: " + err.message));
  }
}

async function sessionView(id) {
  const path = "/api/sessions/" + encodeURIComponent(id);
  const [t, v] = await Promise.all([apiJson(path), apiJson(path + "/verify").catch((err) => ({ error: err }))]);
  const s = t.session;
  const badge = v.error ? el("div", { class: "badge bad", "data-testid": "verify-badge", "data-ok": "false" }, "Cannot verify: " + v.error.message) : verifyBadge(v);
  const button = el("button", { type: "button", "data-testid": "attestation" }, "Download attestation (in-toto / DSSE)");
  button.addEventListener("click", () => downloadAttestation(id, button));
  const models = t.metrics.filter((m) => m.kind === "model_call");
  show(
    el("p", {}, el("a", { href: "#/" }, "← all sessions")),
    el("h2", {}, s.title || s.first_prompt || s.id),
    badge,
    el("dl", { class: "facts" },
      el("dt", {}, "Session"), el("dd", { class: "mono", "data-testid": "session-id" }, s.id),
      el("dt", {}, "Status"), el("dd", {}, pill(s.status)),
      el("dt", {}, "Model"), el("dd", {}, s.model),
      el("dt", {}, "Directory"), el("dd", { class: "mono" }, s.cwd),
      el("dt", {}, "Created"), el("dd", {}, time(s.created_at)),
      el("dt", {}, "Turns · cost"), el("dd", {}, s.num_turns + " · " + money(s.total_cost_usd)),
      el("dt", {}, "Model calls"), el("dd", {}, models.length + " · " + models.reduce((n, m) => n + (m.duration_ms || 0), 0) + " ms"),
      el("dt", {}, "Ledger"), el("dd", {}, t.ledger ? t.ledger.entries + " entries" + (t.ledger.head ? " · head " + t.ledger.head.slice(0, 23) + "…" : "") : "no entries")),
    el("p", {}, button),
    el("h3", {}, "Timeline (" + t.calls.length + " tool call(s))"),
    el("div", { "data-testid": "timeline" }, messageEvents(t.messages, t.calls)),
    t.session_hooks.length ? el("h3", {}, "Session hooks") : null,
    t.session_hooks.length ? el("ul", { class: "plain small" }, t.session_hooks.map((h) => el("li", {}, time(h.ts) + " " + h.event + " " + (h.hook || "") + " → " + h.outcome))) : null,
    t.reviews.length ? el("h3", {}, "Session reviews") : null,
    t.reviews.length ? el("ul", { class: "plain small" }, t.reviews.map((r) => el("li", {}, r.reviewer + ": " + r.verdict + " — " + r.reason))) : null);
  setStatus("session " + id.slice(0, 8));
}

// ---- contracts ---------------------------------------------------------

async function contractsView() {
  const c = await apiJson("/api/contracts");
  const rows = c.contracts.map((k) => el("tr", { "data-testid": "contract-row" },
    el("td", { class: "mono" }, k.name), el("td", {}, pill(k.status)),
    el("td", {}, k.title, k.outcome ? el("div", { class: "muted small" }, k.outcome) : null, k.error ? el("div", { class: "notice small" }, k.error) : null),
    el("td", { class: "mono small" }, k.session ? el("a", { href: "#/session/" + encodeURIComponent(k.session) }, k.session) : "")));
  const parts = [
    el("h2", {}, "Contracts"),
    el("p", { class: "muted small" }, c.dir + " · completed: " + c.completed_dir),
    rows.length ? el("table", { "data-testid": "contracts" },
      el("thead", {}, el("tr", {}, ["Contract", "Status", "Title / outcome", "Session"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)) : el("p", {}, "No contracts in this directory.")];
  if (c.queue) parts.push(...queueParts(c.queue));
  else parts.push(el("p", { class: "muted small" }, "No queue configured (tascer serve --queue postgres://… or TASCER_QUEUE)."));
  show(...parts);
  setStatus("contracts");
}

function queueParts(q) {
  const jobs = q.jobs.map((j) => el("tr", { "data-testid": "job-row" },
    el("td", { class: "num" }, j.id), el("td", { class: "mono" }, j.contract_path), el("td", {}, pill(j.status)),
    el("td", { class: "num" }, j.attempts + "/" + j.max_attempts),
    el("td", { class: "small" }, j.lease ? "pid " + j.lease.pid + " on " + j.lease.host : j.branch || ""),
    el("td", { class: "small" }, j.why || "")));
  const workers = q.workers.map((w) => el("li", { "data-testid": "worker" },
    el("code", {}, w.holder), " pid " + w.pid + " on " + w.host + " · job " + w.job + " (" + w.contract + ") · heartbeat " + time(w.heartbeat_at) + " · lease until " + time(w.expires_at)));
  return [
    el("h2", {}, "Queue " + q.name),
    el("p", { class: "muted small" }, q.server),
    el("h3", {}, "Workers (" + q.workers.length + ")"),
    workers.length ? el("ul", { class: "plain" }, workers) : el("p", { class: "muted" }, "No worker holds a job now."),
    el("h3", {}, "Jobs (" + q.jobs.length + ")"),
    el("table", {}, el("thead", {}, el("tr", {}, ["Job", "Contract", "Status", "Attempts", "Worker / branch", "Why"].map((h) => el("th", {}, h)))),
      el("tbody", {}, jobs))];
}

// ---- routing -----------------------------------------------------------

async function route() {
  clearInterval(liveTimer);
  liveTimer = null;
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  document.getElementById("nav-sessions").classList.toggle("active", !path.startsWith("/contracts"));
  document.getElementById("nav-contracts").classList.toggle("active", path.startsWith("/contracts"));
  if (!token) {
    showError(new ApiError(401, "no token"));
    return;
  }
  try {
    if (path.startsWith("/session/")) await sessionView(decodeURIComponent(path.slice("/session/".length)));
    else if (path.startsWith("/contracts")) await contractsView();
    else await listView(new URLSearchParams(query || ""));
  } catch (err) {
    showError(err);
  }
}

window.addEventListener("hashchange", route);
route();
