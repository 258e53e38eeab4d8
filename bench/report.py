"""Turns bench.py's results into verdicts against the issue's targets and a Markdown report."""

from __future__ import annotations


def _get(d: dict, *path, default=None):
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return default
        d = d[key]
    return d


def ms(v) -> str:
    if v is None:
        return "—"
    return f"{v:.3f} ms" if abs(v) < 1 else f"{v:.2f} ms" if abs(v) < 100 else f"{v:.0f} ms"


def num(v, fmt="{:,.0f}") -> str:
    return "—" if v is None else fmt.format(v)


def ratio(a, b) -> str:
    return "—" if a is None or not b else f"{a / b:.2f}"


def verdict(met: bool | None, detail: str) -> str:
    if met is None:
        return "not measured"
    return ("**met**" if met else "**missed**") + (f" ({detail})" if detail else "")


def verdicts(r: dict) -> list[dict]:
    """One row per target: what, reachd's value, the peer's, ratio, target, met."""
    rows: list[dict] = []
    ph = r.get("phases", {})

    def add(what, value, peer, peer_name, rat, target, met, detail=""):
        rows.append({"what": what, "reachd": value, "peer": peer, "peer_name": peer_name, "ratio": rat,
                     "target": target, "met": met, "detail": detail})

    lat = ph.get("latency", {})
    if "reachd" in lat:
        p50, p99 = _get(lat, "reachd", "p50"), _get(lat, "reachd", "p99")
        m50, m99 = _get(lat, "monitor", "p50"), _get(lat, "monitor", "p99")
        add(f"change latency p50 ({lat['flaps']} flaps, {lat['transitions']} transitions)", ms(p50),
            ms(m50), "`ip monitor link`", ratio(p50, m50), "≤ 1 ms",
            p50 is not None and p50 <= 1, f"{abs(1 - p50):.3f} ms {'to spare' if p50 <= 1 else 'over'}")
        add("change latency p99", ms(p99), ms(m99), "`ip monitor link`", ratio(p99, m99), "≤ 5 ms",
            p99 is not None and p99 <= 5, f"{abs(5 - p99):.2f} ms {'to spare' if p99 <= 5 else 'over'}")
        gap = p99 - m99 if p99 is not None and m99 is not None else None
        add("change latency p99 − ip monitor p99", ms(gap), "", "", "", "≤ 2 ms", gap is not None and gap <= 2,
            f"{abs(2 - gap):.2f} ms {'to spare' if gap <= 2 else 'over'}" if gap is not None else "")
        nd, mnd = lat.get("reachd_not_deferred", {}), lat.get("monitor_not_deferred", {})
        if lat.get("deferred_by_kernel"):
            add(f"change latency p99 without the {lat['deferred_by_kernel']} transitions the kernel itself reported "
                f"> 100 ms late", ms(nd.get("p99")), ms(mnd.get("p99")), "`ip monitor link`",
                ratio(nd.get("p99"), mnd.get("p99")), "(≤ 5 ms)", "info")
        missing = lat.get("reachd_missing", 0)
        add("flaps with no reachd event within 3 s", str(missing), str(lat.get("monitor_missing", 0)),
            "`ip monitor link`", "", "0", missing == 0)

    fan = ph.get("fanout", {})
    for n, b in sorted(_get(fan, "by_n", default={}).items(), key=lambda kv: int(kv[0])):
        # The headline: spread, the fan-out cost itself (last client's kernel receive − first's).
        for stat in ("p50", "max"):
            rs, cs = b.get(f"reachd_spread_{stat}_ms"), b.get(f"nchan_spread_{stat}_ms")
            sr = b.get(f"spread_{stat}_ratio")
            if rs is None:
                continue
            floors = [(label, b.get(f"{key}_spread_{stat}_ms")) for key, label in
                      (("floor1", "1 thread"), ("floor2", "2 threads"))]
            floor_text = "; write-only floor " + ", ".join(f"{label} {ms(v)}" for label, v in floors if v is not None) \
                if any(v is not None for _, v in floors) else ""
            add(f"**fan-out N={int(n):,} spread {stat}** (last − first client's kernel receive, per event; "
                f"{b['reps']} reps)", ms(rs), ms(cs), "nchan, 1 worker", num(sr, "{:.2f}"), "≤ 0.5× nchan",
                sr is not None and sr <= 0.5, (f"{sr:.2f}× nchan" if sr is not None else "") + floor_text)
        rp, cp = b.get("reachd_p99_ms"), b.get("nchan_p99_ms")
        met = rp is not None and cp is not None and rp <= cp
        detail = ""
        same_run = b.get("p99_ratio") or (rp / cp if rp is not None and cp else None)
        if same_run is not None:
            detail = f"{same_run:.2f}× nchan; aim ≤ 0.5× {'reached' if same_run <= 0.5 else 'not reached'}"
        add(f"fan-out N={int(n):,} p99 delivery, trigger sent → client ({b['reps']} reps)", ms(rp), ms(cp), "nchan",
            num(b.get("p99_ratio"), "{:.2f}"), "≤ nchan's", met, detail)
        add(f"fan-out N={int(n):,} p50 delivery", ms(b.get("reachd_p50_ms")), ms(b.get("nchan_p50_ms")), "nchan",
            ratio(b.get("reachd_p50_ms"), b.get("nchan_p50_ms")), "—", None, "")
        rows[-1]["met"] = "info"
        mc = b.get("reachd_missed_clients")
        add(f"fan-out N={int(n):,} clients that missed an event (all reps)", num(mc), num(b.get("nchan_missed_clients")),
            "nchan", "", "0", mc == 0)
    big = _get(fan, "by_n", "10000") or {}
    if big:
        kib = big.get("reachd_kib_per_stream")
        add("memory per idle stream (RSS delta / 10,000)", num(kib, "{:.2f} KiB"),
            num(big.get("nchan_kib_per_stream"), "{:.2f} KiB"), "nchan",
            ratio(kib, big.get("nchan_kib_per_stream")), "≤ 8 KiB", kib is not None and kib <= 8,
            f"{abs(8 - kib):.2f} KiB {'to spare' if kib <= 8 else 'over'}" if kib is not None else "")

    for row in _get(ph, "memory", "rows", default=[]):
        if row["pool"] != 8192:
            continue
        kib = row["kib_per_stream"]
        add(f"memory per idle stream at today's request-head limit ({row['largest_head_many_headers_bytes']:,} B of "
            f"40-byte headers, {row['largest_head_bytes']:,} B in one; pool 8 KiB; "
            f"{row['streams']:,} streams)", num(kib, "{:.2f} KiB"), "", "", "", "≤ 8 KiB",
            kib is not None and kib <= 8, "see *Memory per stream*" if kib is not None and kib > 8 else "")

    thr = ph.get("throughput", {})
    for mode, label in (("keepalive", "keep-alive"), ("close", "`Connection: close`")):
        t = thr.get(mode)
        if not t:
            continue
        rr = t.get("rps_ratio")
        add(f"`/status` req/s, {label} ({t['reps']} reps × {thr['seconds']} s)", num(t.get("reachd_rps")),
            num(t.get("nginx_rps")), "nginx static", num(rr, "{:.2f}"), "≥ 0.80× nginx (aim 1.0×)",
            rr is not None and rr >= 0.8, f"{rr:.0%} of nginx" if rr is not None else "")
        pr = t.get("p99_ratio")
        add(f"`/status` p99 latency, {label}", ms(t.get("reachd_p99_ms")), ms(t.get("nginx_p99_ms")), "nginx static",
            num(pr, "{:.2f}"), "≤ 1.5× nginx", pr is not None and pr <= 1.5, f"{pr:.2f}×" if pr is not None else "")
        t1 = thr.get(mode + "_threads_1") or {}
        if t1.get("reachd_rps"):
            add(f"  ↳ diagnostic: reachd `--threads 1`, {label}", f"{num(t1['reachd_rps'])} req/s, p99 "
                f"{ms(t1['reachd_p99_ms'])}", "", "", f"{t1['rps_ratio']:.2f} req/s, {t1['p99_ratio']:.2f} p99",
                "—", "info")

    _target_rows(ph, add)
    _dns_rows(ph, add)
    _uplink_rows(ph, add)
    _fleet_rows(ph, add)

    idle = _get(ph, "idle", "quiet")
    if idle and "cpu_pct_of_core" in idle:
        c = idle["cpu_pct_of_core"]
        add(f"idle CPU, {idle['clients_ok']:,} streams, {idle['seconds']:.0f} s", f"{c:.4f} % of a core "
            f"({idle['cpu_s'] * 1e3:.1f} ms)", "", "", "", "< 0.2 % of one core", c < 0.2,
            f"{0.2 / c:.0f}× under" if c > 0 and c < 0.2 else "")
        w = idle["wakeups"]
        add("idle wake-ups (heartbeat 3600 s, no changes)", f"{w} ({idle['wakeups_per_s']:.2f}/s)", "", "", "",
            "none except heartbeats", w == 0, "" if w == 0 else "see per-thread table")
        # libdispatch's manager thread (`…qos.overcommit`) re-arms a 1 s timer of its own; the
        # goal is about reachd's own threads (netlink, HTTP workers, the concurrency pool's work).
        own = sum(t["wakeups"] for t in idle.get("threads_active", {}).values()
                  if not t["comm"].endswith("qos.overcommit"))
        add("idle wake-ups of reachd's own threads (all but libdispatch's manager)", str(own), "", "", "",
            "none", own == 0, "" if own == 0 else "see per-thread table")
    hb = _get(ph, "idle", "heartbeats")
    if hb and "wakeups" in hb:
        add(f"idle with heartbeats every {hb['heartbeat_s']:.0f} s, {hb['seconds']:.0f} s",
            f"{hb['cpu_pct_of_core']:.4f} % of a core, {hb['wakeups']} wake-ups", "", "", "", "—", "info")

    st = ph.get("startup", {})
    if "ms" in st:
        p = _get(st, "ms", "p50")
        add(f"start-up, exec → first 200 on /readyz, p50 of {st['runs'] - st['failed']}", ms(p), "", "", "",
            "≤ 50 ms", p is not None and p <= 50, f"{abs(50 - p):.1f} ms {'to spare' if p <= 50 else 'over'}"
            if p is not None else "")
        rss = _get(st, "footprint", "idle_rss_kib")
        add("idle RSS, no clients", num(rss / 1024 if rss else None, "{:.1f} MiB"), "", "", "", "≤ 15 MiB",
            rss is not None and rss <= 15 * 1024, f"{abs(15 - rss / 1024):.1f} MiB {'to spare' if rss <= 15 * 1024 else 'over'}"
            if rss else "")
        detail = _get(st, "footprint", "rss_detail_kib") or {}
        if detail.get("RssAnon") is not None:
            rows[-1]["reachd"] += f" ({detail['RssAnon'] / 1024:.1f} anonymous + {detail['RssFile'] / 1024:.1f} file-backed)"
        size = _get(st, "footprint", "binary_bytes")
        stripped = _get(st, "footprint", "binary_stripped")
        ssize = _get(st, "footprint", "binary_stripped_bytes")
        add("release binary size" + ("" if stripped is None else " (stripped)" if stripped else " (as built, not stripped)"),
            num(size / 1048576 if size else None, "{:.1f} MiB")
            + (f"; {ssize / 1048576:.1f} MiB stripped" if ssize and not stripped else "")
            + (f"; plus {libs['count']} Swift runtime libraries it links dynamically, {libs['bytes'] / 1048576:.1f} MiB"
               if (libs := _get(st, "footprint", "swift_runtime_libraries") or {}).get("count") else
               "; Swift runtime linked statically"), "", "", "", "—", "info")
    return rows


