// oam-operator ui: the page's script (docs/ui.md). It draws the view named by the URL's hash
// from the UI server's JSON and redraws it on each server-sent `change` event; it asks for more
// only when the user opens something (an object of the resource tree, a diff, an action).
"use strict";

const TOKEN = document.querySelector('meta[name="oam-ui-token"]').content;
const main = document.getElementById("main");
const banner = document.getElementById("banner");
let version = -1;
let drawn = null;  // the route currently drawn: controls survive redraws of the same route
let opened = null;  // the object of the resource tree whose panel is open

// A reply of the server that says what went wrong (`internal error: …`, a refusal): its words are
// shown as they are, never a TypeError of this script about a field the reply does not have.
class ServerError extends Error {}

function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}
function cls(value) { return String(value ?? "").replace(/[^A-Za-z]/g, ""); }
function appPath(r) { return `/api/apps/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`; }
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "app" && parts.length === 3) return {view: "app", namespace: parts[1], name: parts[2]};
  if (parts[0] === "graph") return {view: "graph"};
  return {view: "list"};
}
async function readBody(response) {
  try {
    return await response.json();
  } catch (error) {
    throw new ServerError(`the UI server answered ${response.status} ${response.statusText} without JSON`);
  }
}
// A view's JSON. An answer that is not OK and carries no `state` (a 500 `internal error: …`, a
// refusal) is thrown as a ServerError with the server's own words.
async function getJSON(url) {
  const response = await fetch(url, {headers: {Accept: "application/json"}});
  const body = await readBody(response);
  if (!response.ok && (!body || !body.state)) throw new ServerError(body && body.error ? body.error : `${response.status} ${response.statusText}`);
  return {status: response.status, body};
}
async function post(url) {
  const response = await fetch(url, {method: "POST", headers: {"X-OAM-UI-Token": TOKEN, Accept: "application/json"}});
  return {ok: response.ok, body: await readBody(response)};
}
function showState(state) {
  document.getElementById("scope").textContent = state.scope ? "Applications " + state.scope : "";
  const lines = [];
  if (state.fatal) lines.push(`<p class="error">Error: ${esc(state.fatal)}</p>`);
  if (state.notice) lines.push(`<p class="notice">${esc(state.notice)}</p>`);
  if (state.error) lines.push(`<p class="error">Error: ${esc(state.error)}</p>`);
  banner.innerHTML = lines.join("");
}

// ---- times: relative, the full timestamp on hover -----------------------------------------
function ago(iso, now = Date.now()) {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return String(iso ?? "");
  const seconds = Math.round((now - at) / 1000), size = Math.abs(seconds);
  const [n, unit] = size < 60 ? [size, "s"] : size < 3600 ? [Math.floor(size / 60), "m"]
    : size < 86400 ? [Math.floor(size / 3600), "h"] : [Math.floor(size / 86400), "d"];
  if (size < 5) return "just now";
  return seconds >= 0 ? `${n}${unit} ago` : `in ${n}${unit}`;
}
function when(iso) {
  if (!iso) return `<span class="muted">&lt;none&gt;</span>`;
  return `<time datetime="${esc(iso)}" title="${esc(iso)}" data-rel>${esc(ago(iso))}</time>`;
}
setInterval(() => document.querySelectorAll("time[data-rel]").forEach((t) => { t.textContent = ago(t.dateTime); }), 15000);

// A text shown in full once per page: a later repeat (a condition or an Event carrying the Ready
// message, or quoting it) points back to it instead of printing it again.
const ABOVE = `<span class="muted">(the message above)</span>`;
function onceIn(seen) {
  return (text) => {
    if (!text) return "";
    if (seen.has(text)) return ABOVE;
    const quoted = [...seen].find((shown) => shown.length >= 20 && text.includes(shown));
    if (quoted) {
      const at = text.indexOf(quoted);
      return esc(text.slice(0, at)) + ABOVE + esc(text.slice(at + quoted.length));
    }
    seen.add(text);
    return esc(text);
  };
}

