import Prometheus
import Reachable
import Synchronization

/// The series of each target, labelled by its name: what the document says (up, each family up,
/// changes of state) and what only the probes see (durations, failures by reason). Both kinds
/// are made together, with the first document or probe that names the target — every failure
/// reason at 0 — and removed together when a reload of `--targets-file` drops the target.
///
/// Each target's series live in a registry of the target's own, rendered after the main one
/// (`ExpositionOrder` joins the families): swift-prometheus copies a family's whole series
/// dictionary to add one series, so one shared registry made starting 10,000 targets quadratic
/// (perf: 93 % of reachd's CPU in `_makeCounter`, one probe in 30 s). A target's registry holds
/// a few dozen series; dropping it removes them all.
final class TargetMetrics: Sendable {
    /// Bucket bounds of the probe durations: 5 ms to 10 s (the probe timeout is 3 s by default).
    static let probeBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Bucket bounds of the round trips: 0.5 ms to 5 s.
    static let roundTripBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5),
    ]

    /// What the probes of one family measured of the path (made with its first measurement).
    private struct QualitySeries {
        var roundTrips: DurationHistogram
        /// `icmp://` only, made with its first echo.
        var echoes: (sent: Counter, received: Counter)?
        var pathMTU: Gauge?
    }

    private struct Series {
        /// This target's alone: every series below is made in it.
        let registry: PrometheusCollectorRegistry
        var up: Gauge
        var duration: DurationHistogram
        var transitions: Counter
        /// Every reason, made with the target: a failure that never happened reads 0.
        var failures: [ProbeFailureReason: Counter]
        /// Only the families in the target's addresses.
        var families: [AddressFamily: Gauge] = [:]
        /// The target as the last document listed it (`nil` before the first): a document changes
        /// one target or a few, and the others' series need nothing; its state counts changes.
        var listed: TargetStatus?
        /// `reachd_target_impaired`, one per impairment, while the family is in the document.
        var impaired: [AddressFamily: [Impairment: Gauge]] = [:]
        var quality: [AddressFamily: QualitySeries] = [:]
    }

    private let byName = Mutex(KeyedSeries<Series>())

    init() {}

    /// Writes every target's series (families repeat per target: `ExpositionOrder` joins them).
    func emit(into buffer: inout [UInt8]) {
        for registry in byName.withLock({ $0.all.map(\.registry) }) { registry.emit(into: &buffer) }
    }

    /// Sets the series of `targets` (the document's), and removes those of targets not in it.
    func update(_ targets: [TargetStatus]) {
        byName.withLock { known in
            known.update(
                targets, key: \.name, make: { makeSeries($0.name) },
                update: { series, target in
                    guard series.listed != target else { return }
                    if let previous = series.listed?.state, previous != target.state {
                        series.transitions.increment()
                    }
                    series.listed = target
                    series.up.set(to: target.state == .reachable ? 1 : 0)
                    for family in AddressFamily.allCases {
                        if let status = target[family] {
                            let gauge =
                                series.families[family]
                                ?? series.registry.makeGauge(
                                    descriptor: .reachd("target_family_up", help: Help.targetFamilyUp),
                                    labels: [("target", target.name), ("family", family.rawValue)])
                            gauge.set(to: status.state == .reachable ? 1 : 0)
                            series.families[family] = gauge
                            let impaired =
                                series.impaired[family] ?? makeImpaired(target.name, family, in: series.registry)
                            for (impairment, gauge) in impaired {
                                gauge.set(to: status.impairments.contains(impairment) ? 1 : 0)
                            }
                            series.impaired[family] = impaired
                        } else {
                            if let gauge = series.families.removeValue(forKey: family) {
                                series.registry.unregisterGauge(gauge)
                            }
                            for gauge in series.impaired.removeValue(forKey: family)?.values ?? [:].values {
                                series.registry.unregisterGauge(gauge)
                            }
                        }
                    }
                },
                // A target removed by a reload of --targets-file takes its series with it: its
                // registry goes with its entry.
                remove: { _ in })
        }
    }

    /// One finished probe of one family of `target`: its duration and why it failed (`nil`: it
    /// succeeded). Recorded outside the lock.
    func recordProbe(target: String, duration: Duration, failure: ProbeFailureReason?) {
        let series = byName.withLock { $0.series(target, make: makeSeries) }
        series.duration.record(duration)
        if let failure { series.failures[failure]?.increment() }
    }

    /// What one probe of one family measured of the path: its round trips, and for `icmp://` the
    /// small echoes sent and answered and the path MTU (`nil`: none learned).
    func recordQuality(
        target: String, family: AddressFamily, roundTrips: [Duration], echoesSent: Int, echoesAnswered: Int,
        pathMTU: Int?
    ) {
        let quality = byName.withLock { known -> QualitySeries in
            var series = known.series(target, make: makeSeries)
            // Every probe after the first of a family: the series are there, nothing to write back.
            if let quality = series.quality[family], (quality.echoes != nil) == (echoesSent > 0),
                (quality.pathMTU != nil) || pathMTU == nil
            {
                return quality
            }
            let (labels, registry) = ([("target", target), ("family", family.rawValue)], series.registry)
            var quality =
                series.quality[family]
                ?? QualitySeries(
                    roundTrips: registry.makeDurationHistogram(
                        descriptor: .reachd("target_rtt_seconds", help: Help.roundTrip), labels: labels,
                        buckets: Self.roundTripBuckets))
            if echoesSent > 0, quality.echoes == nil {
                quality.echoes = (
                    registry.makeCounter(
                        descriptor: .reachd("target_packets_sent_total", help: Help.sent), labels: labels),
                    registry.makeCounter(
                        descriptor: .reachd("target_packets_received_total", help: Help.received), labels: labels)
                )
            }
            if pathMTU != nil, quality.pathMTU == nil {
                quality.pathMTU = registry.makeGauge(
                    descriptor: .reachd("target_path_mtu_bytes", help: Help.pathMTU), labels: labels)
            }
            series.quality[family] = quality
            known.replace(target, with: series)
            return quality
        }
        for roundTrip in roundTrips { quality.roundTrips.record(roundTrip) }
        if let echoes = quality.echoes {
            echoes.sent.increment(by: Int64(echoesSent))
            echoes.received.increment(by: Int64(echoesAnswered))
        }
        if let pathMTU { quality.pathMTU?.set(to: Double(pathMTU)) }
    }

    private func makeImpaired(
        _ target: String, _ family: AddressFamily, in registry: PrometheusCollectorRegistry
    ) -> [Impairment: Gauge] {
        Dictionary(
            uniqueKeysWithValues: Impairment.allCases.map { impairment in
                let labels = [("target", target), ("family", family.rawValue), ("impairment", impairment.rawValue)]
                return (
                    impairment,
                    registry.makeGauge(descriptor: .reachd("target_impaired", help: Help.impaired), labels: labels)
                )
            })
    }

    private func makeSeries(_ name: String) -> Series {
        let registry = PrometheusCollectorRegistry()
        return Series(
            registry: registry,
            up: registry.makeGauge(descriptor: .reachd("target_up", help: Help.targetUp), labels: [("target", name)]),
            duration: registry.makeDurationHistogram(
                descriptor: .reachd("target_probe_duration_seconds", help: Help.probeDuration),
                labels: [("target", name)], buckets: Self.probeBuckets),
            transitions: registry.makeCounter(
                descriptor: .reachd("target_transitions_total", help: Help.targetTransitions),
                labels: [("target", name)]),
            failures: Dictionary(
                uniqueKeysWithValues: ProbeFailureReason.allCases.map { reason in
                    let counter = registry.makeCounter(
                        descriptor: .reachd("target_probe_failures_total", help: Help.probeFailures),
                        labels: [("target", name), ("reason", reason.rawValue)])
                    return (reason, counter)
                }))
    }
}

/// The HELP text of each family (one place, so every series of a family shares it).
private enum Help {
    static let targetUp = "1 when the target is reachable, 0 when unreachable or not yet evaluated."
    static let probeDuration = "How long a probe of the target took, name resolution included."
    static let targetFamilyUp =
        "1 when this address family of the target is reachable; present while the target's addresses hold one of it."
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
