public import Reachable

/// What judges the quality of a path (`--quality-window`, `--max-loss`, `--max-rtt`, and the flap
/// counts of `--target-failures` / `--target-successes`).
public struct QualityLimits: Sendable, Equatable {
    /// Probes in the window (at least 1).
    public var window: Int
    /// Window loss above this ratio is `loss`.
    public var maxLoss: Double
    /// Window median round trip above this is `latency`; `nil`: never judged.
    public var maxRoundTrip: Duration?
    /// Consecutive probes that show an impairment before it holds, and that do not before it clears.
    public var toAppear: Int
    public var toClear: Int

    public init(
        window: Int = 10, maxLoss: Double = 0.2, maxRoundTrip: Duration? = nil, toAppear: Int = 3, toClear: Int = 1
    ) {
        self.window = max(1, window)
        self.maxLoss = maxLoss
        self.maxRoundTrip = maxRoundTrip
        self.toAppear = max(1, toAppear)
        self.toClear = max(1, toClear)
    }
}

/// The last `window` probes of one target family and the impairments they show, by the flap rules:
/// one appears after `toAppear` consecutive probes that show it and clears after `toClear` that do
/// not, so a single slow probe is no event. `loss` and `latency` need a full window; `mtu` is a
/// blackhole in at least 2 of the last 3 probes that tested the path MTU. Pure.
///
/// Every family of every target has one, so it is kept small (docs/scale.md): the window's
/// counts and round trips in two flat arrays, not a `ProbeQuality` with an array of its own per
/// probe; the streaks and the last three blackholes in fixed fields, not dictionaries. A probe's
/// counts are 16-bit and a round trip is whole microseconds in 32 bits.
///
/// And the arrays are kept only where something is judged from them: the counts where there is
/// loss to judge (a probe that sent echoes: `icmp://`) or round trips to keep in step, the round
/// trips only with `--max-rtt`. A `tcp://` or `http://` family without `--max-rtt` (the default,
/// and most of a fleet) judges nothing: it keeps neither array nor the rest of a window (`kept`).
public struct QualityWindow: Sendable, Equatable {
    /// The window, made with the first probe it could judge from: `nil` for a `tcp://` or
    /// `http://` family without `--max-rtt`, which never shows an impairment. Held out of line, so
    /// such a family holds 8 bytes here, not 48 — and every target holds room for two families.
    /// Copied on write.
    private var kept: Kept?

    public init() {}

    /// The impairments that hold, in the contract's order.
    public var impairments: [Impairment] { kept?.window.impairments ?? [] }

    /// Unanswered small echoes ÷ small echoes sent, over the window; `nil` without echoes.
    public var loss: Double? { kept?.window.loss }

    /// The median of every round trip in the window, to the microsecond; `nil` without one.
    public var medianRoundTrip: Duration? { kept?.window.medianRoundTrip }

    /// How many probes' counts and round trips are kept (tests: what a family holds).
    var keptCounts: Int { kept?.window.keptCounts ?? 0 }
    var keptRoundTrips: Int { kept?.window.keptRoundTrips ?? 0 }
    /// Whether a window is held at all (tests).
    var holdsWindow: Bool { kept != nil }

    /// One probe's measurements (a probe that sent nothing — no route, no address — is none).
    public mutating func record(_ quality: ProbeQuality, limits: QualityLimits) {
        if kept == nil {
            // A probe with echoes can show loss, one with a path MTU a blackhole, a round trip
            // latency under `--max-rtt`; a family whose probes can show none never changes.
            let judged =
                quality.echoesSent > 0 || quality.pathMTU != nil
                || (limits.maxRoundTrip != nil && !quality.roundTrips.isEmpty)
            guard judged else { return }
            kept = Kept(Judged())
        } else if !isKnownUniquelyReferenced(&kept) {
            kept = Kept(kept!.window)
        }
        kept!.window.record(quality, limits: limits)
    }

    public static func == (lhs: QualityWindow, rhs: QualityWindow) -> Bool {
        lhs.kept === rhs.kept || lhs.kept?.window == rhs.kept?.window
    }

    /// The box: mutated only through `record`, when no other window shares it.
    private final class Kept: @unchecked Sendable {
        var window: Judged
        init(_ window: Judged) { self.window = window }
    }
}

/// The window itself, with the rules: what `QualityWindow` keeps once it judges anything.
private struct Judged: Sendable, Equatable {
    /// Per probe in the window, oldest first: small echoes sent and answered, round trips recorded.
    /// Empty while nothing needs it (see above).
    private var counts: [Counts] = []
    /// The window's round trips in microseconds (saturating at 71 minutes), oldest probe's first
    /// (`counts[i].roundTrips` of them each). Empty without `--max-rtt`.
    private var roundTrips: [UInt32] = []
    /// Probes in the window, up to its length: whether it is full, with or without `counts`.
    private var probes: UInt16 = 0
    /// Whether each of the last full-size echoes (up to three, newest in bit 0) found a blackhole.
    private var blackholes: UInt8 = 0
    /// Consecutive probes that showed, and did not show, each impairment.
    private var showing = Streaks()
    private var notShowing = Streaks()
    /// The impairments that hold, as bits in `Impairment.allCases` order.
    private var holding: UInt8 = 0