// ---- the Application list -------------------------------------------------------------------
function listShell() {
  main.innerHTML = `<h2>Applications</h2>
  <form class="controls" role="search" id="filters">
    <label>Search <input id="q" type="search" placeholder="namespace/name or message" autocomplete="off"></label>
    <label>State <select id="state-filter">
      <option value="">any</option><option>Pending</option><option>Processing</option><option>Waiting</option>
      <option>Ready</option><option>Drifted</option><option>Error</option><option>DeletionPending</option><option>Deleting</option>
      <option>&lt;none&gt;</option>
    </select></label>
    <span id="count" class="muted" aria-live="polite">loading…</span>
  </form>
  <div class="table-wrap"><table aria-describedby="count"><thead><tr>
    <th scope="col">Namespace</th><th scope="col">Name</th><th scope="col">State</th>
    <th scope="col" class="wide">Status</th><th scope="col">Revision</th>
    <th scope="col" class="wide">Objects</th><th scope="col" class="wide">Clusters</th><th scope="col">Age</th>
  </tr></thead><tbody id="rows">${placeholder("loading", "Loading Applications…")}</tbody></table></div>`;
  const redraw = () => drawList();
  document.getElementById("q").addEventListener("input", redraw);
  document.getElementById("state-filter").addEventListener("change", redraw);
  document.getElementById("filters").addEventListener("submit", (e) => { e.preventDefault(); redraw(); });
}
function placeholder(kind, text) {
  return `<tr class="placeholder" data-placeholder="${kind}"><td colspan="8">${text}</td></tr>`;
}
// What an empty table says: why it is empty, and what to do about it.
function emptyList(state, filtered) {
  if (state.fatal || state.error) return placeholder("error", "No Applications to show: see the error above.");
  if (!state.synced) return placeholder("loading", "Waiting for the cluster's first list of Applications…");
  if (filtered) return placeholder("filtered", "No Application matches the search and state.");
  return placeholder("empty", `No Applications ${esc(state.scope)} yet. Create one with <code>kubectl apply -f</code> an Application manifest (see <code>examples/shop.yaml</code>), then it shows here at once.`);
}
async function drawList() {
  const q = document.getElementById("q").value, state = document.getElementById("state-filter").value;
  const {body} = await getJSON(`/api/apps?q=${encodeURIComponent(q)}&state=${encodeURIComponent(state)}`);
  showState(body.state);
  const rows = body.rows.map((r) => `<tr data-app="${esc(r.namespace)}/${esc(r.name)}">
    <td>${esc(r.namespace)}</td>
    <td><a href="#/app/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}">${esc(r.name)}</a></td>
    <td class="state-${cls(r.state)}${r.drifted ? " tone-warn" : ""}" data-col="state">${esc(r.state)}${r.suspended ? " (suspended)" : ""}${r.drifted ? " (drifted)" : ""}</td>
    <td class="wide" data-col="message"${r.detail && r.detail !== r.message ? ` title="${esc(r.detail)}"` : ""}>${esc(r.message)}</td><td data-col="revision">${esc(r.revision)}</td>
    <td class="wide">${esc(r.readyObjects)}/${esc(r.objects)}</td><td class="wide" data-col="clusters">${esc(r.clusters)}</td>
    <td>${r.created ? `<time datetime="${esc(r.created)}" title="${esc(r.created)}">${esc(r.age)}</time>` : esc(r.age)}</td></tr>`);
  document.getElementById("rows").innerHTML = rows.join("") || emptyList(body.state, Boolean(q || state));
  const waiting = body.state.synced ? "" : " (waiting for the cluster)";
  document.getElementById("count").textContent = `${body.rows.length} Application${body.rows.length === 1 ? "" : "s"}${waiting}`;
}