def mib(kib) -> str:
    return "—" if kib is None else f"{kib / 1024:.1f} MiB"


def _link_down_rows(row: dict, label: str, add) -> None:
    """The link-down figures of one targets run: the one event's latency next to the first
    `unreachable` event's, documents before it, documents per link-down."""
    ld = row.get("link_down")
    if not ld:
        return
    one, st = row.get("link_down_one_event_ms", {}), row.get("link_down_status_ms", {})
    n, flaps = ld["targets"], ld["flaps"]
    for stat in ("p50", "p99"):
        add(f"link down → the one event (`unreachable` and all {n} targets `no-route`), {stat}, {label} "
            f"({flaps} flaps)", ms(one.get(stat)), ms(st.get(stat)), "first `unreachable` event",
            ratio(one.get(stat), st.get(stat)), "—", "info")
    before = ld.get("published_before_max")
    whole = (ld["published_first_complete"] == flaps and ld["same_document"] == flaps and before == 0
             and ld["missing"] == 0 and ld.get("published_never_complete") == 0)
    add(f"link down, {label}: the first `unreachable` document already has every target `no-route` "
        f"(published, from reachd's log / received on `/events`); documents published before it",
        f"{ld['published_first_complete']} / {ld['same_document']} of {flaps} flaps; "
        f"{before if before is not None else '—'} before it (max)", "", "", "", "every flap; 0", whole,
        "" if whole else f"{flaps - ld['published_first_complete']} flaps half-updated in the log, "
        f"{flaps - ld['same_document']} as received, {ld['missing']} never complete")
    extra = ld.get("other_documents_after") or {}
    common = max(extra.items(), key=lambda kv: kv[1])[0] if extra else ""
    # The log can miss a document (the server reads the newest of two quick changes); `sequence`
    # cannot (the monitor numbers every change): both must say one.
    one = ld["published_one"] == flaps and ld.get("documents_max") == 1
    detail = ""
    if ld.get("documents_max") not in (None, 1):
        detail = f"`sequence` advanced by up to {ld['documents_max']} per link-down; "
    if ld["published_one"] != flaps:
        several = flaps - ld["published_one"]
        same = ld.get("published_extra_same_verdicts")
        detail += f"{several} flaps published more than one; " + (
            f"in {same} of them the later ones kept the route state and every target verdict of the first (log); "
            if same is not None else "")
        detail += (f"as received, the later one changed only: {common}"[:300] if common else
                   "on `/events` only the newest arrived (a stream keeps one pending frame, replaced by a newer one)")
    add(f"link down, {label}: documents published per link-down (reachd's log, and `sequence` advanced; received on "
        f"`/events` up to {ld['settle_s']:g} s after the one event: max {ld['received_max']})",
        f"1 in {ld['published_one']} of {flaps} flaps; max {ld['published_max']}, mean {ld['published_mean']:.2f}; "
        f"`sequence` +{ld.get('documents_max')} at most",
        "", "", "", "1", one, detail)


def _target_rows(ph: dict, add) -> None:
    tg = ph.get("targets") or {}
    fam = tg.get("families") or {}
    if "dual" in fam:
        d, v = fam["dual"], fam["ipv4"]
        rat = fam.get("cpu_ratio")
        add(f"**100 dual-stack HTTP targets every 10 s: CPU** (same {fam['window_s']:.0f} s window as the IPv4-only "
            f"run; {d['requests_per_round']:.0f} vs {v['requests_per_round']:.0f} probes a round)",
            f"{d['cpu_pct']:.3f} % of a core", f"{v['cpu_pct']:.3f} %", "100 IPv4-only targets",
            num(rat, "{:.2f}"), "≤ 2× single-family", rat is not None and rat <= 2,
            f"{rat:.2f}× IPv4-only" if rat is not None else "")
        if fam.get("ipv4x2"):
            x2, eq = fam["ipv4x2"], fam.get("cpu_ratio_equal_probes")
            add(f"100 dual-stack targets against as many probes: 200 IPv4-only targets in the same window "
                f"({x2['requests_per_round']:.0f} probes a round): what dual-stack costs beyond its probes",
                f"{d['cpu_pct']:.3f} % of a core", f"{x2['cpu_pct']:.3f} %", "200 IPv4-only targets",
                num(eq, "{:.2f}"), "—", "info")
        none = _get(tg, "none", "rss_kib")
        add("RSS with 100 dual-stack targets", f"{mib(d['rss_kib'])} (+{fam['rss_growth_kib'] / 1024:.1f} MiB over "
            f"IPv4-only" + (f", +{(d['rss_kib'] - none) / 1024:.1f} MiB over no targets" if none else "")
            + f"; {mib(d['rss_end_kib'])} at the window's end"
            + (f"; then {mib(d['rss_anon_kib'])} anonymous vs {mib(v['rss_anon_kib'])}" if d.get("rss_anon_kib") else "")
            + ")", mib(v["rss_kib"]), "100 IPv4-only targets",
            ratio(d["rss_kib"], v["rss_kib"]), "—", "info")
    elif fam.get("skipped"):
        add("100 dual-stack HTTP targets", f"skipped: {fam['skipped']}", "", "", "", "≤ 2× single-family", None)
    if tg.get("targets"):
        _link_down_rows(tg["targets"], "100 IPv4 targets", add)
    if fam.get("dual"):
        _link_down_rows(fam["dual"], "100 dual-stack targets", add)


