// pipectl ui: a little JavaScript over server-rendered pages. It shows
// times in the browser's zone, follows running runs (server-sent events),
// tails logs and filters them by rank. Every page works without it.
"use strict";

function localTimes(root) {
  for (const t of root.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (isNaN(d)) continue;
    t.title = t.getAttribute("datetime");
    t.textContent = d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }
}

// showSelected scrolls the DAG so that the selected step is in view (a
// narrow window shows only part of a wide DAG).
function showSelected(root) {
  const box = root.querySelector(".dag .scroll");
  const node = root.querySelector("svg.graph .node.selected, svg.graph a.chip.selected");
  if (!box || !node) return;
  const b = box.getBoundingClientRect(), n = node.getBoundingClientRect();
  if (n.left < b.left || n.right > b.right) box.scrollLeft += n.left - b.left - Math.max(0, (b.width - n.width) / 2);
}

// fragment fetches a part of the current page (?part=NAME) as HTML.
async function fragment(part, params) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  q.set("part", part);
  const resp = await fetch(location.pathname + "?" + q.toString(), { headers: { Accept: "text/html" } });
  if (!resp.ok) throw new Error(resp.status + " " + resp.statusText);
  return resp.text();
}

// The runs list: filters apply on change; the compare button needs a
// ticked run; while a run is running the table refreshes.
function runsPage() {
  for (const s of document.querySelectorAll("select[data-autosubmit]")) {
    s.addEventListener("change", () => s.form.submit());
  }
  const table = document.getElementById("runs-table");
  const button = document.getElementById("compare");
  const sync = () => { button.disabled = !table.querySelector("input[name=run]:checked"); };
  table.addEventListener("change", sync);
  sync();
  const poll = async () => {
    if (table.dataset.live !== "true") return;
    try {
      const html = await fragment("table");
      const ticked = new Set([...table.querySelectorAll("input[name=run]:checked")].map((i) => i.value));
      const next = document.createElement("div");
      next.innerHTML = html;
      for (const i of next.querySelectorAll("input[name=run]")) i.checked = ticked.has(i.value);
      table.replaceChildren(...next.childNodes);
      table.dataset.live = String(!!table.querySelector(".badge.st-running"));
      localTimes(table);
      sync();
    } catch (e) { /* try again */ }
    setTimeout(poll, 2000);
  };
  setTimeout(poll, 2000);
}

// The log of the step shown: the last MiB at first, then new bytes while
// the run runs; lines filtered by rank.
function logView(live) {
  const pre = document.getElementById("log");
  if (!pre) return { done() {}, ranks() {}, show() {} };
  const note = document.getElementById("log-note");
  const select = document.getElementById("rank");
  const rankRE = /^\[[^\]]*?\brank (\d+)\] /;
  let lines = [], partial = "", offset = null, following = live, timer = null;
  let inflight = false, finalAsked = false;
  let source = null; // X-Log-Source of what is shown: "store", or "pod" while a cluster step runs
  let gen = 0; // which log is shown: a fetch of an earlier one is dropped
  const ranks = new Set();

  const shown = (l) => !select.value || (rankRE.exec(l) || [])[1] === select.value;
  const showRanks = () => {
    const dd = document.getElementById("ranks");
    if (dd) dd.textContent = ranks.size ? String(ranks.size) : lines.length ? "1" : "–";
  };
  const render = (added) => {
    const atEnd = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 40;
    if (added && !select.value && pre.firstChild) {
      pre.appendChild(document.createTextNode(added.map((l) => l + "\n").join("")));
    } else {
      pre.textContent = lines.filter(shown).map((l) => l + "\n").join("") + (select.value ? "" : partial);
    }
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  };
  const addRank = (l) => {
    const m = rankRE.exec(l);
    if (m && !ranks.has(m[1])) {
      ranks.add(m[1]);
      const o = document.createElement("option");
      o.value = m[1];
      o.textContent = "rank " + m[1];
      const after = [...select.options].find((x) => x.value !== "" && Number(x.value) > Number(m[1]));
      select.insertBefore(o, after || null);
    }
  };
  const fetchMore = async () => {
    timer = null;
    inflight = true;
    const isFinal = finalAsked;
    const url = pre.dataset.src + (offset === null ? "" : "?offset=" + offset);
    let restart = false;
    const g = gen;
    try {
      const resp = await fetch(url);
      if (g !== gen) return;
      if (resp.status === 404) {
        const body = await resp.json().catch(() => ({}));
        note.textContent = body.error || "No log.";
      } else if (resp.ok) {
        const start = Number(resp.headers.get("X-Log-Start"));
        const end = Number(resp.headers.get("X-Log-End"));
        const src = resp.headers.get("X-Log-Source");
        const text = await resp.text();
        if (g !== gen) return;
        // The log was replaced (a shorter one), or the pod's log of a
        // running cluster step gave way to the stored one: start over.
        const replaced = offset !== null && start < offset;
        restart = offset !== null && source !== null && src !== source;
        source = src;
        if (replaced || restart) { lines = []; partial = ""; pre.textContent = ""; }
        if (restart) {
          offset = null;
        } else {
          if (offset === null && start > 0) note.textContent = "Showing the last " + Math.round((end - start) / 1024) + " KiB; the raw log has it all.";
          else if (note.textContent.startsWith("No log") || note.textContent.includes("has no log")) note.textContent = "";
          offset = end;
          const parts = (partial + text).split("\n");
          partial = parts.pop();
          const before = lines.length;
          lines.push(...parts);
          parts.forEach(addRank);
          showRanks();
          if (parts.length || partial) render(pre.firstChild && before ? parts.filter(shown) : null);
        }
      }
    } catch (e) { /* try again */ }
    inflight = false;
    if (restart) fetchMore();
    else if (following) timer = setTimeout(fetchMore, 1000);
    else if (finalAsked && !isFinal) fetchMore(); // the run ended during this fetch
  };
  select.addEventListener("change", () => render(null));
  fetchMore();
  return {
    // done fetches what is left once the run ended, then stops.
    done() {
      following = false;
      finalAsked = true;
      if (timer) { clearTimeout(timer); timer = null; }
      if (!inflight) fetchMore();
    },
    ranks: showRanks,
    // show switches to the log at src, step name's, from its start.
    show(src, name) {
      gen++;
      if (timer) { clearTimeout(timer); timer = null; }
      pre.dataset.src = src;
      lines = []; partial = ""; offset = null; source = null;
      pre.textContent = ""; note.textContent = "";
      ranks.clear();
      for (const o of [...select.options]) if (o.value !== "") o.remove();
      select.value = "";
      const section = pre.closest(".log");
      section.querySelector("h2 .muted").textContent = name;
      section.querySelector(".tools a").href = src;
      showRanks();
      inflight = false;
      fetchMore();
    },
  };
}