// ---- one Application ------------------------------------------------------------------------
function appShell(r) {
  opened = null;
  main.innerHTML = `<p><a href="#/">← Applications</a></p>
  <h2>Application ${esc(r.namespace)}/${esc(r.name)}</h2>
  <div class="actions" role="group" aria-label="Actions">
    <button type="button" data-action="reconcile" disabled>Reconcile</button>
    <button type="button" data-action="suspend" disabled>Suspend</button>
    <button type="button" data-action="resume" disabled>Resume</button>
    <button type="button" id="show-diff">Show diff</button>
  </div>
  <p id="answer" role="status" aria-live="polite"></p>
  <div id="detail"><p class="muted" data-placeholder="loading">Loading the Application…</p></div>
  <section aria-labelledby="history-h"><h3 id="history-h">Revision history</h3><div id="history" class="muted">loading…</div></section>
  <section aria-labelledby="diff-h"><h3 id="diff-h">Diff</h3><pre id="diff" class="muted">Not computed yet: “Show diff” runs oam-operator diff.</pre></section>
  <aside id="object" class="drawer" hidden aria-labelledby="object-h"></aside>`;
  main.querySelectorAll("button[data-action]").forEach((button) =>
    button.addEventListener("click", () => act(r, button.dataset.action)));
  document.getElementById("show-diff").addEventListener("click", () => showDiff(r));
}
async function act(r, action) {
  if (!window.confirm(`${action[0].toUpperCase()}${action.slice(1)} Application ${r.namespace}/${r.name}?`)) return;
  const answer = document.getElementById("answer");
  answer.className = ""; answer.textContent = `${action}: asking the API server…`;
  const {ok, body} = await post(`${appPath(r)}/${action}`);
  answer.className = ok ? "" : "failed";
  answer.textContent = ok
    ? `${body.message} (resourceVersion ${body.resourceVersion}, generation ${body.generation}, spec.suspend ${body.suspend})`
    : `Error: ${body.error}`;
}
async function rollbackTo(r, revision) {
  if (!window.confirm(`Roll back Application ${r.namespace}/${r.name} to revision ${revision}?`)) return;
  const answer = document.getElementById("answer");
  answer.className = ""; answer.textContent = `rollback to revision ${revision}: asking the API server…`;
  const {ok, body} = await post(`${appPath(r)}/rollback/${revision}`);
  answer.className = ok ? "" : "failed";
  answer.textContent = ok ? body.message : `Error: ${body.error}`;
}
function setBlocked(button, reason) {
  button.disabled = Boolean(reason);
  if (reason) button.title = reason; else button.removeAttribute("title");
}
function outcomeCell(outcome, seen) {
  const parts = [`<span class="st-${cls(outcome.state)}">${esc(outcome.state)}</span>`];
  if (outcome.at) parts.push(when(outcome.at));
  if (outcome.state === "Error") {
    if (outcome.reason) parts.push(esc(outcome.reason) + (outcome.message ? ":" : ""));
    if (outcome.message) parts.push(seen.has(outcome.message) ? ABOVE : `<span class="clip" title="${esc(outcome.message)}">${esc(outcome.message)}</span>`);
  }
  return parts.join(" ");
}
async function drawHistory(r, seen) {
  const box = document.getElementById("history");
  if (!box) return;
  let answer;
  try {
    answer = await getJSON(`${appPath(r)}/history`);
  } catch (error) {  // the history's own failure, shown where the history would be
    if (!(error instanceof ServerError)) throw error;
    box.className = "error"; box.textContent = `Error: ${error.message}`; return;
  }
  const {body} = answer;
  box.className = "";
  if (!body.revisions.length) { box.innerHTML = `<p class="muted">No revisions recorded.</p>`; return; }
  const rows = body.revisions.map((v) => `<tr data-revision="${v.revision}"${v.current ? ' aria-current="true"' : ""}>
    <td>${v.revision}${v.current ? " (current)" : ""}</td><td class="wide">${when(v.created)}</td>
    <td>${outcomeCell(v.outcome, seen)}${v.rolledBack ? ` <strong class="rolled-back">${v.rolledBack === "Restored" ? "automatic restore" : "rolled back"}</strong>` : ""}</td><td>${v.restores === undefined ? "-" : esc(v.restores)}</td>
    <td class="wide">${esc(v.changeCause || "<none>")}</td>
    <td><button type="button" data-rollback="${v.revision}" aria-label="Roll back to revision ${v.revision}"${v.rollbackBlocked ? ` disabled title="${esc(v.rollbackBlocked)}"` : ""}>Roll back</button></td></tr>`);
  box.innerHTML = `<div class="table-wrap"><table><thead><tr><th scope="col">Revision</th><th scope="col" class="wide">Created</th><th scope="col">Outcome</th><th scope="col">Restores</th><th scope="col" class="wide">Change cause</th><th scope="col">Action</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
  box.querySelectorAll("button[data-rollback]").forEach((button) =>
    button.addEventListener("click", () => rollbackTo(r, button.dataset.rollback)));
}
function driftSection(d, once) {
  const objects = d.objects.map((o) => `<li>${esc(o.kind)} ${esc(o.namespace ? o.namespace + "/" : "")}${esc(o.name)}: ${esc(o.what)}${o.heldUntil ? `; held until ${when(o.heldUntil)}` : ""}</li>`).join("");
  if (!d.drifted && !d.objects.length) return `<section aria-labelledby="drift-h"><h3 id="drift-h">Drift</h3><p id="drift" class="muted">No drift${d.message ? ": " + once(d.message) : ""}</p></section>`;
  return `<section aria-labelledby="drift-h" class="drifted"><h3 id="drift-h">Drift</h3><p id="drift" class="warning">Drifted${d.reason ? " (" + esc(d.reason) + ")" : ""}: ${once(d.message)}</p>${objects ? `<ul aria-label="drifted objects">${objects}</ul>` : ""}</section>`;
}
async function showDiff(r) {
  const pre = document.getElementById("diff");
  pre.className = "muted"; pre.textContent = "computing (server-side dry run)…";
  const {ok, body} = await post(`${appPath(r)}/diff`);
  pre.className = ok ? "" : "error";
  pre.textContent = ok ? body.diff : `Error: ${body.error}`;
}

// ---- the resource tree: Application → bundles → objects; an object opens to its panel -------
function objectKey(i) { return [i.group, i.version, i.kind, i.namespace, i.name].join("|"); }
function objectQuery(i) {
  return new URLSearchParams({group: i.group, version: i.version, kind: i.kind, namespace: i.namespace, name: i.name}).toString();
}
// A bundle's objects: one row each (the leaves of the tree), the object a button that opens its panel.
// `Kind name`, or `Kind ns/name` outside the Application's namespace: `oam-operator status --tree`'s label.
function itemLabel(i, namespace) {
  return `${i.kind} ${i.namespace && i.namespace !== namespace ? i.namespace + "/" : ""}${i.name}`;
}
function treeItems(items, caption, namespace) {
  if (!items.length) return `<p class="muted">no objects yet</p>`;
  return `<div class="table-wrap"><table class="leaves"><caption class="muted">${esc(caption)}</caption><thead><tr><th scope="col">Object</th><th scope="col">Phase</th><th scope="col">kstatus</th></tr></thead><tbody>${items.map((i) => `<tr data-object="${esc(objectKey(i))}">
    <td><button type="button" class="obj" data-key="${esc(objectKey(i))}" aria-haspopup="dialog">${esc(itemLabel(i, namespace))}</button></td>
    <td class="st-${cls(i.phase)}">${esc(i.phase)}</td><td class="st-${cls(i.status)}">${esc(i.status)}</td></tr>`).join("")}</tbody></table></div>`;
}
function bindTree(r, items) {
  const byKey = Object.fromEntries(items.map((i) => [objectKey(i), i]));
  document.querySelectorAll("#detail button.obj").forEach((button) =>
    button.addEventListener("click", () => openObject(r, byKey[button.dataset.key])));
}
function panelTabs(active) {
  return ["manifest", "events", "diff"].map((tab) => `<button type="button" role="tab" id="tab-${tab}" aria-controls="pane-${tab}" aria-selected="${tab === active}" data-tab="${tab}">${tab[0].toUpperCase() + tab.slice(1)}</button>`).join("");
}
async function openObject(r, item) {
  opened = {item};
  const panel = document.getElementById("object");
  const label = itemLabel(item, r.namespace);
  panel.hidden = false;
  panel.innerHTML = `<div class="drawer-head"><h3 id="object-h" tabindex="-1">${esc(label)}</h3>
    <button type="button" id="object-close" aria-label="Close ${esc(label)}">Close</button></div>
    <p class="muted">${esc(item.group ? item.group + "/" : "")}${esc(item.version)}${item.namespace ? ` · namespace ${esc(item.namespace)}` : " · cluster-scoped"} · phase ${esc(item.phase || "none")} · kstatus ${esc(item.status || "none")}</p>
    <div role="tablist" aria-label="${esc(label)}">${panelTabs("manifest")}</div>
    <div id="pane-manifest" role="tabpanel" aria-labelledby="tab-manifest"><pre class="muted">reading the live object…</pre></div>
    <div id="pane-events" role="tabpanel" aria-labelledby="tab-events" hidden><p class="muted">reading…</p></div>
    <div id="pane-diff" role="tabpanel" aria-labelledby="tab-diff" hidden><p class="muted">Not computed yet: this tab runs the object's part of oam-operator diff (a server-side dry run).</p></div>`;
  document.getElementById("object-close").addEventListener("click", closeObject);
  panel.querySelectorAll("[role=tab]").forEach((tab) => tab.addEventListener("click", () => selectTab(r, item, tab.dataset.tab)));
  document.getElementById("object-h").focus();
  let body;
  try {
    ({body} = await getJSON(`${appPath(r)}/object?${objectQuery(item)}`));
  } catch (error) {
    if (!opened || opened.item !== item) return;
    const text = `<p class="error">Error: ${esc(error.message)}</p>`;
    document.getElementById("pane-manifest").innerHTML = text; document.getElementById("pane-events").innerHTML = text;
    return;
  }
  if (!opened || opened.item !== item) return;
  const manifest = document.getElementById("pane-manifest");
  manifest.innerHTML = body.manifest === null ? `<p class="notice">${esc(body.label)} does not exist on the cluster.</p>`
    : `<pre class="manifest">${esc(body.manifest)}</pre>`;
  const events = document.getElementById("pane-events");
  events.innerHTML = body.eventsError ? `<p class="notice">Events: ${esc(body.eventsError)}</p>` : eventTable(body.events, onceIn(new Set()));
  document.getElementById("tab-events").textContent = `Events (${body.events.length})`;
}
async function selectTab(r, item, tab) {
  document.querySelectorAll("#object [role=tab]").forEach((t) => t.setAttribute("aria-selected", String(t.dataset.tab === tab)));
  document.querySelectorAll("#object [role=tabpanel]").forEach((p) => { p.hidden = p.id !== `pane-${tab}`; });
  if (tab !== "diff") return;
  const pane = document.getElementById("pane-diff");
  pane.innerHTML = `<pre class="muted">computing (server-side dry run)…</pre>`;
  const {ok, body} = await post(`${appPath(r)}/object/diff?${objectQuery(item)}`);
  if (!opened || opened.item !== item) return;
  pane.innerHTML = ok ? `<pre class="diff">${esc(body.diff)}</pre>` : `<p class="error">Error: ${esc(body.error)}</p>`;
}
function closeObject() {
  const panel = document.getElementById("object");
  if (!panel || panel.hidden) return;
  panel.hidden = true; panel.innerHTML = "";
  const key = opened && objectKey(opened.item);
  opened = null;
  // The button that opened it, as drawn now: a live update may have drawn the tree again meanwhile.
  const opener = key && [...document.querySelectorAll("#detail button.obj")].find((b) => b.dataset.key === key);
  if (opener) opener.focus();
}
document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeObject(); });

