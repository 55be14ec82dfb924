// oam-operator ui: the page's script (docs/ui.md). It draws the view named by the URL's hash
// from the UI server's JSON and redraws it on each server-sent `change` event; no other requests.
"use strict";

const TOKEN = document.querySelector('meta[name="oam-ui-token"]').content;
const main = document.getElementById("main");
const banner = document.getElementById("banner");
let version = -1;
let drawn = null;  // the route currently drawn: controls survive redraws of the same route

function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}
function cls(value) { return String(value ?? "").replace(/[^A-Za-z]/g, ""); }
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "app" && parts.length === 3) return {view: "app", namespace: parts[1], name: parts[2]};
  if (parts[0] === "graph") return {view: "graph"};
  return {view: "list"};
}
async function getJSON(url) {
  const response = await fetch(url, {headers: {Accept: "application/json"}});
  return {status: response.status, body: await response.json()};
}
function showState(state) {
  document.getElementById("scope").textContent = state.scope ? "Applications " + state.scope : "";
  const lines = [];
  if (state.fatal) lines.push(`<p class="error">Error: ${esc(state.fatal)}</p>`);
  if (state.notice) lines.push(`<p class="notice">${esc(state.notice)}</p>`);
  if (state.error) lines.push(`<p class="error">Error: ${esc(state.error)}</p>`);
  banner.innerHTML = lines.join("");
}

// ---- the Application list -------------------------------------------------------------------
function listShell() {
  main.innerHTML = `<h2>Applications</h2>
  <form class="controls" role="search" id="filters">
    <label>Search <input id="q" type="search" placeholder="namespace/name or message" autocomplete="off"></label>
    <label>State <select id="state-filter">
      <option value="">any</option><option>Pending</option><option>Processing</option><option>Waiting</option>
      <option>Ready</option><option>Error</option><option>DeletionPending</option><option>Deleting</option>
      <option>&lt;none&gt;</option>
    </select></label>
    <span id="count" class="muted" aria-live="polite"></span>
  </form>
  <div class="table-wrap"><table aria-describedby="count"><thead><tr>
    <th scope="col">Namespace</th><th scope="col">Name</th><th scope="col">State</th>
    <th scope="col" class="wide">Ready message</th><th scope="col">Revision</th>
    <th scope="col" class="wide">Objects</th><th scope="col">Age</th>
  </tr></thead><tbody id="rows"></tbody></table></div>`;
  const redraw = () => drawList();
  document.getElementById("q").addEventListener("input", redraw);
  document.getElementById("state-filter").addEventListener("change", redraw);
  document.getElementById("filters").addEventListener("submit", (e) => { e.preventDefault(); redraw(); });
}
async function drawList() {
  const q = document.getElementById("q").value, state = document.getElementById("state-filter").value;
  const {body} = await getJSON(`/api/apps?q=${encodeURIComponent(q)}&state=${encodeURIComponent(state)}`);
  showState(body.state);
  const rows = body.rows.map((r) => `<tr data-app="${esc(r.namespace)}/${esc(r.name)}">
    <td>${esc(r.namespace)}</td>
    <td><a href="#/app/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}">${esc(r.name)}</a></td>
    <td class="state-${cls(r.state)}" data-col="state">${esc(r.state)}${r.suspended ? " (suspended)" : ""}</td>
    <td class="wide" data-col="message">${esc(r.message)}</td><td data-col="revision">${esc(r.revision)}</td>
    <td class="wide">${esc(r.readyObjects)}/${esc(r.objects)}</td><td>${esc(r.age)}</td></tr>`);
  document.getElementById("rows").innerHTML = rows.join("");
  const waiting = body.state.synced ? "" : " (waiting for the cluster)";
  document.getElementById("count").textContent = `${body.rows.length} Application${body.rows.length === 1 ? "" : "s"}${waiting}`;
}