def _dns_rows(ph: dict, add) -> None:
    dns = ph.get("dns") or {}
    if dns.get("skipped"):
        add("DNS check every 10 s, 3 nameservers", f"skipped: {dns['skipped']}", "", "", "", "—", None)
    if "dns" not in dns:
        return
    on, no = dns["dns"], dns["nodns"]
    cpu_extra, wake_extra = dns.get("extra_cpu_us_per_query"), dns.get("extra_wakeups_per_query")
    add(f"DNS check every 10 s, 3 nameservers: CPU (same {dns['window_s']:.0f} s window, {dns['queries']} queries)",
        f"{on['cpu_pct']:.4f} % of a core" + (f" (+{cpu_extra:.0f} µs per query)" if cpu_extra is not None else ""),
        f"{no['cpu_pct']:.4f} %", "same reachd without `--dns-check`", num(dns.get("cpu_ratio"), "{:.2f}"), "—",
        "info")
    add("DNS check: wake-ups (context switches of every thread; own = all but libdispatch's manager)",
        f"{on['wakeups']} ({on['wakeups_per_s']:.2f}/s; own {on['wakeups_own']})"
        + (f", +{wake_extra:.1f} per query" if wake_extra is not None else ""),
        f"{no['wakeups']} ({no['wakeups_per_s']:.2f}/s; own {no['wakeups_own']})", "without `--dns-check`",
        num(dns.get("wakeups_ratio"), "{:.2f}"), "—", "info")
    def split(w: dict) -> str:
        return (f" ({mib(w['rss_anon_kib'])} anonymous + {mib(w['rss_file_kib'])} file-backed)"
                if w.get("rss_anon_kib") is not None else "")

    add("DNS check: RSS", mib(on["rss_kib"]) + split(on), mib(no["rss_kib"]) + split(no), "without `--dns-check`",
        ratio(on["rss_kib"], no["rss_kib"]), "—", "info")
    rounds = dns["window_s"] / dns["interval_s"]
    counts = list(on["queries"].values())
    ok = bool(counts) and all(abs(c - rounds) <= 1 for c in counts)
    add(f"DNS check: queries each nameserver got in {dns['window_s']:.0f} s", ", ".join(str(c) for c in counts),
        "", "", "", f"1 per 10 s ({rounds:.0f} ± 1)", ok, "")
    quiet = no["udp_sent_total"] == 0 and no["queries_total"] == 0
    add("without `--dns-check`: UDP datagrams sent from reachd's namespace in its whole life (kernel counter); "
        "queries the 3 nameservers saw", f"{no['udp_sent_total']}; {no['queries_total']}", "", "", "", "0; 0", quiet,
        "" if quiet else "something was sent")


def _uplink_rows(ph: dict, add) -> None:
    up = ph.get("uplinks") or {}
    if up.get("skipped"):
        add("`--per-uplink` with 2 uplinks", f"skipped: {up['skipped']}", "", "", "", "—", None)
    if "per_uplink" not in up:
        return
    on, off = up["per_uplink"], up["plain"]
    add(f"**`--per-uplink`, 2 uplinks, {up['targets']} HTTP targets and the connectivity check every "
        f"{up['interval_s']:g} s: CPU** (same {up['window_s']:.0f} s window; checks "
        f"{sum(on['checks'].values())} vs {sum(off['checks'].values())})",
        f"{on['cpu_pct']:.3f} % of a core",
        f"{off['cpu_pct']:.3f} %", "same reachd without `--per-uplink`", num(up.get("cpu_ratio"), "{:.2f}"), "—",
        "info")
    add("`--per-uplink`, 2 uplinks: RSS", f"{mib(on['rss_kib'])} ({mib(on['rss_end_kib'])} at the window's end)",
        f"{mib(off['rss_kib'])} ({mib(off['rss_end_kib'])})", "without `--per-uplink`",
        num(up.get("rss_ratio"), "{:.2f}"), "—", "info")
    ld = on.get("uplink_down")
    if not ld:
        return
    if ld.get("skipped"):
        add("link down on the backup uplink", f"skipped: {ld['skipped']}", "", "", "", "1 document", None)
        return
    gone, first = on["uplink_down_ms"], on["uplink_down_first_document_ms"]
    flaps, dev = ld["flaps"], ld["interface"]
    for stat in ("p50", "p99"):
        add(f"link down on the backup uplink (`{dev}`, {ld['targets']} targets, `--per-uplink`) → the document with "
            f"its `connectivity` `null`, {stat} ({flaps} flaps)", ms(gone.get(stat)), ms(first.get(stat)),
            "first document after the link-down", ratio(gone.get(stat), first.get(stat)), "—", "info")
    same = ld["same_document"] == flaps and ld["missing"] == 0
    add(f"link down on the backup: `connectivity` `null` in the first document after it, the one with the link "
        f"change (`operState`)", f"{ld['same_document']} of {flaps} flaps", "", "", "", "every flap", same,
        "" if same else f"{flaps - ld['same_document']} flaps not, {ld['missing']} never `null`")
    one = ld["published_one"] == flaps and ld.get("documents_max") == 1
    detail = ""
    if ld.get("documents_max") not in (None, 1):
        detail = f"`sequence` advanced by up to {ld['documents_max']} per link-down; "
    if ld["published_one"] != flaps:
        detail += f"{flaps - ld['published_one']} flaps published more than one (see *Uplinks*)"
    add(f"link down on the backup: documents published per link-down (reachd's log, and `sequence` advanced; "
        f"received on `/events` up to {ld['settle_s']:g} s after the `null` one: max {ld['received_max']})",
        f"1 in {ld['published_one']} of {flaps} flaps; max {ld['published_max']}, mean {ld['published_mean']:.2f}; "
        f"`sequence` +{ld.get('documents_max')} at most", "", "", "", "1", one, detail)
    if "disagree_flaps" in ld:
        agree = ld["disagree_flaps"] == 0
        add(f"the backup's `connectivity` against its link and route, document by document, after the link-down and "
            f"after the link-up with its default route put back at once (checked without a default route, or `null` "
            f"with one: the uplink's change and the route's in two documents)",
            f"{ld['disagree_flaps']} of {flaps} flaps ({ld['disagree_down']} documents after the link-down, "
            f"{ld['disagree_up']} after the link-up)", "", "", "", "0", agree,
            "" if agree else "see *Uplinks*: the ways back")
    quiet = ld["other_changes"] == 0 and ld["others_not_full"] == 0
    add(f"link down on the backup: documents that changed anything but `{dev}` (route state, targets, the top-level "
        f"check, the other uplink)", str(ld["other_changes"]), "", "", "", "0", quiet,
        "" if quiet else f"{ld['others_not_full']} documents with something else not reachable / `full`")


FLEET_PEER = "blackbox_exporter"


