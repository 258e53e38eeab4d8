import Foundation
import Reachable
import Testing

@testable import Probes

/// The quality rules of DESIGN "Quality: loss, latency, path MTU": the window, and impairments
/// that appear and clear by the flap rules.
@Suite struct QualityWindowTests {
    static func echoes(
        _ answered: Int, of sent: Int = 3, rtt: Duration = .milliseconds(10),
        mtu: ProbeQuality.PathMTU? = .carried(bytes: 1500)
    )
        -> ProbeQuality
    {
        ProbeQuality(
            roundTrips: Array(repeating: rtt, count: answered), echoesSent: sent, echoesAnswered: answered,
            pathMTU: answered > 0 ? mtu : nil)
    }

    @Test func lossNeedsAFullWindowThenTheFlapCountToAppearAndToClear() {
        let limits = QualityLimits(window: 3, maxLoss: 0.2, toAppear: 2, toClear: 2)
        var window = QualityWindow()
        window.record(Self.echoes(2), limits: limits)
        window.record(Self.echoes(2), limits: limits)
        #expect(window.impairments.isEmpty, "the window is not full yet")
        window.record(Self.echoes(2), limits: limits)
        #expect(window.impairments.isEmpty, "one probe shows it: not yet")
        #expect(window.loss.map { abs($0 - 1.0 / 3) < 1e-9 } == true)
        window.record(Self.echoes(2), limits: limits)
        #expect(window.impairments == [.loss])
        window.record(Self.echoes(3), limits: limits)
        #expect(window.impairments == [.loss], "2 of 9 lost: still above 0.2, it shows")
        window.record(Self.echoes(3), limits: limits)
        #expect(window.loss.map { abs($0 - 1.0 / 9) < 1e-9 } == true)
        #expect(window.impairments == [.loss], "one probe under the limit: not cleared yet")
        window.record(Self.echoes(3), limits: limits)
        #expect(window.loss == 0 && window.impairments.isEmpty)
    }

    @Test func aSingleSlowProbeIsNoEventAndTheMedianDecides() {
        let limits = QualityLimits(window: 3, maxRoundTrip: .milliseconds(100), toAppear: 2, toClear: 1)
        var window = QualityWindow()
        for _ in 0..<3 { window.record(Self.echoes(3), limits: limits) }
        window.record(Self.echoes(3, rtt: .milliseconds(500)), limits: limits)
        #expect(window.impairments.isEmpty && window.medianRoundTrip == .milliseconds(10))
        for _ in 0..<3 { window.record(Self.echoes(3, rtt: .milliseconds(300)), limits: limits) }
        #expect(window.impairments == [.latency] && window.medianRoundTrip == .milliseconds(300))
        for _ in 0..<2 { window.record(Self.echoes(3), limits: limits) }
        #expect(window.impairments.isEmpty, "the median is back under the limit: cleared after one probe")
        let off = QualityLimits(window: 1, maxRoundTrip: nil, toAppear: 1)
        var unjudged = QualityWindow()
        unjudged.record(Self.echoes(3, rtt: .seconds(2)), limits: off)
        #expect(unjudged.impairments.isEmpty, "without --max-rtt latency is never judged")
    }

    /// The window keeps round trips in whole microseconds (32 bits) and counts in 16 bits: a round
    /// trip is judged to the microsecond, one beyond 71 minutes saturates, and more round trips in
    /// one probe than a count holds keep both arrays in step as the window slides.
    @Test func roundTripsAreKeptToTheMicrosecondAndOutsizedProbesStayInStep() {
        let limits = QualityLimits(window: 2, maxRoundTrip: .microseconds(1_234), toAppear: 1, toClear: 1)
        var window = QualityWindow()
        window.record(Self.echoes(1, of: 1, rtt: .nanoseconds(1_234_999)), limits: limits)
        #expect(window.medianRoundTrip == .microseconds(1_234) && window.impairments.isEmpty)
        window.record(Self.echoes(1, of: 1, rtt: .microseconds(1_236)), limits: limits)
        #expect(window.medianRoundTrip == .microseconds(1_235) && window.impairments == [.latency])
        window.record(Self.echoes(1, of: 1, rtt: .seconds(3 * 3600)), limits: limits)
        #expect(window.medianRoundTrip == .microseconds((1_236 + Int64(UInt32.max)) / 2))
        let outsized = ProbeQuality(
            roundTrips: Array(repeating: .milliseconds(1), count: 70_000), echoesSent: 70_000, echoesAnswered: 70_000)
        window.record(outsized, limits: limits)
        window.record(Self.echoes(1, of: 1, rtt: .milliseconds(7)), limits: limits)
        window.record(Self.echoes(1, of: 1, rtt: .milliseconds(9)), limits: limits)
        #expect(window.medianRoundTrip == .milliseconds(8), "the outsized probe left the window whole")
    }

