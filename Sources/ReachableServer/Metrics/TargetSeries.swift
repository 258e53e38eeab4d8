import Reachable

/// The numbers behind one target's series — a few hundred bytes of plain values, written into
/// the text format by `TargetMetrics` when scraped. Not one object per series: a target's 25
/// counters, gauges and histograms as swift-prometheus objects (each with its name, labels and a
/// pre-rendered line) held several times what a target may hold in all (docs/scale.md).
struct TargetSeries {
    /// The document's state for the target at its last listing (`nil` before the first): its
    /// changes are `reachd_target_transitions_total`, and `reachable` is `reachd_target_up` 1.
    var listedState: TargetStatus.State?
    var transitions = 0
    var duration = ProbeDurationCounts()
    /// Every reason from the start, at 0.
    var failures = ReasonCounts()

    /// `ProbeFailureReason.allCases` made once (the property builds a new array at every use,
    /// and a probe's failure is counted by its index here).
    static let reasons = ProbeFailureReason.allCases
    var ipv4 = FamilySeries()
    var ipv6 = FamilySeries()

    subscript(family: AddressFamily) -> FamilySeries { family == .ipv4 ? ipv4 : ipv6 }

    /// Changes the family's series in place. (A copy taken out and put back, as a subscript's
    /// `get` and `set` do, held a second reference to its histogram while it was counted into:
    /// every probe copied the buckets into a new array.)
    mutating func modify<Result>(_ family: AddressFamily, _ body: (inout FamilySeries) -> Result) -> Result {
        family == .ipv4 ? body(&ipv4) : body(&ipv6)
    }

    /// Bucket bounds of the probe durations: 5 ms to 10 s (the probe timeout is 3 s by default);
    /// as many as `ProbeDurationCounts` holds.
    static let probeBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Bucket bounds of the round trips: 0.5 ms to 5 s, ascending (the third was once 2.5 s for
    /// 2.5 ms: `le="2.5"` twice and out of order in every scrape); as many as `RoundTripCounts`
    /// holds.
    static let roundTripBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5),
    ]
}

/// One address family of a target: what the document says of it while it lists the family, and
/// what its probes measured of the path (kept once measured, like every counter).
struct FamilySeries {
    /// Made with the family's first measurement. (First: the fields after it fill its tail.)
    var roundTrips: RoundTripCounts?
    /// The document's list (shared with it, not copied): each of `Impairment.allCases` is 1 or 0.
    var impairments: [Impairment] = []
    /// `icmp://` only, made with the first echo. 32 bits each, as a histogram's buckets are (an
    /// echo answered is a round trip counted): with 64-bit counts and an `Int` MTU the two families
    /// of a target took 48 bytes more (docs/scale.md). A counter that wraps is a reset to Prometheus.
    var echoes: (sent: UInt32, received: UInt32)?
    /// Made with the first path MTU learned (at most 65,535, an IPv6 jumbogram's aside).
    var pathMTU: UInt16?
    /// The family has its series (`TargetStatus.hasSeries`): `reachd_target_family_up` and
    /// `reachd_target_impaired` are shown only then.
    var isListed = false
    var isUp = false
}

/// The histogram of a target's probe durations (`TargetSeries.probeBuckets`).
typealias ProbeDurationCounts = DurationCounts<11>
/// The histogram of a target family's round trips (`TargetSeries.roundTripBuckets`).
typealias RoundTripCounts = DurationCounts<13>

/// A histogram's numbers: observations per bucket (not yet cumulative), their count and sum.
///
/// The buckets are inline, in the series itself: an array of their own was a block of 96 bytes
/// per histogram (its header, its capacity rounded up, malloc's header), two per target
/// (docs/scale.md).
struct DurationCounts<let bucketCount: Int> {
    /// 32 bits a bucket, not 64: a bucket fills after 4.3 billion observations — 13 years of an
    /// `icmp://` target's round trips at the fastest interval and echo count, 136 of one probe a
    /// second. `count` likewise (it wraps as the buckets do, a counter's reset to Prometheus).
    private(set) var perBucket = InlineArray<bucketCount, UInt32>(repeating: 0)
    private(set) var count: UInt32 = 0
    /// In nanoseconds: 584 years of probes or round trips added up (a `Duration` is twice the size).
    private var sumNanoseconds: UInt64 = 0

    var sum: Duration { .nanoseconds(Int64(clamping: sumNanoseconds)) }

    /// Counts `value` in the first of `bounds` (`bucketCount` of them, ascending) that is at least
    /// it (Prometheus' `le`), or in none but `+Inf`.
    mutating func record(_ value: Duration, bounds: [Duration]) {
        precondition(bounds.count == bucketCount, "a histogram's bounds are one per bucket")
        if let index = bounds.firstIndex(where: { value <= $0 }) { perBucket[index] &+= 1 }
        count &+= 1
        let (seconds, attoseconds) = value.components
        sumNanoseconds &+= UInt64(clamping: seconds) &* 1_000_000_000 &+ UInt64(clamping: attoseconds / 1_000_000_000)
    }

    /// The cumulative count of each bucket, as `_bucket{le=…}` shows it.
    var cumulative: [Int] {
        var running = 0
        var counts: [Int] = []
        counts.reserveCapacity(bucketCount)
        for index in perBucket.indices {
            running += Int(perBucket[index])
            counts.append(running)
        }
        return counts
    }
}

/// A target's failed probes per reason, indexed like `TargetSeries.reasons`. No array until the
/// first failure: most targets of a healthy fleet never fail, and an array of zeros is 96 bytes
/// and malloc's header a target (8 reasons; docs/scale.md).
struct ReasonCounts {
    private var counts: [Int]?

    /// One more failure for the reason at `index` of `TargetSeries.reasons`.
    mutating func count(at index: Int) {
        if counts == nil { counts = [Int](repeating: 0, count: TargetSeries.reasons.count) }
        counts![index] += 1
    }

    /// Each reason of `TargetSeries.reasons` with its count (0 for a reason that never failed).
    var byReason: [(reason: ProbeFailureReason, count: Int)] {
        TargetSeries.reasons.indices.map { (TargetSeries.reasons[$0], counts?[$0] ?? 0) }
    }
}