def _fleet_rows(ph: dict, add) -> None:
    """Per kind and size: CPU per probe against blackbox_exporter's (≤ 0.5×), reachd's flatness
    from the smallest size (±20 %), RSS per target (≤ 2 KiB), wake-ups per probe; the link-down
    at the largest HTTP size (the one document, ≤ 20 ms)."""
    fl = ph.get("fleet") or {}
    for row in fl.get("rows", []):
        n, kind, r, b = row["targets"], row["kind"], row["reachd"], row["blackbox"]
        what = f"{n:,} `{kind}://` targets every {fl['interval_s']:g} s"
        if "error" in r or "error" in b:
            add(f"**fleet, {what}: CPU per probe**", f"failed: {r['error']}" if "error" in r else
                f"{num(r['cpu_us_per_probe'], '{:,.0f} µs')}", f"failed: {b['error']}" if "error" in b else
                num(b["cpu_us_per_probe"], "{:,.0f} µs"), FLEET_PEER, "", "≤ 0.5× blackbox_exporter",
                False if "error" in r else None, "reachd failed" if "error" in r else "the peer failed")
            if "error" in r and kind == "http" and n == fl.get("flaps_at") and fl.get("flaps"):
                add(f"fleet: link down with {n:,} targets → the one document", "not measured: reachd failed", "",
                    "", "", "≤ 20 ms", False, "reachd did not run at this size")
            continue
        rat = row.get("cpu_ratio")
        add(f"**fleet, {what}: CPU per probe** ({fl['window_s']:g} s windows; probes the targets saw: "
            f"{r['probes']:,} / {b['probes']:,} of {r['probes_expected']:,.0f} due)",
            num(r["cpu_us_per_probe"], "{:,.0f} µs"), num(b["cpu_us_per_probe"], "{:,.0f} µs"), FLEET_PEER,
            num(rat, "{:.2f}"), "≤ 0.5× blackbox_exporter", rat is not None and rat <= 0.5,
            f"{rat:.2f}× blackbox_exporter" if rat is not None else "")
        flat = r.get("flatness")
        if flat is not None and n != r.get("flatness_base"):
            add(f"fleet, {what}: reachd's CPU per probe ÷ at {r['flatness_base']:,} targets", f"{flat:.2f}",
                num(b.get("flatness"), "{:.2f}"), "blackbox_exporter's", "", "0.80–1.20 (flat within ±20 %)",
                0.8 <= flat <= 1.2, f"{abs(flat - 1):.0%} {'more' if flat > 1 else 'less'} per probe")
        # Judged at the margin, anonymous memory: what a target adds, from the smallest size of the
        # kind up (the libraries reachd maps on its first probe, once, are not a target's; nor are
        # the pages of code first run at the larger size). The smallest size has no margin: its
        # figure over idle RSS is shown, not judged. Results from before the median (one reading
        # at the window's end, all of RSS judged) are shown as they were judged then.
        anon = r.get("kib_per_target_marginal_anon") if "rss_anon_median_kib" in r else None
        kib = anon if anon is not None else r.get("kib_per_target_marginal")
        peer = (b.get("kib_per_target_marginal_anon") if anon is not None else b.get("kib_per_target_marginal"))
        if kib is None:
            add(f"fleet, {what}: RSS per target (over idle RSS ÷ {n:,}: the smallest size, no margin to judge)",
                f"{r['kib_per_target']:.2f} KiB", f"{b['kib_per_target']:.2f} KiB", FLEET_PEER,
                ratio(r["kib_per_target"], b["kib_per_target"]), "—", "info")
        elif anon is not None:
            add(f"fleet, {what}: RSS per target at the margin, anonymous ((`RssAnon` − at "
                f"{r['flatness_base']:,} targets) ÷ {n - r['flatness_base']:,}, medians over the window; all of "
                f"`VmRSS` the same way in parentheses)",
                f"{kib:.2f} KiB ({r['kib_per_target_marginal']:.2f})",
                f"{num(peer, '{:.2f} KiB')} ({num(b.get('kib_per_target_marginal'), '{:.2f}')})", FLEET_PEER,
                ratio(kib, peer), "≤ 2 KiB", kib <= 2,
                f"{abs(2 - kib):.2f} KiB {'to spare' if kib <= 2 else 'over'}; over idle RSS ÷ {n:,}: "
                f"{r['kib_per_target']:.2f} KiB")
        else:
            add(f"fleet, {what}: RSS per target at the margin ((RSS − RSS at {r['flatness_base']:,}) ÷ "
                f"{n - r['flatness_base']:,}; over idle RSS ÷ {n:,} in parentheses)",
                f"{kib:.2f} KiB ({r['kib_per_target']:.2f})",
                f"{num(peer, '{:.2f} KiB')} ({b['kib_per_target']:.2f})", FLEET_PEER, ratio(kib, peer), "≤ 2 KiB",
                kib <= 2, f"{abs(2 - kib):.2f} KiB {'to spare' if kib <= 2 else 'over'}")
        add(f"fleet, {what}: wake-ups per probe (context switches of every thread)",
            num(r["wakeups_per_probe"], "{:.2f}"), num(b["wakeups_per_probe"], "{:.2f}"), FLEET_PEER,
            ratio(r["wakeups_per_probe"], b["wakeups_per_probe"]), "—", "info")
        if "link_down" in r:
            _link_down_rows(r, f"{n:,} `{kind}://` targets (fleet)", add)
            p99 = _get(r, "link_down_one_event_ms", "p99")
            add(f"fleet: link down with {n:,} targets → the one document, p99 ({r['link_down']['flaps']} flaps)",
                ms(p99), "", "", "", "≤ 20 ms", p99 is not None and p99 <= 20,
                f"{abs(20 - p99):.1f} ms {'to spare' if p99 <= 20 else 'over'}" if p99 is not None
                else "never complete")
    for skipped in fl.get("skipped", []):
        add(f"fleet, {skipped['targets']:,} `{skipped['kind']}://` targets", "skipped: time budget", "", "", "", "—",
            None)


def table(r: dict) -> str:
    lines = ["| what | reachd | peer (same run) | reachd ÷ peer | target | result |",
             "|---|---|---|---|---|---|"]
    for v in r.get("verdicts", []):
        peer = f"{v['peer']} ({v['peer_name']})" if v["peer"] and v["peer_name"] else v["peer"] or "—"
        result = "—" if v["met"] == "info" else verdict(v["met"], v["detail"])
        lines.append(f"| {v['what']} | {v['reachd']} | {peer} | {v['ratio'] or '—'} | {v['target']} | {result} |")
    for phase, value in r.get("phases", {}).items():
        if isinstance(value, dict) and "error" in value:
            lines.append(f"| phase {phase} | failed: {value['error']} | | | | |")
    return "\n".join(lines)


