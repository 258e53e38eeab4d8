"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  // A Map, not an object: a state or operState string never reaches Object.prototype.
  const TONES = new Map([["reachable", "good"], ["full", "good"], ["up", "good"], ["ok", "good"],
                         ["answering", "good"], ["unreachable", "bad"], ["none", "bad"], ["failing", "bad"],
                         ["limited", "warn"], ["portal", "warn"], ["degraded", "warn"]]);
  const FAMILIES = [["ipv4", "IPv4"], ["ipv6", "IPv6"]];
  const ICON = { good: "#2ea043", bad: "#da3633", warn: "#d29922", idle: "#8b949e" };
  const LEVEL = { good: "ok", warn: "warn", bad: "bad", idle: "idle" };
  const RANK = { idle: 0, good: 1, warn: 2, bad: 3 };
  const HOUR = 3600e3, KEEP = 100;
  const tone = (state) => TONES.get(state) || "idle";
  // `history`: reachd's changes known, oldest first, each {sequence, at (ms), iso, diff, lines,
  // tone, run, order}; `notes`: the page's own lines (opened, restarted); `run`: which run of
  // reachd the changes are of; `seen`: the last sequence of it read.
  let last = null, history = [], notes = [], source = null, reading = false, retry = null, run = 0, seen = 0;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, ...children) { for (const c of children) if (c) parent.appendChild(c); return parent; }
  function clear(id) { const node = $(id); node.textContent = ""; return node; }
  function clock(ms) { const d = new Date(ms); return isNaN(d) ? "" : d.toLocaleTimeString(); }
  // How long a state has held: "12 s", "3 min", "2 h 5 min", "4 d".
  function span(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (!isFinite(s)) return "";
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min";
    if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
    return Math.floor(s / 86400) + " d";
  }
  const lasting = (iso) => { const ms = Date.now() - Date.parse(iso); return isFinite(ms) ? "for " + span(ms) : ""; };
  function since(iso) {
    const node = el("span", "", lasting(iso));
    node.dataset.since = iso;
    node.title = iso;
    return node;
  }
  function badge(text, t) { return el("span", "badge " + (t || tone(text)), text); }
  function transports(doc) {
    const on = Object.keys(doc.transport || {}).filter((k) => doc.transport[k]);
    return on.length ? on.join(" + ") : "none";
  }
  // "refused: ECONNREFUSED: connection refused", "timeout", or "" — as reachd watch words it.
  function why(x) { return x ? [x.reason, x.detail].filter((v) => v !== null && v !== undefined).join(": ") : ""; }
  function whyNode(x) { const w = why(x); return w ? el("div", "detail why", w) : null; }

  // ------------------------------------------------------------------ what is wrong

  // Each thing failing, in words: "db unreachable (refused: ECONNREFUSED: connection refused)".
  // An impaired path in words (DESIGN "Quality"): what the family's badge says.
  const IMPAIRMENT = { loss: "packet loss", latency: "slow", mtu: "MTU blackhole" };
  // What the cause already says is not said again: the thing it names (a target, the check, an
  // uplink, DNS, the targets file) leaves the list, which starts with the cause.
  function causeKey(c) {
    if (!c) return null;
    if (c.layer === "target" || c.layer === "quality") return "target:" + c.subject;
    if (c.layer === "portal" || c.layer === "check" || c.layer === "path") return "connectivity";
    if (c.layer === "uplink") return "uplink:" + c.subject;
    if (c.layer === "dns") return "dns";
    if (c.layer === "config") return "targetsFile";
    return null;
  }
  function problems(doc) {
    const out = [], paren = (w) => (w ? " (" + w + ")" : ""), skip = causeKey(doc.cause);
    const push = (key, text) => { if (key !== skip) out.push(text); };
    for (const t of doc.targets || []) {
      const key = "target:" + t.name;
      if (t.state === "unreachable") push(key, t.name + " unreachable" + paren(why(t)));
      else if (t.state === "reachable") {
        for (const [k, label] of FAMILIES) {
          const f = t[k];
          if (f && f.state === "unreachable") push(key, t.name + " " + label + " unreachable" + paren(why(f)));
          else if (f && (f.impairments || []).length) push(key, t.name + " " + label + " " + f.impairments.map((i) => IMPAIRMENT[i] || i).join(", "));
        }
      }
    }
    const c = doc.connectivity;
    if (c && ["none", "limited", "portal"].includes(c.state)) push("connectivity", "connectivity " + c.state + paren(c.reason));
    else if (c && c.state === "full") {
      for (const [k, label] of FAMILIES) {
        const f = c[k];
        if (f && ["none", "limited", "portal"].includes(f.state)) push("connectivity", "connectivity " + label + " " + f.state + paren(why(f)));
      }
    }
    // A backup uplink that cannot reach the internet is worth knowing before failover.
    for (const x of doc.interfaces || []) {
      const u = x.connectivity;
      if (u && ["none", "limited", "portal"].includes(u.state)) push("uplink:" + x.name, x.name + " connectivity " + u.state + paren(u.reason));
    }
    const d = doc.dns;
    if (d && d.state === "failing") push("dns", "DNS failing" + paren(d.reason));
    else if (d && d.state === "degraded") {
      const bad = (d.servers || []).filter((s) => s.state === "failing").map((s) => s.address + (s.reason ? " " + s.reason : ""));
      push("dns", "DNS degraded" + paren(bad.join(", ")));
    }
    if (doc.targetsFile && doc.targetsFile.error) push("targetsFile", "targets file not applied (" + doc.targetsFile.error + ")");
    return out;
  }
  function level(doc) {
    if (doc.state === "unreachable") return "bad";
    if (doc.state !== "reachable") return "idle";
    return doc.cause || problems(doc).length ? "warn" : "ok";
  }
  // The layers below the families' routes: their subject is an interface, their family a flag.
  const ROUTE_LAYERS = ["link", "address", "route"];
  // Whether the cause is the loss of this family's way out (both families' when it names none).
  function causeTakes(doc, key) {
    const c = doc.cause;
    return !!c && ROUTE_LAYERS.includes(c.layer) && (c.family === key || (!c.family && !doc[key]));
  }

  // ------------------------------------------------------------------ drawing the document

  // One line per family the document has (a family without addresses is null): its
  // state, reason and detail, and for a target the address probed and its interface.
  function families(x, reasonTone) {
    const out = [];
    for (const [key, label] of FAMILIES) {
      const f = x[key];
      if (!f) continue;
      const line = add(el("div", "detail family"), el("span", "fam", label), badge(f.state),
        f.reason ? badge(f.reason, reasonTone) : null);
      line.dataset.family = key;
      for (const impairment of f.impairments || []) add(line, badge(IMPAIRMENT[impairment] || impairment, "warn impaired"));
      if (f.address) add(line, el("span", "mono", f.address));
      if (f.interface) add(line, document.createTextNode(" via "), el("span", "mono", f.interface));
      if (f.detail) add(line, document.createTextNode(" "), el("span", "why", f.detail));
      out.push(line);
    }
    return out;
  }
  // An uplink's own connectivity check (--per-uplink), beside its interface.
  function uplink(u) {
    if (!u) return [];
    const line = add(el("div", "detail uplink"), document.createTextNode("connectivity "), badge(u.state),
      u.reason ? badge(u.reason, "warn") : null, degraded(u), u.since ? document.createTextNode(" ") : null,
      u.since ? since(u.since) : null);
    return [line, ...families(u, "warn")];
  }
  function lastingSince(x) { return x.since ? add(el("div", "detail"), since(x.since)) : null; }
  function degraded(x) { return x.degraded ? badge("degraded", "warn degraded") : null; }
  function flag(id, text, t) {
    const node = $(id).lastElementChild;
    node.textContent = text;
    node.className = "big " + t;
  }

  function render(doc) {
    const t = tone(doc.state);
    $("state").textContent = doc.state;
    $("banner").dataset.level = level(doc);
    // The cause first (DESIGN "The cause first"): the line under the state, leading the problems.
    const rest = doc.state === "reachable" || doc.state === "unreachable" ? problems(doc) : [];
    const wrong = (doc.cause ? [doc.cause.text] : []).concat(rest);
    const list = clear("problems");
    if (doc.cause) add(list, el("span", "cause", doc.cause.text));
    if (rest.length) add(list, document.createTextNode((doc.cause ? ", " : "") + rest.join(", ")));
    $("summary").textContent = doc.state === "unknown" ? "waiting for the first reading"
      : (doc.isReachable ? "via " + transports(doc) : "no usable route") + " · since " + clock(Date.parse(doc.stateSince || doc.changedAt));
    document.title = doc.state + (wrong.length ? " (" + wrong.length + " failing)" : "") + " · reachd";
    const iconTone = { ok: "good", warn: "warn", bad: "bad", idle: "idle" }[level(doc)];
    $("icon").href = "data:image/svg+xml," + encodeURIComponent(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="' + ICON[iconTone || t] + '"/></svg>');
    // A family that is off is red only while nothing is reachable: IPv4-only is normal.
    // ... and red when the cause is that family's lost way out.
    const known = doc.state !== "unknown";
    for (const [key] of FAMILIES) {
      const off = !doc.isReachable || causeTakes(doc, key) ? "bad" : "idle";
      flag(key, known ? (doc[key] ? "✓ yes" : "✗ no") : "–", known ? (doc[key] ? "good" : off) : "idle");
    }
    flag("transport", transports(doc), transports(doc) === "none" ? "idle" : "good");
    flag("metered", doc.isDataMetered ? "metered" : "no", doc.isDataMetered ? "warn" : "idle");

    // Checks that are off take one quiet line, not a card.
    const c = doc.connectivity || { state: "disabled", url: null };
    const d = doc.dns || { state: "disabled", name: null, servers: [] };
    const unchecked = [];
    if (c.state === "disabled") unchecked.push("connectivity (no --connectivity-url)");
    if (d.state === "disabled") unchecked.push("DNS (no --dns-check)");
    $("off").hidden = !unchecked.length;
    $("off").textContent = unchecked.length ? "Not checked: " + unchecked.join(" · ") : "";
    $("connectivity-card").hidden = c.state === "disabled";
    $("dns-card").hidden = d.state === "disabled";

    const url = el("div", "detail clip", c.url || "");
    url.title = c.url || "";
    add(clear("connectivity"), el("span", "big " + tone(c.state), c.state), c.reason ? badge(c.reason, "warn") : null,
      degraded(c), url, lastingSince(c), ...families(c, "warn"));

    const name = el("div", "detail clip", d.name || "");
    name.title = d.name || "";
    const dns = add(clear("dns"), el("span", "big " + tone(d.state), d.state), d.reason ? badge(d.reason, "bad") : null, name,
      lastingSince(d));
    for (const server of d.servers || []) {
      add(dns, add(el("div", "detail server"), el("span", "mono", server.address), document.createTextNode(" "),
        badge(server.state), server.reason ? badge(server.reason, "bad") : null,
        ...(server.since ? [document.createTextNode(" "), since(server.since)] : [])));
    }

    const file = $("targets-file");
    file.hidden = !doc.targetsFile;
    file.textContent = "";
    if (doc.targetsFile) {
      const f = doc.targetsFile;
      add(file, document.createTextNode("from "), el("span", "mono", f.path),
        document.createTextNode(f.appliedAt ? " · applied " + clock(Date.parse(f.appliedAt)) : ""));
      if (f.error) add(file, el("div", "bad", "not applied: " + f.error));
    }
    const targets = clear("targets");
    if (!(doc.targets || []).length) add(targets, el("div", "empty", "none configured (--target NAME=URL)"));
    for (const x of doc.targets || []) {
      const where = add(el("div", "detail"), el("span", "mono", (x.addresses || []).join(", ") || "no address"));
      if (x.interface) add(where, document.createTextNode(" via "), el("span", "mono", x.interface));
      if (x.since) add(where, document.createTextNode(" · "), since(x.since));
      add(targets, add(el("div", "row"), el("span", "name", x.via ? x.name + "@" + x.via : x.name), badge(x.state),
        x.reason ? badge(x.reason, "bad") : null, degraded(x), x.state === "unreachable" && !FAMILIES.some(([k]) => x[k] && x[k].detail === x.detail) ? whyNode({ detail: x.detail }) : null,
        add(el("div", "detail"), el("span", "mono", x.url)), where, ...families(x, "bad")));
    }

    // The interfaces that carry traffic first; those down without an address folded away.
    const interfaces = clear("interfaces");
    const all = doc.interfaces || [];
    const idle = (x) => !["up", "unknown", "dormant"].includes(x.operState) && !(x.addresses || []).length && !x.isDefaultRoute
      && !(doc.cause && doc.cause.subject === x.name);
    const shown = all.filter((x) => !idle(x)), folded = all.filter(idle);
    if (!all.length) add(interfaces, el("div", "empty", "none"));
    const rank = (x) => (x.isDefaultRoute ? 2 : 0) + (x.operState === "up" ? 1 : 0);
    for (const x of shown.slice().sort((a, b) => rank(b) - rank(a))) {
      // The interface the cause names is marked, its state in the cause's colour.
      const named = doc.cause && ROUTE_LAYERS.concat(["path", "uplink"]).includes(doc.cause.layer) && doc.cause.subject === x.name;
      const row = add(el("div", named ? "row cause" : "row"), el("span", "name", x.name),
        badge(x.operState, named && x.operState !== "up" ? "bad" : tone(x.operState)), named ? badge("cause", "bad") : null,
        x.isDefaultRoute ? badge("default route", named ? "idle" : "good") : null,
        el("div", "detail", [x.kind, x.transport].filter(Boolean).join(" · ")),
        add(el("div", "detail"), el("span", "mono", (x.addresses || []).join(", ") || "no addresses")),
        ...uplink(x.connectivity));
      add(interfaces, row);
    }
    if (folded.length) {
      const more = add(el("details", "folded"), el("summary", "", folded.length + " down without addresses"));
      more.id = "folded";
      add(interfaces, add(more, el("div", "mono", folded.map((x) => x.name).join(", "))));
    }
    $("footer").textContent = "sequence " + doc.sequence + " · changed at " + doc.changedAt;
  }

  // ------------------------------------------------------------------ the changes and timelines

  // reachd says what changed (`/changes`: each change's diff and its lines in words); the page
  // shows those lines and reads its strips from the diff's `state` fields. It computes no diff
  // and words nothing itself.
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

  // A change's colour: the worst state something went to in it (a target going unreachable is
  // red whatever the network's state), amber for a family lost.
  function toneOf(diff) {
    let worst = "idle";
    for (const d of diff) {
      const t = d.field === "state" || d.field.endsWith(".state") ? tone(d.to)
        : isObject(d.to) && typeof d.to.state === "string" ? tone(d.to.state)
        : d.field.endsWith(".degraded") ? (d.to === true ? "warn" : "good") : "idle";
      if (RANK[t] > RANK[worst]) worst = t;
    }
    return worst;
  }

  function drawChanges() {
    const list = clear("changes");
    const rows = history.filter((h) => h.lines.length).concat(notes).sort((a, b) => b.order - a.order);
    for (const h of rows.slice(0, KEEP)) {
      const item = el("li"), time = el("time", "", clock(h.at));
      time.dateTime = h.iso || "";
      time.title = h.iso || "";
      const what = el("span", "what");
      if (h.note) add(what, el("div", "", h.note));
      for (const text of h.lines || []) add(what, el("div", "", text));
      item.dataset.tone = h.tone;
      list.appendChild(add(item, time, el("span", "seq", h.sequence !== undefined ? "#" + h.sequence : ""), what));
    }
  }

  // A strip per part: [data-timeline, label, its state now, the diff field of its state, the
  // field of the whole entry (a target added or removed), its `since`].
  function strips(doc) {
    const out = [["route", "network", doc.state, "state", null, doc.stateSince]];
    for (const [key, title] of [["connectivity", "connectivity"], ["dns", "DNS"]]) {
      const part = doc[key];
      if (isObject(part) && part.state !== "disabled") out.push([key, title, part.state, key + ".state", null, part.since]);
    }
    for (const t of doc.targets || []) {
      out.push(["target:" + t.name, t.name, t.state, "targets." + t.name + ".state", "targets." + t.name, t.since]);
    }
    return out;
  }
  // This run of reachd's changes (a restarted reachd's sequence starts again).
  const current = () => history.filter((h) => h.run === run);
  // A part's runs of one state, [value, start], oldest first: walked back from its state now
  // through the changes that set it. Before the oldest, it held since its `since` when no change
  // is known, else since the record began (`from`).
  function runsOf(now_, field, whole, since, from) {
    const out = [], mine = current();
    let value = now_;
    for (let i = mine.length - 1; i >= 0; i--) {
      const d = mine[i].diff.find((x) => x.field === field || x.field === whole);
      if (!d) continue;
      out.unshift([value, mine[i].at]);
      value = d.field === field ? d.from : isObject(d.from) ? d.from.state : null;
    }
    const held = Date.parse(since);
    out.unshift([value, !out.length && isFinite(held) ? held : from]);
    return out;
  }
  // From when the record holds: the oldest change known, or the oldest `since` of the document
  // (every part has held its state at least that long).
  function knownFrom(doc) {
    const mine = current();
    const times = [mine.length ? mine[0].at : Infinity, Date.parse(doc.stateSince),
      Date.parse((doc.connectivity || {}).since), Date.parse((doc.dns || {}).since)];
    for (const t of doc.targets || []) times.push(Date.parse(t.since));
    return Math.min(...times.filter(isFinite));
  }
  function drawTimelines() {
    if (!last) return;
    // The last hour, or less when the record is younger (a reachd just started): the strips
    // then span what is known (at least 10 s), and the axis says from when.
    const now = Date.now(), from = knownFrom(last);
    const start = Math.min(now - 10e3, Math.max(now - HOUR, from)), width = now - start;
    $("axis-start").textContent = now - start >= HOUR - 1000 ? "60 min ago" : clock(start);
    $("axis-middle").textContent = span(width / 2) + " ago";
    const box = clear("timelines");
    for (const [name, title, now_, field, whole, since] of strips(last)) {
      const runs = runsOf(now_, field, whole, since, from);
      const strip = el("div");
      strip.dataset.timeline = name;
      strip.setAttribute("role", "img");
      const said = [];
      runs.forEach(([v, begin], i) => {
        const end = i + 1 < runs.length ? runs[i + 1][1] : now;
        if (typeof v !== "string" || end <= start) return;
        const a = Math.max(begin, start);
        const seg = el("span", tone(v));
        seg.dataset.state = v;
        seg.style.left = ((a - start) / width) * 100 + "%";
        seg.style.width = Math.max(0.3, ((end - a) / width) * 100) + "%";
        seg.title = v + " · " + clock(begin) + " – " + (i + 1 < runs.length ? clock(end) : "now") + " (" + span(end - begin) + ")";
        said.push(seg.title);
        strip.appendChild(seg);
      });
      strip.setAttribute("aria-label", title + ", since " + clock(start) + ": " + (said.join("; ") || "no record"));
      strip.title = said.length ? "" : "no record";
      add(box, add(el("div", "line"), add(el("span", "label", title + " "), el("span", "now", now_)), strip));
    }
  }
  // The last hour, and at least the last KEEP changes for the list.
  function trim() {
    const cut = Date.now() - HOUR;
    while (history.length > KEEP && history[0].at < cut) history.shift();
  }
  let order = 0;
  function note(text, t, sequence) { notes.push({ note: text, tone: t, at: Date.now(), iso: new Date().toISOString(), sequence, order: ++order }); notes = notes.slice(-KEEP); }

  // The changes reachd made since the last one known, up to the document shown: read again after
  // each event, at most twice a second (the record of reachd's own, so a change missed while
  // reconnecting is there too).
  // An older reachd answers 404: the record then starts when the page was opened.
  let fetching = null, again = false;
  function readChanges() {
    if (fetching) { again = true; return fetching; }
    const upTo = last.sequence, of = run;
    fetching = fetch("changes", { cache: "no-store", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : { changes: [] }))
      .then((body) => {
        if (of !== run) return;
        for (const c of body && Array.isArray(body.changes) ? body.changes : []) {
          if (!isObject(c) || typeof c.sequence !== "number" || c.sequence <= seen || c.sequence > upTo || !Array.isArray(c.diff)) continue;
          const diff = c.diff.filter((d) => isObject(d) && typeof d.field === "string");
          const lines = Array.isArray(c.lines) ? c.lines.filter((l) => typeof l === "string") : [];
          history.push({ sequence: c.sequence, at: Date.parse(c.changedAt) || Date.now(), iso: c.changedAt, diff, lines,
            tone: toneOf(diff), run, order: ++order });
          seen = c.sequence;
        }
        trim();
      }, () => {})
      .finally(() => {
        drawChanges();
        drawTimelines();
        // At most one read every half second: a burst of events is read once, after it.
        setTimeout(() => {
          fetching = null;
          if (again) { again = false; readChanges(); }
        }, 500);
      });
    return fetching;
  }

  // ------------------------------------------------------------------ following reachd

  // The newest document wins: a re-read that comes back after a newer event is dropped,
  // unless the server restarted (its sequence starts again, its changedAt is later).
  // The same sequence with another changedAt is a restart too.
  function accept(doc) {
    if (!doc || typeof doc.state !== "string") return;
    if (last && doc.sequence === last.sequence && doc.changedAt === last.changedAt) return;
    if (last && doc.sequence < last.sequence && !(Date.parse(doc.changedAt) > Date.parse(last.changedAt))) return;
    if (last && doc.sequence <= last.sequence) {
      run += 1;
      seen = 0;
      note("reachd restarted: " + doc.state, tone(doc.state), doc.sequence);
    }
    last = doc;
    render(doc);
    drawChanges();
    drawTimelines();
    readChanges();
  }
  function open(doc) {
    last = doc;
    return readChanges().then(() => {
      note("opened: " + doc.state, tone(doc.state), doc.sequence);
      render(doc);
      drawChanges();
      drawTimelines();
    });
  }
  function read() {
    if (reading) return Promise.resolve();
    reading = true;
    return fetch("status", { cache: "no-store", headers: { Accept: "application/json" } })
      .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then((doc) => (last || !doc || typeof doc.state !== "string" ? accept(doc) : open(doc)), () => {})
      .finally(() => { reading = false; });
  }
  function stream(text, t) {
    $("stream").textContent = text;
    $("stream").dataset.tone = t;
    document.body.classList.toggle("stale", t !== "good");
  }
  function follow() {
    clearTimeout(retry);
    source = new EventSource("events");
    source.onopen = () => stream("live", "good");
    source.addEventListener("status", (e) => {
      stream("live", "good");
      let doc;
      try { doc = JSON.parse(e.data); } catch (_) { read(); return; }
      if (!last) { read(); return; }
      accept(doc);
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (an answer that was not a stream): start again ourselves.
        source.close();
        stream("offline · retrying", "bad");
        retry = setTimeout(follow, 5000);
      } else {
        stream("reconnecting…", "warn");
      }
      read();
    };
  }
  setInterval(() => {
    for (const node of document.querySelectorAll("[data-since]")) node.textContent = lasting(node.dataset.since);
  }, 5000);
  setInterval(drawTimelines, 20000);
  read().finally(follow);
})();
