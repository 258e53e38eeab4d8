import Reachable
import Synchronization

/// The series of each target, labelled by its name: what the document says (up, each family up,
/// changes of state) and what only the probes see (durations, failures by reason, the path's
/// quality). Made with the first document or probe that names the target — every failure reason
/// at 0 — and removed when a document no longer lists it (a reload of `--targets-file`).
///
/// Each target's numbers are a `TargetSeries` of plain values, written into the text format here
/// when scraped, one family after another — not an object per series (as swift-prometheus keeps
/// them): with a fleet, those were most of reachd's memory (docs/scale.md).
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
                })
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
    func write(into out: inout ExpositionWriter) {
        // Copy-on-write: the probes go on recording while the text is written.
        let targets = byName.withLock { $0.all }

        out.family("target_up", .gauge, Help.targetUp)
        for (name, series) in targets {
            out.flag("target_up", ("target", name), holds: series.listedState == .reachable)
        }
        out.family("target_probe_duration_seconds", .histogram, Help.probeDuration)
        for (name, series) in targets {
            out.histogram(
                "target_probe_duration_seconds", ("target", name), counts: series.duration, bounds: Self.probeBounds)
        }
        out.family("target_transitions_total", .counter, Help.targetTransitions)
        for (name, series) in targets {
            out.counter("target_transitions_total", ("target", name), count: series.transitions)
        }
        out.family("target_probe_failures_total", .counter, Help.probeFailures)
        for (name, series) in targets {
            for (reason, count) in series.failures.byReason {
                out.counter("target_probe_failures_total", ("target", name), ("reason", reason.rawValue), count: count)
            }
        }
        writeFamilies(of: targets, into: &out)
    }

    /// The families labelled by target and address family.
    private func writeFamilies(of targets: Zip2Sequence<[String], [TargetSeries]>, into out: inout ExpositionWriter) {
        let families = AddressFamily.allCases
        out.family("target_family_up", .gauge, Help.targetFamilyUp)
        for (name, series) in targets {
            for family in families where series[family].isListed {
                out.flag("target_family_up", ("target", name), ("family", family.rawValue), holds: series[family].isUp)
            }
        }
        out.family("target_impaired", .gauge, Help.impaired)
        for (name, series) in targets {
            for family in families where series[family].isListed {
                for impairment in Impairment.allCases {
                    out.flag(
                        "target_impaired", ("target", name), ("family", family.rawValue),
                        ("impairment", impairment.rawValue), holds: series[family].impairments.contains(impairment))
                }
            }
        }
        out.family("target_rtt_seconds", .histogram, Help.roundTrip)
        for (name, series) in targets {
            for family in families {
                guard let counts = series[family].roundTrips else { continue }
                out.histogram(
                    "target_rtt_seconds", ("target", name), ("family", family.rawValue), counts: counts,
                    bounds: Self.roundTripBounds)
            }
        }
        out.family("target_packets_sent_total", .counter, Help.sent)
        for (name, series) in targets {
            for family in families {
                guard let echoes = series[family].echoes else { continue }
                out.counter(
                    "target_packets_sent_total", ("target", name), ("family", family.rawValue), count: echoes.sent)
            }
        }
        out.family("target_packets_received_total", .counter, Help.received)
        for (name, series) in targets {
            for family in families {
                guard let echoes = series[family].echoes else { continue }
                out.counter(
                    "target_packets_received_total", ("target", name), ("family", family.rawValue),
                    count: echoes.received)
            }
        }
        out.family("target_path_mtu_bytes", .gauge, Help.pathMTU)
        for (name, series) in targets {
            for family in families {
                guard let mtu = series[family].pathMTU else { continue }
                out.gauge("target_path_mtu_bytes", ("target", name), ("family", family.rawValue), value: Double(mtu))
            }
        }
    }

    /// The `le` of each bucket.
    private static let probeBounds = TargetSeries.probeBuckets.map(\.inSeconds)
    private static let roundTripBounds = TargetSeries.roundTripBuckets.map(\.inSeconds)
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