def _fanout_detail(r: dict) -> str:
    fan = _get(r, "phases", "fanout", "runs", default=[])
    if not fan:
        return ""
    out = ["| server | N | rep | ok / failed | missed clients | spread p50 | spread max | p50 | p99 | max | "
           "p99 kernel-rx | p99 from return | trigger call p50 | RSS before → idle → after (KiB) | KiB/stream | "
           "server CPU | client CPU |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in sorted(fan, key=lambda x: (x["n"], x["server"], x["rep"])):
        rss = x["rss_kib"]
        out.append(
            f"| {x['server']} | {x['n']:,} | {x['rep']} | {x['clients_ok']:,} / {x['clients_failed']} | "
            f"{x['missed_clients']} | {ms(_get(x, 'spread_ms', 'p50'))} | {ms(_get(x, 'spread_ms', 'max'))} | "
            f"{ms(_get(x, 'latency_ms', 'p50'))} | {ms(_get(x, 'latency_ms', 'p99'))} | "
            f"{ms(_get(x, 'latency_ms', 'max'))} | {ms(_get(x, 'latency_kernel_rx_ms', 'p99'))} | "
            f"{ms(_get(x, 'latency_from_trigger_return_ms', 'p99'))} | {ms(_get(x, 'trigger_call_ms', 'p50'))} | "
            f"{rss['before']:,} → {rss['idle_clients']:,} → "
            f"{rss['after_changes']:,} | {num(x['kib_per_stream'], '{:.2f}')} | "
            f"{x['server_cpu_s']:.2f} s ({x['server_cpu_pct_of_core']:.0f} %) | "
            f"{x['client_cpu_s']:.2f} s ({x['client_cpu_pct_of_core']:.0f} %) |")
    return "\n".join(out)


def _throughput_detail(r: dict) -> str:
    thr = _get(r, "phases", "throughput", "runs", default={})
    if not thr:
        return ""
    out = ["| mode | server | rep | req/s | p50 | p99 | errors | server CPU | wrk CPU |",
           "|---|---|---|---|---|---|---|---|---|"]
    for mode, by in thr.items():
        for server, runs in by.items():
            for x in runs:
                out.append(f"| {mode} | {server} | {x['rep']} | {num(x['rps'])} | {ms(x['p50_ms'])} | {ms(x['p99_ms'])} | "
                           f"{x['socket_errors'] + x['non_2xx']} | {x['server_cpu_s']:.2f} s | {x.get('wrk_cpu_s', 0):.2f} s |")
    return "\n".join(out)


def _latency_detail(r: dict) -> str:
    lat = _get(r, "phases", "latency", default={})
    if "reachd" not in lat:
        return ""
    rows = [("reachd, all transitions", lat["reachd"]), ("reachd, link down", lat["reachd_down"]),
            ("reachd, link up", lat["reachd_up"]), ("ip monitor (line with the new state)", lat["monitor"]),
            ("ip monitor, link down", lat["monitor_down"]), ("ip monitor, link up", lat["monitor_up"]),
            ("ip monitor, first line of any kind", lat["monitor_first_line"]),
            ("the netlink request itself (send → ACK)", lat["call"]),
            ("reachd − ip monitor, same transition", lat.get("reachd_minus_monitor", {}))]
    out = ["| series | n | p50 | p90 | p99 | max |", "|---|---|---|---|---|---|"]
    for name, s in rows:
        out.append(f"| {name} | {s.get('n', 0)} | {ms(s.get('p50'))} | {ms(s.get('p90'))} | {ms(s.get('p99'))} | "
                   f"{ms(s.get('max'))} |")
    bm = lat.get("block_median", {})
    out.append("")
    out.append(f"Median over {len(lat.get('blocks', []))} blocks of {lat['flaps'] // max(1, len(lat.get('blocks', [])))} "
               f"flaps: reachd p50 {ms(bm.get('reachd_p50'))}, p99 {ms(bm.get('reachd_p99'))}; ip monitor p50 "
               f"{ms(bm.get('monitor_p50'))}, p99 {ms(bm.get('monitor_p99'))}. Extra reachd events after a "
               f"transition: {lat.get('reachd_extra_events')}; events whose operState was not the new state: "
               f"{lat.get('wrong_operstate')}. Transitions the kernel itself reported more than 100 ms late (linkwatch "
               f"defers carrier events to one run per second; `ip monitor` saw the same delay): "
               f"{lat.get('deferred_by_kernel')}.")
    return "\n".join(out)


def _routes_detail(r: dict) -> str:
    routes = _get(r, "phases", "routes", default={})
    if not routes or "error" in routes:
        return ""
    out = ["| routes in the table | changes | event p50 | p90 | p99 | max | missed | RSS after |",
           "|---|---|---|---|---|---|---|---|"]
    for count, row in sorted(routes.items(), key=lambda item: int(item[0])):
        e = row["event_ms"]
        out.append(f"| {int(count):,} | {e.get('n', 0)} | {ms(e.get('p50'))} | {ms(e.get('p90'))} | {ms(e.get('p99'))} "
                   f"| {ms(e.get('max'))} | {row['missing']} | {row['rss_kib'] / 1024:.1f} MiB |")
    return "\n".join(out)


def _targets_detail(r: dict) -> str:
    t = _get(r, "phases", "targets", default={})
    if "targets" not in t:
        return ""
    out = ["| reachd | RSS | threads | CPU (% of a core) | /status req/s (wrk, keep-alive) | p99 |", "|---|---|---|---|---|---|"]
    names = {"none": "no targets", "quiet": "100 targets, probed once (20 KB document, no probing)",
             "targets": "100 targets every 10 s"}
    for key in ("none", "quiet", "targets"):
        row = t.get(key)
        if not row:
            continue
        w = row["status_wrk"]
        out.append(f"| {names[key]} | {row['rss_kib'] / 1024:.1f} MiB | {row['threads']} | {row['cpu_pct']:.3f} | "
                   f"{num(w.get('rps'))} | {ms(w.get('p99_ms'))} |")
    fam = t.get("families") or {}
    for key, name in (("ipv4", "100 IPv4-only targets every 10 s (`v4.test`: A)"),
                      ("ipv4x2", "200 IPv4-only targets every 10 s (`v4.test`: A)"),
                      ("dual", "100 dual-stack targets every 10 s (`dual.test`: A + AAAA)")):
        row = fam.get(key)
        if row:
            out.append(f"| {name}; same {fam['window_s']:.0f} s window, {row['requests_per_round']:.0f} requests a "
                       f"round, {row['cpu_us_per_request']:.0f} µs CPU each | {row['rss_kib'] / 1024:.1f} MiB | "
                       f"{row['threads']} | {row['cpu_pct']:.3f} | — | — |")
    for label, row in (("100 IPv4 targets (`http://198.18.x.1`)", t["targets"]), ("100 dual-stack targets", fam.get("dual"))):
        if not row or "link_down" not in row:
            continue
        s, g, o = row["link_down_status_ms"], row["link_down_targets_ms"], row["link_down_one_event_ms"]
        ld = row["link_down"]
        out += ["", f"Link down, {label}, {ld['flaps']} flaps: → the first event with `unreachable`: p50 {ms(s.get('p50'))}, "
                f"p99 {ms(s.get('p99'))}; → every target `no-route`: p50 {ms(g.get('p50'))}, p99 {ms(g.get('p99'))}; → "
                f"the event with both: p50 {ms(o.get('p50'))}, p99 {ms(o.get('p99'))}. The first `unreachable` "
                f"document already had every target `no-route` in {ld['published_first_complete']} of {ld['flaps']} "
                f"flaps by reachd's log (every document published) and in {ld['same_document']} as received; "
                f"documents published per link-down: exactly one in {ld['published_one']} of {ld['flaps']} flaps, at "
                f"most {ld['published_max']}; received: at most {ld['received_max']}; `sequence` advanced by at most "
                f"{ld['documents_max']} (the monitor numbers changes the server may never publish)."]
        for side, what in (("other_documents_before", "before the one event"), ("other_documents_after", "after it")):
            for change, n in sorted((ld.get(side) or {}).items(), key=lambda kv: -kv[1]):
                out.append(f"- {n} document(s) {what} changed: {change}")
    return "\n".join(out)


def _dns_detail(r: dict) -> str:
    dns = _get(r, "phases", "dns", default={})
    if "dns" not in dns:
        return ""
    out = []
    for key, what in (("dns", f"`--dns-check {dns['name']} --dns-interval {dns['interval_s']:g}`"),
                      ("nodns", "without `--dns-check`")):
        w = dns[key]
        out.append(f"- **{what}**, {dns['window_s']:.0f} s: CPU {w['cpu_s'] * 1e3:.1f} ms, {w['wakeups']} wake-ups "
                   f"({w['wakeups_own']} of reachd's own threads), queries per nameserver {w['queries']}, UDP datagrams "
                   f"sent from its namespace {w['udp_sent']} in the window, {w['udp_sent_total']} in its whole life; "
                   f"RSS {w['rss_kib'] / 1024:.1f} MiB.")
        for tid, t in sorted(w["threads_active"].items(), key=lambda kv: -kv[1]["wakeups"]):
            out.append(f"  - thread {tid} `{t['comm']}`: {t['wakeups']} wake-ups, {t['cpu_ms']:.2f} ms CPU")
    return "\n".join(out)


def _uplinks_detail(r: dict) -> str:
    up = _get(r, "phases", "uplinks", default={})
    if "per_uplink" not in up:
        return ""
    out = ["| reachd | RSS | threads | CPU (% of a core) | wake-ups | check requests by uplink | target requests |",
           "|---|---|---|---|---|---|---|"]
    for key, name in (("plain", "without `--per-uplink`"), ("per_uplink", "with `--per-uplink`")):
        w = up[key]
        checks = ", ".join(f"`{dev}` {n}" for dev, n in w["checks"].items())
        if w.get("checks_elsewhere"):
            checks += f", elsewhere {w['checks_elsewhere']}"
        out.append(f"| {name} | {w['rss_kib'] / 1024:.1f} MiB | {w['threads']} | {w['cpu_pct']:.3f} | {w['wakeups']} | "
                   f"{checks} | {w['target_requests']} |")
    plain = up.get("plain_interface_connectivity") or {}
    if any(v is not None for v in plain.values()):
        out += ["", f"Without `--per-uplink` an interface had a `connectivity` that was not `null`: {plain}."]
    on = up["per_uplink"]
    ld = on.get("uplink_down") or {}
    if "flaps" in ld:
        g, f, b = on["uplink_down_ms"], on["uplink_down_first_document_ms"], on["uplink_route_to_full_ms"]
        out += ["", f"Link down on `{ld['interface']}`, {ld['flaps']} flaps: → the document with its `connectivity` "
                f"`null`: p50 {ms(g.get('p50'))}, p99 {ms(g.get('p99'))}, max {ms(g.get('max'))}; → the first document "
                f"after the link-down: p50 {ms(f.get('p50'))}, p99 {ms(f.get('p99'))}. They were the same document in "
                f"{ld['same_document']} of {ld['flaps']} flaps; documents published per link-down: exactly one in "
                f"{ld['published_one']} of {ld['flaps']} flaps, at most {ld['published_max']}; received: at most "
                f"{ld['received_max']}; `sequence` advanced by at most {ld['documents_max']}. Link up, then the "
                f"default route back (from its ACK) → `{ld['interface']}` checked `full` again: p50 {ms(b.get('p50'))}, "
                f"p99 {ms(b.get('p99'))}."]
        for field, n in sorted((ld.get("null_document_changed") or {}).items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"- the `null` document changed {field} in {n} flaps")
        for change, n in sorted((ld.get("other_documents") or {}).items(), key=lambda kv: -kv[1]):
            out.append(f"- {n} other document(s) of a link-down changed: {change}"[:400])
        for path, n in sorted((ld.get("up_paths") or {}).items(), key=lambda kv: -kv[1]):
            out.append(f"- back up, {n} flaps: `{ld['interface']}`'s operState / default route / connectivity per "
                       f"document, from the link-up: {path or '(no document)'}")
    return "\n".join(out)


def _fleet_detail(r: dict) -> str:
    fl = _get(r, "phases", "fleet", default={})
    if not fl.get("rows"):
        return ""
    idle = fl["idle_rss_kib"]
    out = ["| targets | tool (order) | CPU per probe | ÷ at the smallest size | CPU, % of a core | wake-ups per probe | "
           "RSS, median over the window (threads) | KiB per target over idle (at the margin); anonymous only | probes seen / due | targets ok at the end | "
           "nginx CPU | scraper CPU, RSS | anything else on the machine |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in fl["rows"]:
        for tool in ("reachd", "blackbox"):
            t = row[tool]
            name = f"{tool} ({row['order'].index(tool) + 1})"
            if "error" in t:
                out.append(f"| {row['targets']:,} `{row['kind']}://` | {name} | failed: {t['error']} |"
                           + " |" * 10)
                continue
            ok = t.get("targets_ok")
            out.append(
                f"| {row['targets']:,} `{row['kind']}://` | {name} | {num(t['cpu_us_per_probe'], '{:,.0f} µs')} | "
                f"{num(t.get('flatness'), '{:.2f}')} | {t['cpu_pct']:.2f} | {num(t['wakeups_per_probe'], '{:.2f}')} | "
                f"{mib(t.get('rss_median_kib', t['rss_end_kib']))} ({t['threads']}) | {t['kib_per_target']:.2f}"
                + (f" ({t['kib_per_target_marginal']:.2f})" if "kib_per_target_marginal" in t else "")
                + (f"; {t['kib_per_target_anon']:.2f}" if "kib_per_target_anon" in t else "")
                + (f" ({t['kib_per_target_marginal_anon']:.2f})" if "kib_per_target_marginal_anon" in t else "")
                + f" | {t['probes']:,} / {t['probes_expected']:,.0f} | {num(ok)} | {t['nginx_cpu_pct']:.2f} % | "
                + (f"{t['scraper']} {t['scraper_cpu_pct']:.2f} %, {mib(t['scraper_rss_kib'])}" if "scraper" in t
                   else "—") + f" | {t['else_cpu_pct']:.0f} % |")
    out += ["", f"Idle RSS, what RSS per target is over: reachd {mib(idle['reachd'])} (no targets: libcurl and c-ares "
            f"not loaded), blackbox_exporter {mib(idle['blackbox'])} (started, never scraped). Anonymous memory only "
            f"(`RssAnon`, after the semicolon): the same without the pages of code and libraries, which reachd maps "
            f"on its first probe, once. `icmp://`: reachd sends "
            f"`--icmp-count` {fl['icmp_count']} small echoes and one full-size echo per probe, blackbox_exporter one "
            f"echo; a probe is counted as that many echo requests received. Targets ok: reachd's targets `reachable`, "
            f"blackbox_exporter's whose last probe succeeded (`probe_success 1`)."]
    for row in fl["rows"]:
        r = row["reachd"]
        if "link_down" in r:
            s, o, ld = r["link_down_status_ms"], r["link_down_one_event_ms"], r["link_down"]
            out += ["", f"Link down with {row['targets']:,} `{row['kind']}://` targets, {ld['flaps']} flaps: → the "
                    f"first `unreachable` document p50 {ms(s.get('p50'))}, p99 {ms(s.get('p99'))}; → the one document "
                    f"(and every target `no-route`) p50 {ms(o.get('p50'))}, p99 {ms(o.get('p99'))}, max "
                    f"{ms(o.get('max'))}; exactly one document published in {ld['published_one']} of {ld['flaps']} "
                    f"flaps (at most {ld['published_max']})."]
    for skipped in fl.get("skipped", []):
        out.append(f"- {skipped['targets']:,} `{skipped['kind']}://` targets: skipped, time budget")
    return "\n".join(out)


def _idle_detail(r: dict) -> str:
    idle = _get(r, "phases", "idle", default={})
    out = []
    for key, w in idle.items():
        if not isinstance(w, dict) or "threads_active" not in w:
            continue
        out.append(f"- **{key}** (heartbeat {w['heartbeat_s']:g} s, {w['clients_ok']:,} streams, {w['seconds']:.0f} s): "
                   f"CPU {w['cpu_s'] * 1e3:.1f} ms, {w['wakeups']} wake-ups, {w['heartbeats_received']:,} heartbeats "
                   f"received by the clients, {w['threads_total']} threads in reachd; client CPU {w['client_cpu_s']:.3f} s.")
        for tid, t in sorted(w["threads_active"].items(), key=lambda kv: -kv[1]["wakeups"]):
            out.append(f"  - thread {tid} `{t['comm']}`: {t['wakeups']} wake-ups, {t['cpu_ms']:.2f} ms CPU")
    if any(t["comm"].endswith("qos.overcommit") and t["wakeups"]
           for w in idle.values() if isinstance(w, dict) for t in w.get("threads_active", {}).values()):
        out += ["", "A `…qos.overcommit` thread waking about once a second is libdispatch's manager thread (Swift "
                "concurrency's global executor on Linux): `_dispatch_workq_init_once` arms a 1 s timer that monitors "
                "its thread pools, and the manager re-arms a `CLOCK_MONOTONIC` timerfd every second even when nothing "
                "runs (seen with strace and gdb on this build). It is not reachd's own code, which has no periodic "
                "timer besides the heartbeat."]
    return "\n".join(out)


METHOD = """\
## Method

Every measurement runs the server in a network namespace the bench creates (names
`rb<pid>-N`, deleted in every outcome along with every process inside), and the clients in the
same namespace on its `127.0.0.1`. reachd's namespaces get a veth pair to a peer namespace,
addresses from 198.18.0.0/15, a default route and no IPv6 link-local addresses (`addrgenmode
none`, so a flap changes the status exactly once). Peers are started the same way (`ip netns
exec NS ...`) in the same invocation, alternating which goes first per repetition, and each
figure is shown next to the peer's with the ratio; the figures are medians over the
repetitions unless said otherwise. nginx runs as its own process with a generated config under
a temp directory (one worker, `daemon off`, access log off, `keepalive_requests` unlimited),
never as the system service.

- **Change latency.** `bench.py` sends the `RTM_NEWLINK` request that `ip link set DEV
  down|up` sends, from a netlink socket inside reachd's namespace, and takes the time when the
  kernel's ACK is read (the moment `ip` returns). It then waits, in one `select` loop, for the
  complete SSE `status` event on an `/events` stream and for the line of `ip -o monitor link`
  (started with `ip netns exec` like reachd) that reports the new state; both are timed from
  the ACK. 20–40 ms pause between transitions, 10 unmeasured flaps first. Heartbeat 3600 s.
  The veth ends get different interface indexes (11 and 21), as real veth pairs have: with
  equal indexes (both 2 in fresh namespaces) the kernel's linkwatch treats the carrier change
  as non-urgent and batches it to once a second, and about 1.5 % of link-ups then reached every
  listener, `ip monitor` included, up to 1 s late (seen in an earlier run of this bench).
- **Fan-out.** `bench/sseclient.c` (epoll, one thread per process, two processes) opens N
  `/events` streams with `Accept: text/event-stream`, waits until each has its first event, and
  records every event by the `"sequence"` in its data, with the user-space receive time
  (`CLOCK_MONOTONIC`) and the kernel's receive time of the segment (`SO_TIMESTAMPNS`). A change
  for reachd is an address `198.18.x.100/32` added to / removed from its veth (one netlink
  request, timed at its ACK); each add or remove changes `interfaces[].addresses` and publishes one
  event. For nchan (`nchan_subscriber eventsource`, `nchan_message_buffer_length 1`, event name
  `status`) the bench POSTs the same document bytes reachd sent (sequence renumbered) to a
  `nchan_publisher` location on a keep-alive connection.
  Latency = client receive − the moment the trigger was sent (netlink request / POST), pooled
  over every (client, change). The issue asked for "from the trigger returning"; that is kept
  as a column, but it cannot rank the two: nchan writes the event to every subscriber *before*
  it answers the POST (its from-return latencies are negative, down to minus the whole fan-out),
  while reachd's netlink ACK returns in about 0.25 ms, before any client is written. From the
  send, both include the whole path. The next change waits until every client has the previous
  one (or 5 s), then 80–120 ms.
  **Spread** (the headline) = per event, the last client's kernel receive time minus the first
  client's (`SO_TIMESTAMPNS`, so the clients' own scheduling does not count): the cost of the
  fan-out itself, independent of how the event was triggered; p50 and max over the 20 events,
  median over repetitions, ratio per repetition against nchan with one worker. The
  **write-only floor** (`bench/floor.c`, one repetition per N) is an SSE server that does nothing
  but frame each change once and `send()` it to every stream, split over 1 or 2 threads: what this
  machine allows at all, with the clients on the same two cores.
  "Missed" = a client that lacks any of the 20 changes, plus clients that never connected.
  The client processes' CPU during the change phase is reported next to the server's, so a
  client bottleneck is visible: user-space receive times include the client's own queueing,
  kernel receive times do not.
- **Memory per stream.** The server's RSS (`VmRSS`; for nginx, the worker's) before the clients
  connect and 1 s after all N are connected and idle, divided by N — measured in the fan-out runs.
- **`/status` throughput.** `wrk -t2 -c64 -d10s --latency` inside the namespace, keep-alive
  and again with `-H "Connection: close"`, against reachd and against nginx serving the exact bytes
  of reachd's `/status` as a static file. reachd runs with its default 2 HTTP threads; a
  diagnostic third server, reachd `--threads 1`, runs in the same repetitions to show how much
  of reachd's tail latency comes from four busy threads (2 wrk + 2 reachd) sharing two cores.
  Ratios are the median of the per-repetition ratios.
- **Targets.** 100 `http://` targets on a Python HTTP server (204) in the gateway namespace, every
  10 s, against the same reachd with none and with the same targets probed once a day (a document
  as large, no probing), one after the other; CPU over each window is every reachd thread's
  `schedstat`, read every 0.2 s so that a worker thread that ends within the window keeps what it
  used and one that starts counts from zero (summing only the threads alive at both ends, as an
  earlier version did, drops libdispatch's retired workers and came out negative).
  **Dual-stack:** a second pair of namespaces whose veth also has 2001:db8:x::2/64 and ::1/64
  (`nodad`, usable at once) and an IPv6 default route; the server listens on `::` with
  `IPV6_V6ONLY` 0 (both families, each request counted by family); the targets are
  `http://dual.test:8080/tN`, and `dual.test` has an IPv4 and an IPv6 address in
  `/etc/netns/<ns>/hosts`, which `ip netns exec` mounts over `/etc/hosts` (c-ares'
  `ares_getaddrinfo` reads it before DNS; the namespace's UDP counters show no query was sent). Its
  comparison is 100 IPv4-only targets, `http://v4.test:8080/tN` with an IPv4 address only, run at
  the same time as the dual-stack reachd and measured over the same window; the ratio is
  dual-stack ÷ IPv4-only. A third reachd in the same window probes 200 IPv4-only targets, as many
  probes a round as the dual-stack targets make: dual-stack ÷ that is what the family logic costs
  beyond its probes (1 when it costs nothing more).
  **Link down**, with every target reachable: the `RTM_NEWLINK` request as above, timed from its
  ACK to the first `/events` document whose `state` is `unreachable`, to the first whose targets
  are all `unreachable`/`no-route` (each family with addresses too), and to the first that is
  both — the one event the contract promises. Which documents reachd *published* between the
  link-down and the link-up comes from its log (`--log-format json` writes one `status changed`
  line per published document, with the route state and every target's state and reason): a
  subscriber can miss one, since a stream holds one pending frame and replaces it with a newer
  one, and gaps in `sequence` count changes the server never published. What each document
  received changed (from the one before) is kept in the JSON. Then link up, 1.2 s, and the
  default routes back (and the IPv6 address, which the kernel flushes from a downed interface).
- **DNS check.** Two reachds at once, each in its namespace whose `/etc/netns/<ns>/resolv.conf`
  lists three nameservers: a Python UDP responder on three addresses of the gateway, answering
  every A query NOERROR and counting queries per address. One runs `--dns-check probe.test.
  --dns-interval 10`, the other nothing of the kind; over the same window, CPU and wake-ups
  (voluntary + involuntary context switches) of every thread, read as for targets. "Nothing
  sent without the check" is the UDP datagrams sent from that reachd's namespace since it was
  made (`Udp OutDatagrams` + `Udp6OutDatagrams`; nothing else runs there) and the queries its
  nameservers saw.
- **Uplinks.** Two reachds at once, each in its namespace with two veth uplinks to one peer
  namespace: `wan0` (198.18.x.2/24, default route metric 100, the kernel's choice) and `wan1`
  (198.19.x.2/24, default route metric 200, the backup); the peer holds the servers' addresses
  on its `lo`, reachable through either (rp_filter off in reachd's namespace, so a reply through
  `wan1` is taken). Both probe 100 `http://` targets (unpinned) and run the connectivity check
  (`--connectivity-url http://198.19.255.20/generate_204`, a Python server answering 204 that
  counts requests by client address, i.e. by the uplink they came through), both every 10 s;
  one has `--per-uplink`. CPU and wake-ups over the same window, read as for targets; RSS before
  and after it. Then, on the one with `--per-uplink`, link down on `wan1` (the `RTM_NEWLINK`
  request as above, timed from its ACK) with every target reachable through `wan0`: to the first
  `/events` document in which `wan1`'s `connectivity` is `null`, and to the first document of any
  kind; documents published per link-down from reachd's log (as for targets), up to 0.5 s after
  the `null` one; what each document changed besides `wan1`. Then link up, `wan1`'s default route
  back at once (the link-down flushed it; an `RTM_NEWROUTE` request, timed from its ACK), and until
  `wan1` is checked `full` again. In every document of both halves `wan1`'s `connectivity` is held
  against its own fields: here `wan1` is an uplink exactly when it is `up` with an address and a
  default route (`isDefaultRoute`), so a document with it checked and no default route, or `null`
  with one, has the uplink's change and the route's in two documents.
- **Fleet.** reachd next to Prometheus' blackbox_exporter (Debian's `prometheus-blackbox-exporter`,
  its own process with a generated config: modules `http_2xx`, `tcp_connect` and `icmp`, each
  `preferred_ip_protocol: ip4`, timeout 3 s) probing 100, 1,000 and 10,000 `tcp://` and `http://`
  targets and 1,000 `icmp://` ones, every 10 s. One pair of namespaces for the whole phase: the
  tools on one side, and behind the gateway nginx (one worker) listening on port 80 of every
  address of 198.19.0.0/16 (an AnyIP `local` route on the far side's `lo`), answering `200 ok` to
  any GET. Target i is its own address (198.19.1.1, 198.19.1.2, …; HTTP path `/t<i>`), so 1,000
  connections a second never meet a 4-tuple still in TIME_WAIT. reachd reads the targets from
  `--targets-file` (`--target-interval 10 --target-timeout 3`); blackbox_exporter gets one
  `/probe?module=…&target=…` per target every 10 s from `bench/scrape_loop.py` (its own process
  in the same namespace: Python asyncio, the targets' scrapes evenly spread over the interval,
  keep-alive connections, and the request Prometheus 2.42 sends, captured from Debian's
  `prometheus`: OpenMetrics `Accept`, `Accept-Encoding: gzip`, `X-Prometheus-Scrape-Timeout-Seconds:
  10`; a target still being scraped when due again is skipped). A real Prometheus with the usual
  relabelling (`--fleet-scraper prometheus`) drives it the same way, but at 10,000 targets its own
  CPU (scraping, parsing, storing every series) comes out of the exporter's on the same two cores,
  and the exporter then falls behind the probes due; the scraper's CPU is in the table either way.
  `net.ipv4.ping_group_range` allows both tools ICMP datagram sockets (as the pod sysctl
  probes.md recommends). The tools run one at a time, reachd and blackbox_exporter back to back
  per size, who goes first alternating; each is a fresh process. reachd probes in rounds (bursts
  of a few seconds every interval): its window starts once every target is reachable and a round
  has gone by with 2 s of quiet after it, so a window of whole intervals holds whole rounds;
  blackbox_exporter's, whose scrapes are spread evenly, after one round of scrapes and 2 s. Over
  the window: CPU (`schedstat`) and wake-ups (voluntary + involuntary context switches) of every
  thread of the tool's process, read as for targets — never the scraper's, reported beside it,
  like nginx's and the machine's other load; probes are what the targets saw in the same window
  (nginx `stub_status` accepts for TCP, requests for HTTP, less the reading itself; the far
  namespace's `IcmpInEchos` ÷ echoes per probe for ICMP). RSS is the median of readings every
  0.2 s over the window. RSS per target, the figure judged, is anonymous memory (`RssAnon`) at the
  margin: the tool's median at N minus the same tool's at the smallest size of the kind, ÷ the
  targets added — what a target holds (issue 28: "per-target state is a URL and a verdict"),
  without what the first probe loads once (reachd maps libcurl, c-ares and their libraries then,
  about 6 MiB; blackbox_exporter's heap grows with its first scrapes) and without pages of code,
  which grow in a step where more of a tool's paths first run, not with the targets
  (bench/README.md, *The fleet phase*). Beside it the same margin of all of `VmRSS`, and, alone at
  the smallest size, `VmRSS` over the tool's idle RSS (reachd without targets, blackbox_exporter
  never scraped, both
  measured first), ÷ N. Flatness is reachd's CPU per probe at N ÷ at the smallest
  size of the same kind. A reachd that does not serve within 60 s of its start is recorded as
  failed at that size. At the largest HTTP size reachd then does the link-down flaps of
  *Targets* (the one document, documents published per link-down, from its log).
- **Idle cost.** 1,000 streams open, heartbeat 3600 s, no changes; CPU time (`schedstat`, ns
  resolution) and voluntary + involuntary context switches of every reachd thread over the window.
  A second window with a 5 s heartbeat shows what heartbeats cost.
- **Start-up.** Time from just before `exec` (`ip netns exec NS reachd …`, whose own overhead is
  listed separately) to the first `200` from `/readyz`, polled every 0.5 ms from inside the
  namespace, in a namespace whose network is reachable. Footprint: `VmRSS` 2 s after the last
  start with no clients; the size of the release binary.

Caveats: this is a shared 2-core VM and the server, the peer and the clients compete for the
same two cores, so absolute figures are noisy and the same-run ratios are what to compare. reachd
runs with its defaults (2 HTTP worker threads); nginx/nchan with one worker, as the issue asks.
"""


def markdown(r: dict) -> str:
    m = r.get("machine", {})
    v = r.get("versions", {})
    total = (r.get("bench_seconds") or 0) + (r.get("build_seconds") or 0)
    parts = [
        "# reachd benchmarks",
        "",
        f"Generated by `make bench` (`bash bench/run.sh{' --quick' if r['mode'] == 'quick' else ''}"
        f"{' --only ' + ','.join(r.get('phases', {})) if r.get('results_name') == 'partial' else ''}`) on "
        f"{r['started']} at commit {r.get('commit', 'unknown')} — {r['mode']} run, {r['bench_seconds']:.0f} s of measuring"
        + (f"; the reachd binary came from `$REACHD_BIN` (not built in this run; {r['build_seconds']:.0f} s of "
           f"setup before measuring)" if r.get("prebuilt") else
           f" plus {r['build_seconds']:.0f} s of installing and building ({total / 60:.1f} min in all)"
           if r.get("build_seconds") is not None else "")
        + ". Raw figures: `bench/results/" + r.get("results_name", "quick" if r["mode"] == "quick" else "latest")
        + ".json` (git-ignored)."
        + (" reachd was perf-profiled during one fan-out and one wrk run, which slows those runs a little."
           if r.get("profiled") else ""),
        "",
        "**This machine is a noisy shared 2-core VM**: the server under test, its peer and the clients all run on the"
        " same two cores, so compare the same-run ratios rather than the absolute numbers.",
        "",
        "Every line of this file is written by `bench/report.py`: edit that, not this. What the comparison is for, "
        "and how the fan-out came to its present design, is [BENCHMARKS.md](../BENCHMARKS.md).",
        "",
        "## Machine",
        "",
        f"- CPU: {m.get('cpu')} × {m.get('cores')} cores (virtualised: {m.get('hypervisor')}), "
        f"{m.get('memory_gib')} GiB memory; load average {' '.join(m.get('loadavg_at_start', []))} at the start, "
        f"{' '.join(m.get('loadavg_at_end', []))} at the end; both cores {m.get('cpu_busy_pct_during_run')} % busy on "
        f"average during the run (the bench itself included; anything else running on the machine shows up here)",
        f"- OS: {m.get('os')}, kernel {m.get('kernel')}",
        f"- reachd: release build, libmicrohttpd {v.get('libmicrohttpd')}; {v.get('swift')}",
        f"- peers: nginx {v.get('nginx')}, libnginx-mod-nchan {v.get('libnginx-mod-nchan')}, wrk {v.get('wrk')}, "
        f"prometheus-blackbox-exporter {v.get('prometheus-blackbox-exporter')}, prometheus {v.get('prometheus')}",
        "",
        "## Results",
        "",
        table(r),
        "",
    ]
    detail = _latency_detail(r)
    if detail:
        parts += ["### Change latency", "", detail, ""]
    detail = _routes_detail(r)
    if detail:
        parts += ["### Large routing tables", "",
                  "A second address added to and removed from the interface that carries N /32 routes; latency from "
                  "the netlink request to the SSE event. reachd re-reads routes only where the kernel may have "
                  "flushed some silently, filtered to that interface.", "", detail, ""]
    detail = _targets_detail(r)
    if detail:
        parts += ["### Targets", "", "100 HTTP targets on a server behind the gateway namespace; CPU over "
                  f"{_get(r, 'config', 'targets_cpu_seconds')} s of steady probing (the dual-stack pair: "
                  f"{_get(r, 'config', 'family_cpu_seconds')} s, both at once).", "", detail, ""]
    detail = _dns_detail(r)
    if detail:
        parts += ["### DNS check", "", "Three nameservers (a UDP responder on three gateway addresses, in the "
                  "namespace's resolv.conf); reachd with and without the check, measured over the same window.", "",
                  detail, ""]
    detail = _uplinks_detail(r)
    if detail:
        up = _get(r, "phases", "uplinks", default={})
        parts += ["### Uplinks", "", f"Two uplinks, `wan0` (default route metric 100) and `wan1` (metric 200, the "
                  f"backup), to one peer namespace; {up['targets']} HTTP targets and the connectivity check every "
                  f"{up['interval_s']:g} s; reachd with and without `--per-uplink`, measured over the same window.", "",
                  detail, ""]
    detail = _fleet_detail(r)
    if detail:
        fl = _get(r, "phases", "fleet", default={})
        parts += ["### Fleet: reachd and blackbox_exporter", "",
                  f"The same targets every {fl['interval_s']:g} s (probe timeout {fl['timeout_s']:g} s), one tool at a "
                  f"time in the same namespaces, over {fl['window_s']:g} s windows; who goes first alternates per size. "
                  "CPU and wake-ups are every thread of the tool's process (never what scrapes blackbox_exporter: "
                  + ("a real Prometheus" if fl.get("scraper") == "prometheus" else "`bench/scrape_loop.py`")
                  + ", shown beside it); probes are what the targets saw (nginx's accepts and requests, "
                  "the far namespace's ICMP echo requests). CPU columns are % of one core; the last is the machine's "
                  "busy time in the window less the tool, nginx and the scraper: other work on the shared machine.", "",
                  detail, ""]
    detail = _fanout_detail(r)
    if detail:
        parts += ["### Fan-out runs", "",
                  "Latencies from the moment the trigger was sent to the client's user-space receive (\"p99 "
                  "kernel-rx\": to the kernel's receive timestamp of the segment; \"p99 from return\": from the "
                  "trigger call's return instead of its start). CPU over the 20-change phase, with the percent of one "
                  "core.", "", detail, ""]
    memory = _get(r, "phases", "memory", "rows", default=[])
    if memory:
        parts += ["### Memory per stream", "",
                  "RSS growth per idle `/events` stream for each connection pool size (`--connection-memory`), "
                  "and the longest request head that pool size still accepts (bisected with a padded "
                  "`GET /status`: one long header, and many 40-byte headers, whose records libmicrohttpd "
                  "also keeps in the pool). libmicrohttpd 0.9.75 allocates a connection's pool at accept and keeps all of "
                  "it until the connection closes, and the request head must fit in it; so each KiB of head "
                  "limit is a KiB of every idle stream. What is left besides the pool is libmicrohttpd's "
                  "connection and response records and reachd's `EventStream`. Reaching 8 KiB per stream at "
                  "today's head limit would need the stream's socket to leave libmicrohttpd after the response "
                  "head (see ARCHITECTURE.md, *Streams and libmicrohttpd*).", "",
                  "| pool (`--connection-memory`) | largest request head accepted: one long header | "
                  "… many 40-byte headers | KiB per idle stream | streams |",
                  "|---|---|---|---|---|"]
        for row in memory:
            parts.append(f"| {row['pool']:,} B | {row['largest_head_bytes']:,} B | "
                         f"{row.get('largest_head_many_headers_bytes', 0):,} B | "
                         f"{num(row['kib_per_stream'], '{:.2f}')} | {row['streams']:,} |")
        parts.append("")
    detail = _throughput_detail(r)
    if detail:
        parts += ["### `/status` runs", "", detail, ""]
    detail = _idle_detail(r)
    if detail:
        parts += ["### Idle", "", detail, ""]
    st = _get(r, "phases", "startup", default={})
    if "ms" in st:
        parts += ["### Start-up", "",
                  f"{st['runs']} runs: p50 {ms(st['ms'].get('p50'))}, p90 {ms(st['ms'].get('p90'))}, max "
                  f"{ms(st['ms'].get('max'))}; `ip netns exec` alone takes p50 "
                  f"{ms(_get(st, 'ip_netns_exec_overhead_ms', 'p50'))} of that. Idle footprint: "
                  f"{_get(st, 'footprint', 'rss_detail_kib')}.", ""]
    parts += [METHOD]
    return "\n".join(parts)


if __name__ == "__main__":
    # Re-render a report from a results file:
    #   python3 bench/report.py bench/results/latest.json > docs/reports/benchmarks.md
    import json
    import sys

    with open(sys.argv[1]) as f:
        results = json.load(f)
    results["verdicts"] = verdicts(results)
    sys.stdout.write(markdown(results))