    /// A `tcp://` or `http://` family (a connect time, no echoes) keeps no arrays without
    /// `--max-rtt`, yet its window still fills; with `--max-rtt` it keeps one round trip a probe
    /// and judges latency from them; an `icmp://` family keeps its counts for loss either way.
    @Test func aWindowKeepsOnlyWhatItJudges() {
        let connect = ProbeQuality(roundTrips: [.milliseconds(300)])
        let unjudged = QualityLimits(window: 3, maxRoundTrip: nil, toAppear: 1, toClear: 1)
        var plain = QualityWindow()
        for _ in 0..<5 { plain.record(connect, limits: unjudged) }
        #expect(plain.keptCounts == 0 && plain.keptRoundTrips == 0 && plain.medianRoundTrip == nil)
        #expect(plain.impairments.isEmpty && !plain.holdsWindow, "it can judge nothing: it holds no window")

        let judged = QualityLimits(window: 3, maxRoundTrip: .milliseconds(100), toAppear: 1, toClear: 1)
        var timed = QualityWindow()
        timed.record(connect, limits: judged)
        timed.record(connect, limits: judged)
        #expect(timed.impairments.isEmpty, "the window is not full yet")
        timed.record(connect, limits: judged)
        #expect(timed.impairments == [.latency] && timed.keptCounts == 3 && timed.keptRoundTrips == 3)
        #expect(timed.holdsWindow)
        for _ in 0..<4 { timed.record(ProbeQuality(roundTrips: [.milliseconds(1)]), limits: judged) }
        #expect(timed.impairments.isEmpty && timed.keptCounts == 3 && timed.keptRoundTrips == 3)

        let lossOnly = QualityLimits(window: 2, maxLoss: 0.2, maxRoundTrip: nil, toAppear: 1, toClear: 1)
        var echoes = QualityWindow()
        echoes.record(Self.echoes(1), limits: lossOnly)
        echoes.record(Self.echoes(1), limits: lossOnly)
        #expect(echoes.impairments == [.loss] && echoes.keptCounts == 2 && echoes.keptRoundTrips == 0)
        #expect(echoes.loss.map { abs($0 - 2.0 / 3) < 1e-9 } == true)
    }

    /// A window is a value: a copy goes its own way (the window is held out of line, shared until
    /// one of them records).
    @Test func aCopiedWindowIsItsOwn() {
        let limits = QualityLimits(window: 2, maxLoss: 0.2, toAppear: 1, toClear: 1)
        var window = QualityWindow()
        window.record(Self.echoes(3), limits: limits)
        window.record(Self.echoes(3), limits: limits)
        var copy = window
        #expect(copy == window)
        copy.record(Self.echoes(0), limits: limits)
        copy.record(Self.echoes(0), limits: limits)
        #expect(copy.impairments == [.loss] && copy.loss == 1)
        #expect(window.impairments.isEmpty && window.loss == 0, "the original is as it was")
        #expect(copy != window)
        var unjudged = QualityWindow()
        unjudged.record(ProbeQuality(roundTrips: [.milliseconds(1)]), limits: limits)
        #expect(unjudged == QualityWindow() && unjudged != window)
    }

    @Test func anMTUBlackholeIsTwoOfTheLastThreeFullSizeEchoesAndDiscoveryIsNone() {
        let limits = QualityLimits(window: 10, toAppear: 1, toClear: 1)
        var window = QualityWindow()
        window.record(Self.echoes(3, mtu: .blackhole(smallest: 84)), limits: limits)
        #expect(window.impairments.isEmpty, "one lost full-size echo may be loss")
        window.record(Self.echoes(3, mtu: .blackhole(smallest: 84)), limits: limits)
        #expect(window.impairments == [.mtu])
        window.record(Self.echoes(3, mtu: .discovered(bytes: 1280)), limits: limits)
        #expect(window.impairments == [.mtu], "still 2 of the last 3")
        window.record(Self.echoes(3, mtu: .discovered(bytes: 1280)), limits: limits)
        #expect(window.impairments.isEmpty, "an ICMP error names the MTU: discovery works")
    }

    @Test func aProbeThatSentNothingIsNotInTheWindowAndImpairmentsKeepTheirOrder() {
        let limits = QualityLimits(window: 2, maxLoss: 0.2, maxRoundTrip: .milliseconds(1), toAppear: 1, toClear: 1)
        var window = QualityWindow()
        window.record(ProbeQuality(), limits: limits)
        #expect(window.loss == nil && window.medianRoundTrip == nil)
        for _ in 0..<2 {
            window.record(Self.echoes(1, rtt: .milliseconds(50), mtu: .blackhole(smallest: 84)), limits: limits)
        }
        #expect(window.impairments == [.loss, .latency, .mtu])
    }

    /// The book shows the impairments of a reachable family only, and they make the target degraded.
    @Test func theBookShowsImpairmentsOfAReachableFamilyAndTheyDegradeTheTarget() throws {
        let spec = try TargetSpec.parse("gw=icmp://198.18.1.1")
        var book = TargetBook(spec: spec, since: Date())
        let evaluator = ThresholdEvaluator(failureThreshold: 1, successThreshold: 1)
        let limits = QualityLimits(window: 1, maxLoss: 0.2, toAppear: 1, toClear: 1)
        let address = IPAddress("198.18.1.1")!
        func result(_ outcome: ProbeOutcome) -> ProbePipeline.Result {
            ProbePipeline.Result(
                addresses: [address],
                families: [
                    ProbePipeline.FamilyResult(family: .ipv4, address: address, interface: "eth0", outcome: outcome)
                ])
        }
        book.record(
            result(ProbeOutcome(failure: nil, quality: Self.echoes(1))), evaluator: evaluator, quality: limits,
            at: Date())
        #expect(book.status.ipv4?.impairments == [.loss] && book.status.state == .reachable && book.status.degraded)
        book.record(
            result(ProbeOutcome(failure: .timeout, quality: Self.echoes(0))), evaluator: evaluator, quality: limits,
            at: Date())
        #expect(book.status.ipv4?.impairments == [] && book.status.state == .unreachable && !book.status.degraded)
    }
}