// The last revision's critical path, as oam-operator explain prints it (docs/operator.md#explain).
function explainSection(lines) {
  if (!lines || !lines.length) return "";
  return `<section aria-labelledby="explain-h"><h3 id="explain-h">Time to Ready</h3><p id="app-explain">${lines.map(esc).join("<br>")}</p></section>`;
}

// A fleet Application's clusters (docs/ui.md#one-application): each links to its cluster Application.
function clusterTable(clusters) {
  if (!clusters.length) return "";
  const ready = clusters.filter((c) => c.state === "Ready").length;
  const count = (c) => (c.objects === null ? "–" : `${c.readyObjects ?? 0}/${c.objects}`);
  return `<section aria-labelledby="clusters-h"><h3 id="clusters-h">Clusters</h3><p class="muted" id="cluster-summary">${ready}/${clusters.length} ready</p>
    <div class="table-wrap"><table aria-label="clusters"><thead><tr><th scope="col">Cluster</th><th scope="col">State</th><th scope="col">Revision</th><th scope="col">Ready</th><th scope="col" class="wide">Message</th></tr></thead><tbody>${clusters.map((c) =>
    `<tr data-cluster="${esc(c.name)}"><td><a href="#/app/${encodeURIComponent(c.namespace)}/${encodeURIComponent(c.application)}" title="Application ${esc(c.namespace)}/${esc(c.application)}">${esc(c.name)}</a></td><td class="state-${cls(c.state)}">${esc(c.state)}</td><td>${c.fleetRevision === null ? "–" : "r" + esc(c.fleetRevision)}</td><td>${count(c)}</td><td class="wide">${esc(c.message)}</td></tr>`).join("")}</tbody></table></div></section>`;
}
// The runs of lifecycle hooks (docs/ui.md#one-application), a failed one marked as a rolled-back revision is.
function hookTable(hooks, namespace, once) {
  if (!hooks.length) return "";
  return `<section aria-labelledby="hooks-h"><h3 id="hooks-h">Hooks</h3>
    <div class="table-wrap"><table aria-label="hooks"><thead><tr><th scope="col">Phase</th><th scope="col">Object</th><th scope="col">Run</th><th scope="col">State</th><th scope="col" class="wide">Delete policy</th><th scope="col">Started</th><th scope="col" class="wide">Message</th></tr></thead><tbody>${hooks.map((h) =>
    `<tr data-hook="${esc(h.phase)}|${esc(h.kind)}|${esc(h.name)}"><td>${esc(h.phase)}</td><td>${esc(itemLabel(h, namespace))}</td><td>${esc(h.run)}</td><td class="st-${cls(h.state)}">${esc(h.state)}${h.failed ? ` <strong class="hook-failed">failed</strong>` : ""}</td><td class="wide">${esc(h.deletePolicy)}</td><td>${h.startedAt ? when(h.startedAt) : "-"}</td><td class="wide">${h.message ? once(h.message) : ""}</td></tr>`).join("")}</tbody></table></div></section>`;
}
function eventTable(events, once) {
  if (!events.length) return `<p class="muted">no Events</p>`;
  return `<div class="table-wrap"><table><thead><tr><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Message</th><th scope="col" class="wide">Count</th><th scope="col">Last seen</th></tr></thead><tbody>${events.map((e) =>
    `<tr><td class="${e.type === "Warning" ? "tone-warn" : ""}">${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${once(e.message)}</td><td class="wide">${esc(e.count)}</td><td>${when(e.time)}</td></tr>`).join("")}</tbody></table></div>`;
}
async function drawApp(r) {
  const {status, body} = await getJSON(appPath(r));
  showState(body.state);
  const detail = document.getElementById("detail");
  if (status !== 200) { detail.innerHTML = `<p class="error">${esc(body.error)}</p>`; return; }
  const a = body.app;
  main.querySelectorAll("button[data-action]").forEach((button) => setBlocked(button, a.blocked[button.dataset.action]));
  const seen = new Set(), once = onceIn(seen);
  const message = once(a.message);  // the Ready message, in full, first
  const drift = driftSection(a.drift, once);
  const waves = a.bundles.map((b) => `<li class="bundle" data-bundle="${esc(b.name)}" data-state="${esc(b.state)}" aria-label="bundle ${esc(b.name)}">
    <h4>bundle ${esc(b.name)} <span class="state-${cls(b.state)}">${esc(b.state)}</span> <span class="muted">${b.ready}/${b.objects} ready${b.waves ? `, waves ${b.waves.first}–${b.waves.last}` : ""}${b.dependsOn.length ? ", depends on " + esc(b.dependsOn.join(", ")) : ""}</span></h4>
    ${b.waits ? `<p class="waits">${esc(b.waits)}</p>` : ""}${treeItems(b.items, `objects of ${b.name}`, a.namespace)}</li>`);
  const extra = [["(no bundle)", a.unassigned], ["(pruning)", a.pruning]].filter(([, items]) => items.length)
    .map(([title, items]) => `<li class="bundle"><h4>${esc(title)}</h4>${treeItems(items, title, a.namespace)}</li>`);
  const deps = a.dependencies.length ? `<p>Depends on: ${a.dependencies.map((d) =>
    `<a href="#/app/${encodeURIComponent(d.namespace)}/${encodeURIComponent(d.name)}">${esc(d.namespace)}/${esc(d.name)}</a> (<span class="st-${cls(d.state)}">${esc(d.state)}</span>)`).join(", ")}</p>` : "";
  const conditions = a.conditions.map((c) => `<tr data-condition="${esc(c.type)}"><td>${esc(c.type)}</td><td class="tone-${cls(c.tone)}">${esc(c.status)}</td><td>${esc(c.reason)}</td><td class="wide">${once(c.message)}</td><td>${when(c.lastTransitionTime)}</td></tr>`).join("");
  const events = body.state.eventsError ? `<p class="notice">Events: ${esc(body.state.eventsError)}</p>` : eventTable(a.events, once);
  const stateTone = a.drifted && a.state === "Ready" ? " tone-warn" : "";
  detail.innerHTML = `<div class="summary" aria-label="summary">
      <span>State: <strong id="app-state" class="state-${cls(a.state)}${stateTone}">${esc(a.state)}</strong>${a.drifted ? ` <strong id="app-drifted" class="tone-warn">(drifted)</strong>` : ""}</span>
      <span>Ready: <span class="st-${cls(a.ready)}">${esc(a.ready)}</span></span>
      <span>Revision: <span id="app-revision">${esc(a.revision)}</span></span>
      <span>Objects: ${a.readyObjects}/${a.objects} ready</span>
      <span>Suspended: <span id="app-suspended">${a.suspended ? "yes" : "no"}</span></span></div>
    <p id="app-message">${message}</p>${deps}${explainSection(a.explain)}
    ${clusterTable(a.clusters)}${drift}${hookTable(a.hooks, a.namespace, once)}<h3>Resource tree</h3><p class="muted">Open an object for its live manifest, its Events and its diff.</p>
    <ul class="tree root" aria-label="resource tree"><li><span class="root-node">Application ${esc(a.namespace)}/${esc(a.name)}</span>
    <ul class="tree">${waves.join("") || `<li class="muted">no bundles yet</li>`}${extra.join("")}</ul></li></ul>
    <h3>Conditions</h3><div class="table-wrap"><table><thead><tr><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col" class="wide">Message</th><th scope="col">Since</th></tr></thead><tbody>${conditions}</tbody></table></div>
    <h3>Events</h3>${events}`;
  bindTree(r, [...a.bundles.flatMap((b) => b.items), ...a.unassigned, ...a.pruning]);
  await drawHistory(r, seen);
}

// ---- the dependency graph -------------------------------------------------------------------
async function drawGraph() {
  const {body} = await getJSON("/api/graph");
  showState(body.state);
  const {nodes, edges} = body.graph;
  if (!nodes.length) { main.innerHTML = `<h2>Dependencies</h2><p class="muted">No Application has an app-dependency policy.</p>`; return; }
  const xs = nodes.map((n) => n.x), ys = nodes.map((n) => n.y);
  const span = (v) => (Math.max(...v) - Math.min(...v)) || 1;
  const BW = 180, BH = 40, PAD = 30, flat = Math.max(...xs) === Math.min(...xs);
  // Wide enough that the widest row's boxes never overlap; the SVG scales down to the window.
  const W = Math.max(1000, 2 * PAD + (span(xs) + 1) * (BW + 20)), H = Math.max(240, 140 * (1 + Math.max(...nodes.map((n) => n.layer))));
  const px = (n) => flat ? W / 2 : PAD + BW / 2 + (n.x - Math.min(...xs)) / span(xs) * (W - 2 * PAD - BW);
  const py = (n) => PAD + BH / 2 + (n.y - Math.min(...ys)) / span(ys) * (H - 2 * PAD - BH);
  const at = Object.fromEntries(nodes.map((n) => [n.key, n]));
  const line = (e) => {  // a dependency above: bottom to top; one in the same layer (a cycle): side to side
    const a = at[e.from], b = at[e.to];
    if (a.layer !== b.layer) return [px(a), py(a) - BH / 2, px(b), py(b) + BH / 2];
    const dir = px(b) > px(a) ? 1 : -1, shift = dir * 6;
    return [px(a) + dir * BW / 2, py(a) + shift, px(b) - dir * BW / 2, py(b) + shift];
  };
  const lines = edges.filter((e) => e.from !== e.to).map((e) => { const [x1, y1, x2, y2] = line(e);
    return `<line class="${e.cycle ? "cycle" : ""}" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" marker-end="url(#arrow)"/>`; });
  const oneNamespace = new Set(nodes.map((n) => n.key.split("/")[0])).size === 1;
  const shown = (key) => { const text = oneNamespace ? key.split("/")[1] : key; return text.length > 24 ? text.slice(0, 23) + "…" : text; };
  const boxes = nodes.map((n) => { const [ns, name] = n.key.split("/");
    return `<a class="node${n.cycle ? " cycle" : ""}" href="#/app/${encodeURIComponent(ns)}/${encodeURIComponent(name)}" aria-label="${esc(n.key)}, ${esc(n.state)}${n.cycle ? ", in a cycle" : ""}">
    <title>${esc(n.key)}</title><rect x="${px(n) - BW / 2}" y="${py(n) - BH / 2}" width="${BW}" height="${BH}" rx="6"/>
    <text x="${px(n)}" y="${py(n) - 4}" text-anchor="middle" font-size="13">${esc(shown(n.key))}</text>
    <text x="${px(n)}" y="${py(n) + 13}" text-anchor="middle" font-size="12" class="st-${cls(n.state)}">${esc(n.state)}${n.cycle ? " · cycle" : ""}</text></a>`; });
  const table = edges.map((e) => `<tr class="${e.cycle ? "st-Error" : ""}"><td>${esc(e.from)}</td><td>${esc(e.to)} (${esc(at[e.to].state)})</td><td>${e.cycle ? "cycle" : ""}</td></tr>`).join("");
  main.innerHTML = `<h2>Dependencies</h2><p class="muted">An arrow points from an Application to one it waits for; dependencies are drawn above their dependants; cycles in red.${oneNamespace ? ` All in namespace ${esc(nodes[0].key.split("/")[0])}.` : ""}</p>
    <svg class="graph" viewBox="0 0 ${W} ${H}" role="img" aria-label="app-dependency graph of ${nodes.length} Applications">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>
    ${lines.join("")}${boxes.join("")}</svg>
    <h3>Who waits on whom</h3><div class="table-wrap"><table><thead><tr><th scope="col">Application</th><th scope="col">waits for</th><th scope="col">cycle</th></tr></thead><tbody>${table}</tbody></table></div>`;
}

// ---- routing and live updates ---------------------------------------------------------------
async function draw(fresh) {
  const r = route(), key = JSON.stringify(r);
  try {
    if (fresh || drawn !== key) {
      drawn = key;
      if (r.view === "list") listShell(); else if (r.view === "app") appShell(r);
      else main.innerHTML = `<h2>Dependencies</h2><p class="muted" data-placeholder="loading">Loading the graph…</p>`;
    }
    if (r.view === "list") await drawList(); else if (r.view === "app") await drawApp(r); else await drawGraph();
  } catch (error) {
    banner.innerHTML = error instanceof ServerError ? `<p class="error">Error: ${esc(error.message)}</p>`
      : `<p class="error">The UI server did not answer: ${esc(error.message)}</p>`;
    main.querySelectorAll("[data-placeholder=loading]").forEach((node) => {
      (node.tagName === "TR" ? node.firstElementChild : node).textContent = "Not loaded: see the error above.";
    });
  }
}
window.addEventListener("hashchange", () => { draw(true); main.focus(); });
const stream = new EventSource("/api/stream");
const live = document.getElementById("live");
stream.addEventListener("change", (event) => { live.textContent = "live"; const v = JSON.parse(event.data); if (v !== version) { version = v; draw(false); } });
stream.addEventListener("error", () => { live.textContent = "reconnecting…"; });
draw(true);