// ---- one Application ------------------------------------------------------------------------
function appShell(r) {
  main.innerHTML = `<p><a href="#/">← Applications</a></p>
  <h2>Application ${esc(r.namespace)}/${esc(r.name)}</h2>
  <div class="actions" role="group" aria-label="Actions">
    <button type="button" data-action="reconcile">Reconcile</button>
    <button type="button" data-action="suspend">Suspend</button>
    <button type="button" data-action="resume">Resume</button>
    <button type="button" id="show-diff">Show diff</button>
  </div>
  <p id="answer" role="status" aria-live="polite"></p>
  <div id="detail"></div><section aria-labelledby="history-h"><h3 id="history-h">Revision history</h3><div id="history" class="muted">loading…</div></section><section aria-labelledby="diff-h"><h3 id="diff-h">Diff</h3><pre id="diff" class="muted">Not computed yet: “Show diff” runs oam-operator diff.</pre></section>`;
  main.querySelectorAll("button[data-action]").forEach((button) =>
    button.addEventListener("click", () => act(r, button.dataset.action)));
  document.getElementById("show-diff").addEventListener("click", () => showDiff(r));
}
async function act(r, action) {
  if (!window.confirm(`${action[0].toUpperCase()}${action.slice(1)} Application ${r.namespace}/${r.name}?`)) return;
  const answer = document.getElementById("answer");
  answer.className = ""; answer.textContent = `${action}: asking the API server…`;
  const response = await fetch(`/api/apps/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}/${action}`,
    {method: "POST", headers: {"X-OAM-UI-Token": TOKEN}});
  const body = await response.json();
  answer.className = response.ok ? "" : "failed";
  answer.textContent = response.ok
    ? `${body.message} (resourceVersion ${body.resourceVersion}, generation ${body.generation}, spec.suspend ${body.suspend})`
    : `Error: ${body.error}`;
}
async function rollbackTo(r, revision) {
  if (!window.confirm(`Roll back Application ${r.namespace}/${r.name} to revision ${revision}?`)) return;
  const answer = document.getElementById("answer");
  answer.className = ""; answer.textContent = `rollback to revision ${revision}: asking the API server…`;
  const response = await fetch(`/api/apps/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}/rollback/${revision}`,
    {method: "POST", headers: {"X-OAM-UI-Token": TOKEN}});
  const body = await response.json();
  answer.className = response.ok ? "" : "failed";
  answer.textContent = response.ok ? body.message : `Error: ${body.error}`;
}
async function drawHistory(r) {
  const box = document.getElementById("history");
  if (!box) return;
  const {status, body} = await getJSON(`/api/apps/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}/history`);
  if (status !== 200) { box.className = "error"; box.textContent = `Error: ${body.error}`; return; }
  box.className = "";
  if (!body.revisions.length) { box.innerHTML = `<p class="muted">No revisions recorded.</p>`; return; }
  const rows = body.revisions.map((v) => `<tr data-revision="${v.revision}"${v.current ? ' aria-current="true"' : ""}>
    <td>${v.revision}${v.current ? " (current)" : ""}</td><td class="wide">${esc(v.created || "<none>")}</td>
    <td class="st-${cls(v.outcome.state)}">${esc(v.outcomeText)}</td><td>${v.restores === undefined ? "-" : esc(v.restores)}</td>
    <td class="wide">${esc(v.changeCause || "<none>")}</td>
    <td><button type="button" data-rollback="${v.revision}" aria-label="Roll back to revision ${v.revision}">Roll back</button></td></tr>`);
  box.innerHTML = `<div class="table-wrap"><table><thead><tr><th scope="col">Revision</th><th scope="col" class="wide">Created</th><th scope="col">Outcome</th><th scope="col">Restores</th><th scope="col" class="wide">Change cause</th><th scope="col">Action</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
  box.querySelectorAll("button[data-rollback]").forEach((button) =>
    button.addEventListener("click", () => rollbackTo(r, button.dataset.rollback)));
}
function driftSection(d) {
  const objects = d.objects.map((o) => `<li>${esc(o.kind)} ${esc(o.namespace ? o.namespace + "/" : "")}${esc(o.name)}: ${esc(o.what)}${o.heldUntil ? `; held until ${esc(o.heldUntil)}` : ""}</li>`).join("");
  if (!d.drifted && !d.objects.length) return `<section aria-labelledby="drift-h"><h3 id="drift-h">Drift</h3><p id="drift" class="muted">No drift${d.message ? ": " + esc(d.message) : ""}</p></section>`;
  return `<section aria-labelledby="drift-h" class="drifted"><h3 id="drift-h">Drift</h3><p id="drift" class="notice">Drifted${d.reason ? " (" + esc(d.reason) + ")" : ""}: ${esc(d.message)}</p>${objects ? `<ul aria-label="drifted objects">${objects}</ul>` : ""}</section>`;
}
async function showDiff(r) {
  const pre = document.getElementById("diff");
  pre.textContent = "computing (server-side dry run)…";
  const response = await fetch(`/api/apps/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}/diff`,
    {method: "POST", headers: {"X-OAM-UI-Token": TOKEN, Accept: "application/json"}});
  const body = await response.json();
  pre.className = response.ok ? "" : "error";
  pre.textContent = response.ok ? body.diff : `Error: ${body.error}`;
}
function itemRows(items) {
  return items.map((i) => `<tr><td>${esc(i.kind)} ${esc(i.namespace ? i.namespace + "/" : "")}${esc(i.name)}</td>
    <td class="st-${cls(i.phase)}">${esc(i.phase)}</td><td class="st-${cls(i.status)}">${esc(i.status)}</td></tr>`).join("");
}
function itemTable(items, caption) {
  if (!items.length) return `<p class="muted">no objects yet</p>`;
  return `<div class="table-wrap"><table><caption class="muted">${esc(caption)}</caption><thead><tr><th scope="col">Object</th><th scope="col">Phase</th><th scope="col">kstatus</th></tr></thead><tbody>${itemRows(items)}</tbody></table></div>`;
}
async function drawApp(r) {
  const {status, body} = await getJSON(`/api/apps/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`);
  showState(body.state);
  const detail = document.getElementById("detail");
  if (status !== 200) { detail.innerHTML = `<p class="error">${esc(body.error)}</p>`; return; }
  const a = body.app;
  const waves = a.bundles.map((b) => `<section class="bundle" data-bundle="${esc(b.name)}" data-state="${esc(b.state)}" aria-label="bundle ${esc(b.name)}">
    <h3>${esc(b.name)} <span class="state-${cls(b.state)}">${esc(b.state)}</span> <span class="muted">${b.ready}/${b.objects} ready${b.waves ? `, waves ${b.waves.first}–${b.waves.last}` : ""}${b.dependsOn.length ? ", depends on " + esc(b.dependsOn.join(", ")) : ""}</span></h3>
    ${b.waits ? `<p class="waits">${esc(b.waits)}</p>` : ""}${itemTable(b.items, `objects of ${b.name}`)}</section>`);
  const extra = [["(no bundle)", a.unassigned], ["(pruning)", a.pruning]].filter(([, items]) => items.length)
    .map(([title, items]) => `<section class="bundle"><h3>${esc(title)}</h3>${itemTable(items, title)}</section>`);
  const deps = a.dependencies.length ? `<p>Depends on: ${a.dependencies.map((d) =>
    `<a href="#/app/${encodeURIComponent(d.namespace)}/${encodeURIComponent(d.name)}">${esc(d.namespace)}/${esc(d.name)}</a> (<span class="st-${cls(d.state)}">${esc(d.state)}</span>)`).join(", ")}</p>` : "";
  const conditions = a.conditions.map((c) => `<tr><td>${esc(c.type)}</td><td class="st-${cls(c.status)}">${esc(c.status)}</td><td>${esc(c.reason)}</td><td class="wide">${esc(c.message)}</td><td class="wide">${esc(c.lastTransitionTime)}</td></tr>`).join("");
  const events = body.state.eventsError ? `<p class="notice">Events: ${esc(body.state.eventsError)}</p>` : a.events.length ?
    `<div class="table-wrap"><table><thead><tr><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Message</th><th scope="col" class="wide">Count</th><th scope="col" class="wide">Last seen</th></tr></thead><tbody>${a.events.map((e) =>
      `<tr><td>${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${esc(e.message)}</td><td class="wide">${esc(e.count)}</td><td class="wide">${esc(e.time)}</td></tr>`).join("")}</tbody></table></div>` : `<p class="muted">no Events</p>`;
  detail.innerHTML = `<div class="summary" aria-label="summary">
      <span>State: <strong id="app-state" class="state-${cls(a.state)}">${esc(a.state)}</strong></span>
      <span>Ready: <span class="st-${cls(a.ready)}">${esc(a.ready)}</span></span>
      <span>Revision: <span id="app-revision">${esc(a.revision)}</span></span>
      <span>Objects: ${a.readyObjects}/${a.objects} ready</span>
      <span>Suspended: <span id="app-suspended">${a.suspended ? "yes" : "no"}</span></span></div>
    <p id="app-message">${esc(a.message)}</p>${deps}
    ${driftSection(a.drift)}<h3>Bundles and waves</h3>${waves.join("") || `<p class="muted">no bundles yet</p>`}${extra.join("")}
    <h3>Conditions</h3><div class="table-wrap"><table><thead><tr><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col" class="wide">Message</th><th scope="col" class="wide">Since</th></tr></thead><tbody>${conditions}</tbody></table></div>
    <h3>Events</h3>${events}`;
  await drawHistory(r);
}

// ---- the dependency graph -------------------------------------------------------------------
async function drawGraph() {
  const {body} = await getJSON("/api/graph");
  showState(body.state);
  const {nodes, edges} = body.graph;
  if (!nodes.length) { main.innerHTML = `<h2>Dependencies</h2><p class="muted">No Application has an app-dependency policy.</p>`; return; }
  const W = 1000, H = Math.max(240, 140 * (1 + Math.max(...nodes.map((n) => n.layer)))), BW = 180, BH = 40, PAD = 30;
  const xs = nodes.map((n) => n.x), ys = nodes.map((n) => n.y);
  const span = (v) => (Math.max(...v) - Math.min(...v)) || 1;
  const px = (n) => PAD + BW / 2 + (n.x - Math.min(...xs)) / span(xs) * (W - 2 * PAD - BW);
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
  const boxes = nodes.map((n) => { const [ns, name] = n.key.split("/");
    return `<a class="node${n.cycle ? " cycle" : ""}" href="#/app/${encodeURIComponent(ns)}/${encodeURIComponent(name)}" aria-label="${esc(n.key)}, ${esc(n.state)}${n.cycle ? ", in a cycle" : ""}">
    <rect x="${px(n) - BW / 2}" y="${py(n) - BH / 2}" width="${BW}" height="${BH}" rx="6"/>
    <text x="${px(n)}" y="${py(n) - 4}" text-anchor="middle" font-size="13">${esc(n.key)}</text>
    <text x="${px(n)}" y="${py(n) + 13}" text-anchor="middle" font-size="12" class="st-${cls(n.state)}">${esc(n.state)}${n.cycle ? " · cycle" : ""}</text></a>`; });
  const table = edges.map((e) => `<tr class="${e.cycle ? "st-Error" : ""}"><td>${esc(e.from)}</td><td>${esc(e.to)} (${esc(at[e.to].state)})</td><td>${e.cycle ? "cycle" : ""}</td></tr>`).join("");
  main.innerHTML = `<h2>Dependencies</h2><p class="muted">An arrow points from an Application to one it waits for; dependencies are drawn above their dependants; cycles in red.</p>
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
    }
    if (r.view === "list") await drawList(); else if (r.view === "app") await drawApp(r); else await drawGraph();
  } catch (error) {
    banner.innerHTML = `<p class="error">The UI server did not answer: ${esc(error.message)}</p>`;
  }
}
window.addEventListener("hashchange", () => { draw(true); main.focus(); });
const stream = new EventSource("/api/stream");
const live = document.getElementById("live");
stream.addEventListener("change", (event) => { live.textContent = "live"; const v = JSON.parse(event.data); if (v !== version) { version = v; draw(false); } });
stream.addEventListener("error", () => { live.textContent = "reconnecting…"; });
draw(true);
