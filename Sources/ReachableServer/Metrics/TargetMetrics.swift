import Prometheus
import Reachable
import Synchronization

/// The series of each target, labelled by its name: what the document says (up, each family up,
/// changes of state) and what only the probes see (durations, failures by reason, the path's
/// quality). Made with the first document or probe that names the target — every failure reason
/// at 0 — and removed when a document no longer lists it (a reload of `--targets-file`).
///
/// Each target's numbers are a `TargetSeries` of plain values, written into the text format here
/// when scraped — one family after another, its `# HELP` and `# TYPE` once — rather than
/// swift-prometheus objects: with a fleet, those were most of reachd's memory (docs/scale.md).
/// The lines are the ones swift-prometheus writes (`le` and sums by its `bucketRepresentation`);
/// `ExpositionOrder` sorts them with the rest.
final class TargetMetrics: Sendable {
    private let byName = Mutex(KeyedSeries<TargetSeries>())

    init() {}

    /// Sets the series of `targets` (the document's), and removes those of targets not in it.
    func update(_ targets: [TargetStatus]) {
        byName.withLock { known in
            known.update(
                targets, key: \.name, make: { _ in TargetSeries() },
                update: { series, target in
                    if let previous = series.listedState, previous != target.state { series.transitions += 1 }
                    series.listedState = target.state
                    for family in AddressFamily.allCases {
                        let status = target[family]
                        series.modify(family) { listed in
                            listed.isListed = target.hasSeries(of: family)
                            listed.isUp = status?.state == .reachable
                            listed.impairments = status?.impairments ?? []
                        }
                    }
                },
                remove: { _ in })
        }
    }

    /// One finished probe of one family of `target`: its duration and why it failed (`nil`: it
    /// succeeded).
    func recordProbe(target: String, duration: Duration, failure: ProbeFailureReason?) {
        byName.withLock { known in
            known.modify(target, make: { _ in TargetSeries() }) { series in
                series.duration.record(duration, bounds: TargetSeries.probeBuckets)
                if let failure, let index = TargetSeries.reasons.firstIndex(of: failure) {
                    series.failures.count(at: index)
                }
            }
        }
    }

    /// What one probe of one family measured of the path: its round trips, and for `icmp://` the
    /// small echoes sent and answered and the path MTU (`nil`: none learned).
    func recordQuality(
        target: String, family: AddressFamily, roundTrips: [Duration], echoesSent: Int, echoesAnswered: Int,
        pathMTU: Int?
    ) {
        byName.withLock { known in
            known.modify(target, make: { _ in TargetSeries() }) { series in
                series.modify(family) { quality in
                    if quality.roundTrips == nil { quality.roundTrips = RoundTripCounts() }
                    for roundTrip in roundTrips {
                        quality.roundTrips!.record(roundTrip, bounds: TargetSeries.roundTripBuckets)
                    }
                    if echoesSent > 0 || quality.echoes != nil {
                        let echoes = quality.echoes ?? (0, 0)
                        quality.echoes = (
                            echoes.sent &+ UInt32(truncatingIfNeeded: echoesSent),
                            echoes.received &+ UInt32(truncatingIfNeeded: echoesAnswered)
                        )
                    }
                    if let pathMTU { quality.pathMTU = UInt16(clamping: pathMTU) }
                }
            }
        }
    }

    /// Writes every target's series, family by family.
    func emit(into buffer: inout [UInt8]) {
        // Copy-on-write: the probes go on recording while the text is written.
        let targets = byName.withLock { $0.all }
        var out = ExpositionLines(bytes: buffer)
        defer { buffer = out.bytes }

        out.family("target_up", "gauge", Help.targetUp)
        for (name, series) in targets {
            out.sample("target_up", target: name, value: series.listedState == .reachable ? "1.0" : "0.0")
        }
        out.family("target_probe_duration_seconds", "histogram", Help.probeDuration)
        for (name, series) in targets {
            out.histogram("target_probe_duration_seconds", target: name, series.duration, Self.probeBounds)
        }
        out.family("target_transitions_total", "counter", Help.targetTransitions)
        for (name, series) in targets {
            out.sample("target_transitions_total", target: name, value: String(series.transitions))
        }
        out.family("target_probe_failures_total", "counter", Help.probeFailures)
        for (name, series) in targets {
            for (reason, count) in series.failures.byReason {
                out.sample(
                    "target_probe_failures_total", target: name, extra: ("reason", reason.rawValue),
                    value: String(count))
            }
        }
        emitFamilies(of: targets, into: &out)
    }

