import Foundation
import Reachable
import Testing

@testable import Probes

/// Re-checked when things start failing: which probe runs the connectivity check at once (the
/// first failure after a success, never a missing route), only while the check reads `full`, and
/// at most once per 10 s however many targets fail together.
@Suite struct StallRecheckTests {
    static let start = Date(timeIntervalSince1970: 1_000)
    static let v4 = IPAddress("198.18.1.10")!
    static let v6 = IPAddress("2001:db8:1::10")!
    let evaluator = ThresholdEvaluator(failureThreshold: 3)

    // MARK: Which probe starts a failure

    @Test func onlyTheFirstFailureAfterASuccessStartsOne() {
        let reachable = evaluator.next(after: .unknown(since: Self.start), failure: nil, at: Self.start)
        #expect(StallRecheck.startsFailing(after: reachable, failure: .timeout))
        #expect(StallRecheck.startsFailing(after: reachable, failure: .dns), "DNS starting to fail is a stall too")
        #expect(!StallRecheck.startsFailing(after: reachable, failure: nil), "a success")
        let failedOnce = evaluator.next(after: reachable, failure: .timeout, at: Self.start)
        #expect(failedOnce.state == .reachable, "still tolerated")
        #expect(!StallRecheck.startsFailing(after: failedOnce, failure: .timeout), "a target that stays failing")
        let down = evaluator.next(
            after: evaluator.next(after: failedOnce, failure: .timeout, at: Self.start), failure: .timeout,
            at: Self.start)
        #expect(down.state == .unreachable && !StallRecheck.startsFailing(after: down, failure: .refused))
    }

    @Test func neverBeforeAnySuccessNorForAMissingRoute() {
        let unknown = TargetEvaluation.unknown(since: Self.start)
        #expect(!StallRecheck.startsFailing(after: unknown, failure: .refused), "a target that never worked")
        let reachable = evaluator.next(after: unknown, failure: nil, at: Self.start)
        #expect(!StallRecheck.startsFailing(after: reachable, failure: .noRoute), "the netlink batch checks already")
    }

    @Test func aNameserverStartsFailingTheSameWay() {
        let answering = evaluator.next(
            after: ThresholdEvaluation<DNSFailureReason>.unknown(since: Self.start), failure: nil, decidesAtOnce: false,
            at: Self.start)
        #expect(StallRecheck.startsFailing(after: answering, failure: .timeout))
        #expect(!StallRecheck.startsFailing(after: answering, failure: .noRoute))
        let failing = evaluator.next(after: answering, failure: .timeout, decidesAtOnce: false, at: Self.start)
        #expect(!StallRecheck.startsFailing(after: failing, failure: .servfail))
    }

    // MARK: When the check runs

    /// Whether each probe that starts failing, `seconds` after the first (in turn), runs the check
    /// while it reads `state`.
    static func runs(at seconds: [Double], while state: ConnectivityStatus.State = .full) -> [Bool] {
        let first = ContinuousClock.now
        var recheck = StallRecheck()
        return seconds.map { recheck.allows(checkReads: state, at: first + .milliseconds(Int64($0 * 1000))) }
    }

    @Test func onlyWhileTheCheckReadsFull() {
        #expect(Self.runs(at: [0]) == [true])
        for state in [ConnectivityStatus.State.limited, .portal, .none, .unknown, .disabled] {
            #expect(Self.runs(at: [0, 11], while: state) == [false, false], "\(state): already backing off from 1 s")
        }
    }

