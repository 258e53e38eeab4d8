"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  // A Map, not an object: a state or operState string never reaches Object.prototype.
  const TONES = new Map([["reachable", "good"], ["full", "good"], ["up", "good"], ["ok", "good"],
                         ["answering", "good"], ["unreachable", "bad"], ["none", "bad"], ["failing", "bad"],
                         ["limited", "warn"], ["portal", "warn"], ["degraded", "warn"]]);
  const FAMILIES = [["ipv4", "IPv4"], ["ipv6", "IPv6"]];
  const ICON = { good: "#2ea043", bad: "#da3633", warn: "#d29922", idle: "#8b949e" };
  const tone = (state) => TONES.get(state) || "idle";
  let last = null, source = null, reading = false, retry = null;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, ...children) { for (const c of children) if (c) parent.appendChild(c); return parent; }
  function clock(iso) { const d = iso ? new Date(iso) : new Date(); return isNaN(d) ? "" : d.toLocaleTimeString(); }
  // How long a state has held: "for 12 s", "for 3 min", "for 2 h 5 min", "for 4 d".
  function lasting(iso) {
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (!isFinite(s)) return "";
    if (s < 60) return "for " + s + " s";
    if (s < 3600) return "for " + Math.floor(s / 60) + " min";
    if (s < 86400) return "for " + Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
    return "for " + Math.floor(s / 86400) + " d";
  }
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
  // One line per family the document has (a family without addresses is null): its
  // state, reason, and for a target the address probed and its interface.
  function families(x, reasonTone) {
    const out = [];
    for (const [key, label] of FAMILIES) {
      const f = x[key];
      if (!f) continue;
      const line = add(el("div", "detail family"), el("span", "fam", label), badge(f.state),
        f.reason ? badge(f.reason, reasonTone) : null);
      line.dataset.family = key;
      if (f.address) add(line, el("span", "mono", f.address));
      if (f.interface) add(line, document.createTextNode(" via "), el("span", "mono", f.interface));
      out.push(line);
    }
    return out;
  }
  // How long a check has been in its state; nothing while it is off.
  function lastingSince(x) { return x.since && x.state !== "disabled" ? add(el("div", "detail"), since(x.since)) : null; }
  function degraded(x) { return x.degraded ? badge("degraded", "warn degraded") : null; }
  function flag(id, text, t) {
    const span = $(id).lastElementChild;
    span.textContent = text;
    span.className = "big " + t;
  }

  function render(doc) {
    const t = tone(doc.state);
    $("state").textContent = doc.state;
    $("banner").dataset.tone = t;
    $("summary").textContent = doc.state === "unknown" ? "waiting for the first reading"
      : (doc.isReachable ? "via " + transports(doc) : "no usable route") + " · since " + clock(doc.stateSince || doc.changedAt);
    document.title = doc.state + " · reachd";
    $("icon").href = "data:image/svg+xml," + encodeURIComponent(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="' + ICON[t] + '"/></svg>');
    // A family that is off is red only while nothing is reachable: IPv4-only is normal.
    const known = doc.state !== "unknown", off = doc.isReachable ? "idle" : "bad";
    flag("ipv4", known ? (doc.ipv4 ? "✓ yes" : "✗ no") : "–", known ? (doc.ipv4 ? "good" : off) : "idle");
    flag("ipv6", known ? (doc.ipv6 ? "✓ yes" : "✗ no") : "–", known ? (doc.ipv6 ? "good" : off) : "idle");
    flag("transport", transports(doc), transports(doc) === "none" ? "idle" : "good");
    flag("metered", doc.isDataMetered ? "metered" : "no", doc.isDataMetered ? "warn" : "idle");

    const c = doc.connectivity || { state: "disabled", url: null };
    const url = el("div", "detail clip", c.url || "no --connectivity-url");
    url.title = c.url || "";
    add(clear("connectivity"), el("span", "big " + tone(c.state), c.state), c.reason ? badge(c.reason, "warn") : null,
      degraded(c), url, lastingSince(c), ...families(c, "warn"));

    const d = doc.dns || { state: "disabled", name: null, servers: [] };
    const name = el("div", "detail clip", d.name || "no --dns-check");
    name.title = d.name || "";
    const dns = add(clear("dns"), el("span", "big " + tone(d.state), d.state), d.reason ? badge(d.reason, "bad") : null, name,
      lastingSince(d));
    for (const server of d.servers || []) {
      add(dns, add(el("div", "detail server"), el("span", "mono", server.address), document.createTextNode(" "),
        badge(server.state), server.reason ? badge(server.reason, "bad") : null,
        ...(server.since ? [document.createTextNode(" "), since(server.since)] : [])));
    }

    const targets = clear("targets");
    if (!(doc.targets || []).length) add(targets, el("div", "empty", "none configured (--target NAME=URL)"));
    for (const x of doc.targets || []) {
      const where = add(el("div", "detail"), el("span", "mono", (x.addresses || []).join(", ") || "no address"));
      if (x.interface) add(where, document.createTextNode(" via "), el("span", "mono", x.interface));
      if (x.since) add(where, document.createTextNode(" · "), since(x.since));
      add(targets, add(el("div", "row"), el("span", "name", x.name), badge(x.state),
        x.reason ? badge(x.reason, "bad") : null, degraded(x), add(el("div", "detail"), el("span", "mono", x.url)), where,
        ...families(x, "bad")));
    }

    const interfaces = clear("interfaces");
    if (!(doc.interfaces || []).length) add(interfaces, el("div", "empty", "none"));
    // The interfaces that carry traffic first; the document's order otherwise.
    const rank = (x) => (x.isDefaultRoute ? 2 : 0) + (x.operState === "up" ? 1 : 0);
    for (const x of (doc.interfaces || []).slice().sort((a, b) => rank(b) - rank(a))) {
      add(interfaces, add(el("div", "row"), el("span", "name", x.name), badge(x.operState, tone(x.operState)),
        x.isDefaultRoute ? badge("default route", "good") : null,
        el("div", "detail", [x.kind, x.transport].filter(Boolean).join(" · ")),
        add(el("div", "detail"), el("span", "mono", (x.addresses || []).join(", ") || "no addresses"))));
    }
    $("footer").textContent = "sequence " + doc.sequence + " · changed at " + doc.changedAt;
  }
  function clear(id) { const node = $(id); node.textContent = ""; return node; }

  function byName(list) { const map = new Map(); for (const x of list || []) map.set(x.name, x); return map; }
  function describe(a, b) {
    const out = [];
    if (a.state !== b.state) out.push(a.state + " → " + b.state);
    for (const f of ["ipv4", "ipv6"]) if (a[f] !== b[f]) out.push(f.replace("ip", "IP") + (b[f] ? " on" : " off"));
    if (transports(a) !== transports(b)) out.push("transport " + transports(b));
    if (a.isDataMetered !== b.isDataMetered) out.push(b.isDataMetered ? "metered" : "not metered");
    const ia = byName(a.interfaces), ib = byName(b.interfaces);
    for (const [name, x] of ib) {
      const y = ia.get(name);
      if (!y) { out.push(name + " appeared"); continue; }
      if (y.operState !== x.operState) out.push(name + " " + x.operState);
      if (y.isDefaultRoute !== x.isDefaultRoute) out.push(name + (x.isDefaultRoute ? " default route" : " lost default route"));
      if ((y.addresses || []).join() !== (x.addresses || []).join()) out.push(name + " addresses");
    }
    for (const name of ia.keys()) if (!ib.has(name)) out.push(name + " gone");
    const ta = byName(a.targets);
    for (const [name, x] of byName(b.targets)) {
      const y = ta.get(name);
      if (!y || y.state !== x.state || y.reason !== x.reason) out.push(name + " " + x.state + (x.reason ? " (" + x.reason + ")" : ""));
      else if (!!y.degraded !== !!x.degraded) out.push(name + (x.degraded ? " degraded" : " no longer degraded"));
    }
    const ca = a.connectivity || {}, cb = b.connectivity || {};
    if (ca.state !== cb.state || ca.reason !== cb.reason) out.push("connectivity " + cb.state + (cb.reason ? " (" + cb.reason + ")" : ""));
    else if (!!ca.degraded !== !!cb.degraded) out.push("connectivity" + (cb.degraded ? " degraded" : " no longer degraded"));
    const dnsA = a.dns || {}, dnsB = b.dns || {};
    if (dnsA.state !== dnsB.state || dnsA.reason !== dnsB.reason) out.push("dns " + dnsB.state + (dnsB.reason ? " (" + dnsB.reason + ")" : ""));
    const servers = new Map((dnsA.servers || []).map((x) => [x.address, x]));
    for (const x of dnsB.servers || []) {
      const y = servers.get(x.address);
      if (!y || y.state !== x.state || y.reason !== x.reason) out.push("dns " + x.address + " " + x.state + (x.reason ? " (" + x.reason + ")" : ""));
    }
    return out.length ? out.join(" · ") : "updated";
  }
  function note(doc, text, t) {
    const list = $("changes");
    const item = el("li");
    item.dataset.tone = t;
    list.insertBefore(add(item, el("time", "", clock(doc ? doc.changedAt : null)),
      el("span", "seq", doc ? "#" + doc.sequence : ""), el("span", "", text)), list.firstChild);
    while (list.children.length > 100) list.removeChild(list.lastChild);
  }

  // The newest document wins: a re-read that comes back after a newer event is dropped,
  // unless the server restarted (its sequence starts again, its changedAt is later).
  // The same sequence with another changedAt is a restart too.
  function accept(doc, missed) {
    if (!doc || typeof doc.state !== "string") return;
    if (last && doc.sequence === last.sequence && doc.changedAt === last.changedAt) return;
    if (last && doc.sequence < last.sequence && !(Date.parse(doc.changedAt) > Date.parse(last.changedAt))) return;
    if (!last) note(null, "opened: " + doc.state, tone(doc.state));
    else if (doc.sequence <= last.sequence) note(doc, "reachd restarted: " + doc.state, tone(doc.state));
    else note(doc, describe(last, doc) + (missed > 0 ? " (" + missed + " missed)" : ""), tone(doc.state));
    last = doc;
    render(doc);
  }
  function read() {
    if (reading) return Promise.resolve();
    reading = true;
    return fetch("status", { cache: "no-store", headers: { Accept: "application/json" } })
      .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then((doc) => accept(doc, 0), () => {})
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
      const id = Number(e.lastEventId);
      const gap = last && isFinite(id) && id > last.sequence + 1 && doc.changedAt >= last.changedAt;
      accept(doc, gap ? id - last.sequence - 1 : 0);
      if (gap) read();
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
    for (const node of document.querySelectorAll("[data-since]")) {
      node.textContent = lasting(node.dataset.since);
    }
  }, 5000);
  read().finally(follow);
})();