    /// The families labelled by target and address family.
    private func emitFamilies(of targets: Zip2Sequence<[String], [TargetSeries]>, into out: inout ExpositionLines) {
        let families = AddressFamily.allCases
        out.family("target_family_up", "gauge", Help.targetFamilyUp)
        for (name, series) in targets {
            for family in families where series[family].isListed {
                out.sample("target_family_up", target: name, family: family, value: series[family].isUp ? "1.0" : "0.0")
            }
        }
        out.family("target_impaired", "gauge", Help.impaired)
        for (name, series) in targets {
            for family in families where series[family].isListed {
                for impairment in Impairment.allCases {
                    let holds = series[family].impairments.contains(impairment)
                    out.sample(
                        "target_impaired", target: name, family: family, extra: ("impairment", impairment.rawValue),
                        value: holds ? "1.0" : "0.0")
                }
            }
        }
        out.family("target_rtt_seconds", "histogram", Help.roundTrip)
        for (name, series) in targets {
            for family in families {
                guard let counts = series[family].roundTrips else { continue }
                out.histogram("target_rtt_seconds", target: name, family: family, counts, Self.roundTripBounds)
            }
        }
        out.family("target_packets_sent_total", "counter", Help.sent)
        for (name, series) in targets {
            for family in families {
                guard let echoes = series[family].echoes else { continue }
                out.sample("target_packets_sent_total", target: name, family: family, value: String(echoes.sent))
            }
        }
        out.family("target_packets_received_total", "counter", Help.received)
        for (name, series) in targets {
            for family in families {
                guard let echoes = series[family].echoes else { continue }
                out.sample(
                    "target_packets_received_total", target: name, family: family, value: String(echoes.received))
            }
        }
        out.family("target_path_mtu_bytes", "gauge", Help.pathMTU)
        for (name, series) in targets {
            for family in families {
                guard let mtu = series[family].pathMTU else { continue }
                out.sample("target_path_mtu_bytes", target: name, family: family, value: Double(mtu).description)
            }
        }
    }

    /// The `le` of each bucket, as swift-prometheus writes a `Duration` (`0.005`, `1.0`).
    private static let probeBounds = TargetSeries.probeBuckets.map(\.bucketRepresentation)
    private static let roundTripBounds = TargetSeries.roundTripBuckets.map(\.bucketRepresentation)
}

/// Lines of the text format for `TargetMetrics`: a family's `# HELP` and `# TYPE` are written
/// with its first sample, so a family without any is not shown at all.
private struct ExpositionLines {
    var bytes: [UInt8]
    private var pendingHead: (name: String, type: String, help: String)?

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The family the next samples belong to.
    mutating func family(_ name: String, _ type: String, _ help: String) {
        pendingHead = (name, type, help)
    }

    /// `reachd_NAME{target="T",family="F",KEY="V"} VALUE` (family and the extra label optional).
    mutating func sample(
        _ name: String, suffix: String = "", target: String, family: AddressFamily? = nil,
        extra: (String, String)? = nil, value: String
    ) {
        writeHead()
        append("reachd_")
        append(name)
        append(suffix)
        append("{target=\"")
        append(target)
        append("\"")
        if let family {
            append(",family=\"")
            append(family.rawValue)
            append("\"")
        }
        if let (key, labelValue) = extra {
            append(",")
            append(key)
            append("=\"")
            append(labelValue)
            append("\"")
        }
        append("} ")
        append(value)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A histogram's cumulative buckets, `+Inf`, `_sum` and `_count`.
    mutating func histogram<let bucketCount: Int>(
        _ name: String, target: String, family: AddressFamily? = nil, _ counts: DurationCounts<bucketCount>,
        _ bounds: [String]
    ) {
        for (bound, count) in zip(bounds, counts.cumulative) {
            sample(name, suffix: "_bucket", target: target, family: family, extra: ("le", bound), value: String(count))
        }
        sample(
            name, suffix: "_bucket", target: target, family: family, extra: ("le", "+Inf"), value: String(counts.count))
        sample(name, suffix: "_sum", target: target, family: family, value: counts.sum.bucketRepresentation)
        sample(name, suffix: "_count", target: target, family: family, value: String(counts.count))
    }

    private mutating func writeHead() {
        guard let head = pendingHead else { return }
        pendingHead = nil
        append("# HELP reachd_\(head.name) \(head.help)\n# TYPE reachd_\(head.name) \(head.type)\n")
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let targetUp = "1 when the target is reachable, 0 when unreachable or not yet evaluated."
    static let probeDuration = "How long a probe of the target took, name resolution included."
    static let targetFamilyUp =
        "1 when this address family of the target is reachable; present while its last successful resolution had one of it."
    static let targetTransitions = "Changes of the target's state (unknown, reachable, unreachable) between documents."
    static let roundTrip =
        "Round trips of the target's family: each answered ICMP echo (icmp), the TCP handshake (tcp, http)."
    static let sent = "Small ICMP echo requests sent to the target's family (icmp targets)."
    static let received = "Small ICMP echo requests answered by the target's family (icmp targets)."
    static let pathMTU =
        "The path MTU toward the target's family: the IP packet size of the largest echo answered, or the MTU an ICMP error named (icmp targets)."
    static let impaired = "1 while the impairment (loss, latency, mtu) holds for the target's family."
    static let probeFailures =
        "Failed probes of the target by reason, each family's counted, also while a threshold keeps its state."
}