    @Test func atMostOncePerTenSecondsFromTheLastCheckItRan() {
        #expect(
            Self.runs(at: [0, 0, 1, 5, 9, 9.999, 10, 15, 20, 45])
                == [true, false, false, false, false, false, true, false, true, true])
    }

    @Test func aCheckNotRunBecauseNotFullDoesNotCountAgainstTheBound() {
        let first = ContinuousClock.now
        var recheck = StallRecheck()
        let whileLimited = recheck.allows(checkReads: .limited, at: first)
        let onceFull = recheck.allows(checkReads: .full, at: first + .seconds(1))
        #expect(!whileLimited && onceFull)
    }

    // MARK: The books

    static func reachableBook() throws -> TargetBook {
        var book = TargetBook(spec: try TargetSpec.parse("db=tcp://db.test:5432"), since: start)
        book.record(
            ProbePipeline.Result(
                addresses: [v4, v6],
                families: [
                    ProbePipeline.FamilyResult(
                        family: .ipv4, address: v4, interface: "wan0", outcome: ProbeOutcome(failure: nil)),
                    ProbePipeline.FamilyResult(
                        family: .ipv6, address: v6, interface: "wan1", outcome: ProbeOutcome(failure: nil)),
                ]),
            evaluator: ThresholdEvaluator(failureThreshold: 3), at: start)
        return book
    }

    @Test func aTargetFamilyThatStartsFailingNamesItsUplink() throws {
        var book = try Self.reachableBook()
        let timedOut = ProbePipeline.Result(
            addresses: [Self.v4, Self.v6],
            families: [
                ProbePipeline.FamilyResult(
                    family: .ipv4, address: Self.v4, interface: "wan0", outcome: ProbeOutcome(failure: nil)),
                ProbePipeline.FamilyResult(
                    family: .ipv6, address: Self.v6, interface: "wan1", outcome: ProbeOutcome(failure: .timeout)),
            ])
        let failing = book.familiesStartingToFail(timedOut)
        #expect(failing.map(\.family) == [.ipv6] && failing.map(\.interface) == ["wan1"])
        book.record(timedOut, evaluator: evaluator, at: Self.start)
        #expect(book.familiesStartingToFail(timedOut).isEmpty, "the second failure in a row")
    }

    @Test func aNameThatStopsResolvingStartsEveryFamilyFailingOnItsLastUplink() throws {
        var book = try Self.reachableBook()
        let unresolved = ProbePipeline.Result(unresolved: .dns)
        let failing = book.familiesStartingToFail(unresolved)
        #expect(failing.map(\.family) == [.ipv4, .ipv6] && failing.map(\.interface) == ["wan0", "wan1"])
        book.record(unresolved, evaluator: evaluator, at: Self.start)
        #expect(book.familiesStartingToFail(unresolved).isEmpty)
        // A lookup of one family that fails while the other resolves is a failed probe of it.
        var other = try Self.reachableBook()
        let lookup = ProbePipeline.Result(
            addresses: [Self.v4],
            families: [
                ProbePipeline.FamilyResult(
                    family: .ipv4, address: Self.v4, interface: "wan0", outcome: ProbeOutcome(failure: nil))
            ], failedLookups: [.ipv6])
        #expect(other.familiesStartingToFail(lookup).map(\.family) == [.ipv6])
        other.record(lookup, evaluator: evaluator, at: Self.start)
        #expect(other.status.ipv6?.state == .reachable, "tolerated: one failure of three")
    }

    @Test func aRouteLostIsNoStall() throws {
        let book = try Self.reachableBook()
        #expect(book.familiesStartingToFail(ProbePipeline.Result(unresolved: .noRoute, addresses: [Self.v4])).isEmpty)
        let noRoute = ProbePipeline.Result(
            addresses: [Self.v4, Self.v6],
            families: [
                ProbePipeline.FamilyResult(family: .ipv4, outcome: ProbeOutcome(failure: .noRoute)),
                ProbePipeline.FamilyResult(
                    family: .ipv6, address: Self.v6, interface: "wan1", outcome: ProbeOutcome(failure: nil)),
            ])
        #expect(book.familiesStartingToFail(noRoute).isEmpty)
    }

    @Test func theConnectivityBookRunsTheCheckWhileFullAtMostOncePerTenSeconds() throws {
        let spec = try ConnectivitySpec.parse(url: "http://check.test/generate_204")
        var book = ConnectivityBook(spec: spec, interval: .seconds(300), since: Self.start)
        let first = ContinuousClock.now
        let beforeAnyCheck = book.recheckForStall(at: first)
        #expect(!beforeAnyCheck, "unknown: not checked yet")
        let afterFull = book.record(Self.check(nil), pathUnreachable: false, at: Self.start)
        #expect(afterFull == .seconds(300))
        let runs = [0, 3, 10].map { book.recheckForStall(at: first + .seconds($0)) }
        #expect(runs == [true, false, true])
        // The check then fails: it backs off from 1 s as before, not from the 10 s.
        let backoff = (0..<3).map { _ in book.record(Self.check(.refused), pathUnreachable: false, at: Self.start) }
        #expect(backoff == [.seconds(1), .seconds(2), .seconds(4)])
        let whileLimited = book.recheckForStall(at: first + .seconds(30))
        #expect(!whileLimited, "limited: the backoff runs it")
    }

    /// One IPv4 check that answered 204 (`nil`) or failed.
    static func check(_ failure: ProbeFailureReason?) -> ProbePipeline.Result {
        ProbePipeline.Result(
            addresses: [v4],
            families: [
                ProbePipeline.FamilyResult(
                    family: .ipv4, address: v4, interface: "eth0",
                    outcome: ProbeOutcome(failure: failure, statusCode: failure == nil ? 204 : nil))
            ])
    }

    @Test func anUplinksCheckIsFoundByItsInterface() throws {
        var books = UplinkBooks(
            spec: try ConnectivitySpec.parse(url: "http://check.test/generate_204"), interval: .seconds(300))
        _ = books.follow(["wan0": [.ipv4], "wan1": [.ipv4]], unroutable: [], at: Self.start)
        var uplink = try #require(books[1])
        _ = uplink.book.record(UplinkBooksTests.full([Self.v4]), pathUnreachable: false, at: Self.start)
        books[1] = uplink
        let now = ContinuousClock.now
        let items = [("wan0", 0), ("wan1", 0), ("wan1", 1), ("eth9", 0)].map { interface, second in
            books.recheckForStall(of: interface, at: now + .seconds(second))
        }
        // wan0 is not checked yet; wan1 is full, then within its 10 s; eth9 is no uplink.
        #expect(items == [nil, 1, nil, nil])
    }
}