    private struct Counts: Sendable, Equatable {
        var sent: UInt16
        var answered: UInt16
        var roundTrips: UInt16
    }

    /// A count per impairment, saturating.
    private struct Streaks: Sendable, Equatable {
        private var loss: UInt32 = 0
        private var latency: UInt32 = 0
        private var mtu: UInt32 = 0

        subscript(_ impairment: Impairment) -> UInt32 {
            get {
                switch impairment {
                case .loss: loss
                case .latency: latency
                case .mtu: mtu
                }
            }
            set {
                switch impairment {
                case .loss: loss = newValue
                case .latency: latency = newValue
                case .mtu: mtu = newValue
                }
            }
        }

        mutating func extend(_ impairment: Impairment) {
            if self[impairment] < .max { self[impairment] += 1 }
        }
    }

    /// The impairments that hold, in the contract's order.
    var impairments: [Impairment] {
        holding == 0 ? [] : Impairment.allCases.filter { holding & Self.bit($0) != 0 }
    }

    /// One probe's measurements (a probe that sent nothing — no route, no address — is none).
    mutating func record(_ quality: ProbeQuality, limits: QualityLimits) {
        guard quality.echoesSent > 0 || !quality.roundTrips.isEmpty || quality.pathMTU != nil else { return }
        probes = UInt16(clamping: min(Int(probes) + 1, limits.window))
        if quality.echoesSent > 0 || limits.maxRoundTrip != nil || !counts.isEmpty { keep(quality, limits: limits) }
        if let mtu = quality.pathMTU {
            blackholes = (blackholes << 1 | (mtu.isBlackhole ? 1 : 0)) & 0b111
        }
        let full = Int(probes) >= min(limits.window, Int(UInt16.max))
        for impairment in Impairment.allCases {
            let shows: Bool
            switch impairment {
            case .loss: shows = full && (loss.map { $0 > limits.maxLoss } ?? false)
            case .latency:
                shows =
                    full && limits.maxRoundTrip.map { limit in medianRoundTrip.map { $0 > limit } ?? false } ?? false
            case .mtu: shows = blackholes.nonzeroBitCount >= 2
            }
            count(impairment, shows: shows, limits: limits)
        }
    }

    /// The probe's counts and, with `--max-rtt`, its round trips, the oldest probe's dropped once
    /// the window is longer than `limits.window`.
    private mutating func keep(_ quality: ProbeQuality, limits: QualityLimits) {
        // As many round trips as the count says, so the two arrays stay in step.
        let kept = limits.maxRoundTrip == nil ? [] : quality.roundTrips.prefix(Int(UInt16.max))
        if counts.capacity == 0 {
            // Room for a full window (and the probe that pushes the oldest out) at once: grown by
            // appending, the arrays were made anew at 1, 2, 4, 8 and 16 probes, each a block left
            // among the transfers under way (fragmentation with many targets: docs/scale.md).
            counts.reserveCapacity(limits.window + 1)
            roundTrips.reserveCapacity((limits.window + 1) * kept.count)
        }
        counts.append(
            Counts(
                sent: UInt16(clamping: quality.echoesSent), answered: UInt16(clamping: quality.echoesAnswered),
                roundTrips: UInt16(kept.count)))
        roundTrips.append(contentsOf: kept.map(Self.microseconds))
        if counts.count > limits.window {
            let dropped = counts.count - limits.window
            roundTrips.removeFirst(counts[..<dropped].reduce(0) { $0 + Int($1.roundTrips) })
            counts.removeFirst(dropped)
        }
    }

    var keptCounts: Int { counts.count }
    var keptRoundTrips: Int { roundTrips.count }

    /// One probe's verdict on one impairment, by the flap rules.
    private mutating func count(_ impairment: Impairment, shows: Bool, limits: QualityLimits) {
        if shows {
            showing.extend(impairment)
            notShowing[impairment] = 0
            if showing[impairment] >= limits.toAppear { holding |= Self.bit(impairment) }
        } else {
            notShowing.extend(impairment)
            showing[impairment] = 0
            if notShowing[impairment] >= limits.toClear { holding &= ~Self.bit(impairment) }
        }
    }

    private static func bit(_ impairment: Impairment) -> UInt8 {
        switch impairment {
        case .loss: 1
        case .latency: 2
        case .mtu: 4
        }
    }

    var loss: Double? {
        let sent = counts.reduce(0) { $0 + Int($1.sent) }
        guard sent > 0 else { return nil }
        return 1 - Double(counts.reduce(0) { $0 + Int($1.answered) }) / Double(sent)
    }

    var medianRoundTrip: Duration? {
        let all = roundTrips.sorted()
        guard !all.isEmpty else { return nil }
        let middle =
            all.count % 2 == 1
            ? Int64(all[all.count / 2]) : (Int64(all[all.count / 2 - 1]) + Int64(all[all.count / 2])) / 2
        return .microseconds(middle)
    }

    /// `duration` in whole microseconds, 0 to `UInt32.max`.
    private static func microseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(UInt32.max) / 1_000_000 else { return .max }
        return UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }
}
