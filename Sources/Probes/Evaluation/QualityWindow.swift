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
public struct QualityWindow: Sendable, Equatable {
    private var probes: [ProbeQuality] = []
    /// Whether each of the last three full-size echoes found a blackhole.
    private var blackholes: [Bool] = []
    private var showing: [Impairment: Int] = [:]
    private var notShowing: [Impairment: Int] = [:]
    /// The impairments that hold, in the contract's order.
    public private(set) var impairments: [Impairment] = []

    public init() {}

    /// One probe's measurements (a probe that sent nothing — no route, no address — is none).
    public mutating func record(_ quality: ProbeQuality, limits: QualityLimits) {
        guard quality.echoesSent > 0 || !quality.roundTrips.isEmpty || quality.pathMTU != nil else { return }
        probes.append(quality)
        if probes.count > limits.window { probes.removeFirst(probes.count - limits.window) }
        if let mtu = quality.pathMTU {
            blackholes.append(mtu == .blackhole)
            if blackholes.count > 3 { blackholes.removeFirst() }
        }
        let full = probes.count >= limits.window
        let shown: [Impairment: Bool] = [
            .loss: full && (loss.map { $0 > limits.maxLoss } ?? false),
            .latency: full && limits.maxRoundTrip.map { limit in medianRoundTrip.map { $0 > limit } ?? false } ?? false,
            .mtu: blackholes.count { $0 } >= 2,
        ]
        var holding = Set(impairments)
        for (impairment, shows) in shown {
            if shows {
                showing[impairment, default: 0] += 1
                notShowing[impairment] = 0
                if showing[impairment, default: 0] >= limits.toAppear { holding.insert(impairment) }
            } else {
                notShowing[impairment, default: 0] += 1
                showing[impairment] = 0
                if notShowing[impairment, default: 0] >= limits.toClear { holding.remove(impairment) }
            }
        }
        impairments = Impairment.allCases.filter(holding.contains)
    }

    /// Unanswered small echoes ÷ small echoes sent, over the window; `nil` without echoes.
    public var loss: Double? {
        let sent = probes.reduce(0) { $0 + $1.echoesSent }
        guard sent > 0 else { return nil }
        return 1 - Double(probes.reduce(0) { $0 + $1.echoesAnswered }) / Double(sent)
    }

    /// The median of every round trip in the window; `nil` without one.
    public var medianRoundTrip: Duration? {
        let all = probes.flatMap(\.roundTrips).sorted()
        guard !all.isEmpty else { return nil }
        return all.count % 2 == 1 ? all[all.count / 2] : (all[all.count / 2 - 1] + all[all.count / 2]) / 2
    }
}