// A run: while it runs, the server's events bring the record; each change
// re-renders the DAG and the step (the log keeps its place).
function runPage() {
  const live = document.getElementById("live");
  showSelected(live);
  const log = logView(live.dataset.live === "true");
  if (live.dataset.live !== "true") return;
  // Opened without ?step, the page follows the run: it shows the running
  // step (else a failed one, else the last), as the server picks it.
  const follow = !new URLSearchParams(location.search).has("step");
  let last = null;
  const refresh = async () => {
    try {
      const html = await fragment("live", follow ? {} : { step: live.dataset.step });
      const box = live.querySelector(".dag .scroll");
      const left = box ? box.scrollLeft : 0;
      live.innerHTML = html;
      const next = live.querySelector(".dag .scroll");
      if (next) next.scrollLeft = left; // the DAG stays where the user left it
      localTimes(live);
      const card = live.querySelector("#step");
      if (follow && card && card.dataset.step !== live.dataset.step) {
        live.dataset.step = card.dataset.step;
        log.show("/api/runs/" + encodeURIComponent(live.dataset.run) + "/logs/" + encodeURIComponent(card.dataset.step), card.dataset.step);
      }
      log.ranks();
    } catch (e) { /* the next event tries again */ }
  };
  const es = new EventSource("/api/runs/" + encodeURIComponent(live.dataset.run) + "/events");
  es.addEventListener("run", (ev) => {
    const r = JSON.parse(ev.data);
    const sig = r.status + "|" + (r.steps || []).map((s) => s.name + ":" + s.status + ":" + (s.outputs || []).length).join(",");
    if (sig !== last) refresh(); // the first event too: the page may be older than it
    last = sig;
  });
  es.addEventListener("end", async () => {
    es.close();
    live.dataset.live = "false";
    await refresh();
    log.done();
  });
}

document.addEventListener("DOMContentLoaded", () => {
  localTimes(document);
  if (document.getElementById("runs-table")) runsPage();
  if (document.getElementById("live")) runPage();
});

// Compare: a copy button puts the whole digest on the clipboard.
document.addEventListener("click", async (ev) => {
  const b = ev.target.closest("button.copy");
  if (!b) return;
  try {
    await navigator.clipboard.writeText(b.dataset.copy);
    b.textContent = "copied";
  } catch (e) {
    b.textContent = "select it: hover";
  }
  setTimeout(() => { b.textContent = "copy"; }, 1500);
});
