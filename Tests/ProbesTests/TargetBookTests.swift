import Foundation
import Reachable
import Testing

@testable import Probes

/// The per-family rules (docs/probes.md) for targets and the connectivity check, step by step, without a
/// network: the books both the prober and the route gate change.
@Suite struct TargetBookTests {
    static let start = Date(timeIntervalSince1970: 1_000)
    static let v4 = IPAddress("198.18.1.10")!
    static let v6 = IPAddress("2001:db8:1::10")!
    static func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    static func book(_ url: String = "tcp://db.test:5432") throws -> TargetBook {
        TargetBook(spec: try TargetSpec.parse("db=\(url)"), since: start)
    }

    static func family(_ address: IPAddress, _ failure: ProbeFailureReason?, interface: String = "eth0")
        -> ProbePipeline.FamilyResult
    {
        ProbePipeline.FamilyResult(
            family: address.addressFamily, address: failure == .noRoute ? nil : address,
            interface: failure == .noRoute ? nil : interface, outcome: ProbeOutcome(failure: failure))
    }

    static func resolved(_ families: [ProbePipeline.FamilyResult]) -> ProbePipeline.Result {
        ProbePipeline.Result(addresses: [v4, v6], families: families)
    }

    let evaluator = ThresholdEvaluator(failureThreshold: 3, successThreshold: 1)

    @Test func anIPLiteralShowsItsAddressAndFamilyBeforeTheFirstProbe() throws {
        let literal = try Self.book("tcp://[2001:db8:1::10]:5432").status
        #expect(literal.state == .unknown && literal.addresses == ["2001:db8:1::10"])
        #expect(literal.ipv6 == TargetFamilyStatus(state: .unknown) && literal.ipv4 == nil && !literal.degraded)
        let name = try Self.book().status
        #expect(name.state == .unknown && name.addresses.isEmpty && name.ipv4 == nil && name.ipv6 == nil)
        var configuration = ProbeConfiguration()
        configuration.targets = [try TargetSpec.parse("db=tcp://198.18.1.10:5432")]
        let first = configuration.initialTargets(since: Self.start)
        #expect(first.map(\.addresses) == [["198.18.1.10"]] && first[0].ipv4?.state == .unknown, "the first document")
    }

    @Test func bothFamiliesReachableIsReachableOnIPv6sInterface() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil, interface: "eth0"), Self.family(Self.v6, nil, interface: "wg0")]),
            evaluator: evaluator, at: Self.at(1))
        let status = book.status
        #expect(status.state == .reachable && status.reason == nil && !status.degraded)
        #expect(status.interface == "wg0", "IPv6 decides when both are reachable")
        #expect(status.ipv4 == TargetFamilyStatus(state: .reachable, address: "198.18.1.10", interface: "eth0"))
        #expect(status.addresses == ["198.18.1.10", "2001:db8:1::10"])
        #expect(status.since == Self.at(1))
    }

    @Test func oneDeadFamilyIsReachableButDegraded() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, .timeout)]), evaluator: evaluator,
            at: Self.at(1))
        #expect(book.status.state == .reachable)
        #expect(book.status.degraded)
        #expect(book.status.interface == "eth0", "the family that decides")
        #expect(book.status.ipv6?.state == .unreachable && book.status.ipv6?.reason == .timeout)
        #expect(book.status.ipv6?.address == "2001:db8:1::10", "the address probed")
    }

    @Test func bothDeadTakesIPv6sReasonWhenIPv6WasProbed() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, .refused), Self.family(Self.v6, .timeout)]), evaluator: evaluator,
            at: Self.at(1))
        #expect(book.status.state == .unreachable && book.status.reason == .timeout && !book.status.degraded)
        var noV6Route = try Self.book()
        noV6Route.record(
            Self.resolved([Self.family(Self.v4, .refused), Self.family(Self.v6, .noRoute)]), evaluator: evaluator,
            at: Self.at(1))
        #expect(noV6Route.status.reason == .refused, "IPv6 had no routable address: IPv4's reason")
        #expect(noV6Route.status.ipv6?.address == nil)
        var noRoutes = try Self.book()
        noRoutes.record(
            Self.resolved([Self.family(Self.v4, .noRoute), Self.family(Self.v6, .noRoute)]), evaluator: evaluator,
            at: Self.at(1))
        #expect(noRoutes.status.reason == .noRoute)
    }

    @Test func aSingleFamilyNameHasTheOtherNull() throws {
        var book = try Self.book()
        book.record(
            ProbePipeline.Result(addresses: [Self.v4], families: [Self.family(Self.v4, nil)]), evaluator: evaluator,
            at: Self.at(1))
        #expect(book.status.ipv6 == nil && book.status.ipv4 != nil && !book.status.degraded)
        var literal = try Self.book("tcp://[2001:db8:1::10]:5432")
        #expect(literal.addresses == [Self.v6], "a literal has one family, known before any run")
        literal.record(
            ProbePipeline.Result(addresses: [Self.v6], families: [Self.family(Self.v6, .refused)]),
            evaluator: evaluator, at: Self.at(1))
        #expect(literal.status.ipv4 == nil && literal.status.ipv6?.reason == .refused)
    }

    @Test func eachFamilyKeepsItsOwnFailureThreshold() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: evaluator, at: Self.at(1))
        for second in 2...3 {
            book.record(
                Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, .timeout)]), evaluator: evaluator,
                at: Self.at(Double(second)))
            #expect(book.status.ipv6?.state == .reachable, "tolerated: \(second - 1) of 3")
            #expect(!book.status.degraded)
        }
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, .timeout)]), evaluator: evaluator,
            at: Self.at(4))
        #expect(book.status.ipv6?.state == .unreachable && book.status.degraded)
        #expect(book.status.since == Self.at(1), "the target stayed reachable all along")
    }

    @Test func aNameThatStopsResolvingGoesThroughTheThresholdThenShowsNoFamily() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: evaluator, at: Self.at(1))
        for second in 2...3 {
            book.record(ProbePipeline.Result(unresolved: .dns), evaluator: evaluator, at: Self.at(Double(second)))
            #expect(book.status.state == .reachable)
            #expect(book.status.addresses.count == 2, "the last addresses stay while tolerated")
        }
        book.record(ProbePipeline.Result(unresolved: .dns), evaluator: evaluator, at: Self.at(4))
        #expect(book.status.state == .unreachable && book.status.reason == .dns)
        #expect(book.status.ipv4 == nil && book.status.ipv6 == nil && book.status.addresses.isEmpty)
        #expect(book.status.since == Self.at(4))
    }

    @Test func theFirstResultDecidesAtOnceEvenIfItIsDNS() throws {
        var book = try Self.book()
        book.record(ProbePipeline.Result(unresolved: .dns), evaluator: evaluator, at: Self.at(1))
        #expect(book.status.state == .unreachable && book.status.reason == .dns)
    }

    @Test func routesGoneMarksOnlyTheFamilyWhoseEveryAddressLostItsRoute() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: evaluator, at: Self.at(1))
        book.routesGone([Self.v6], evaluator: evaluator, at: Self.at(2))
        #expect(book.status.ipv6 == TargetFamilyStatus.noRoute)
        #expect(book.status.state == .reachable && book.status.degraded)
        book.routesGone([Self.v4, Self.v6], evaluator: evaluator, at: Self.at(3))
        #expect(book.status.state == .unreachable && book.status.reason == .noRoute)
        #expect(book.status.since == Self.at(3))
        #expect(book.status.addresses.count == 2, "the last known addresses stay: the route, not the name, went")
    }

    /// The route gate reads its verdicts by place, in the order `routeQuestions` asked them: a
    /// book with two addresses takes two places, and only a family whose every address lost its
    /// route is judged.
    @Test func theGateReadsEachBooksVerdictsByPlace() throws {
        var books = [try Self.book(), try Self.book("tcp://198.18.1.11:5432"), try Self.book("tcp://198.18.1.12:5432")]
        books[0].record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: evaluator, at: Self.at(1))
        let questions = books.routeQuestions
        #expect(questions.map(\.address) == [Self.v4, Self.v6, IPAddress("198.18.1.11")!, IPAddress("198.18.1.12")!])
        let judged = books.routesGone(
            RouteVerdicts(questions: questions, unroutable: [false, true, false, true]), evaluator: evaluator,
            at: Self.at(2))
        #expect(judged.judgedPlaces == [0, 2])
        #expect(books[0].status.ipv6 == TargetFamilyStatus.noRoute && books[0].status.state == .reachable)
        #expect(books[1].status.state == .unknown && books[1].status.ipv4?.reason == nil)
        #expect(books[2].status.state == .unreachable && books[2].status.reason == .noRoute)
    }

    /// Most questions without a route (a link-down): the judgement is every book's entry in order,
    /// made in the same pass; fewer: only the judged books' entries, with their places.
    @Test func aLinkDownIsJudgedIntoTheWholeList() throws {
        var books = try (11...14).map { try Self.book("tcp://198.18.1.\($0):5432") }
        let questions = books.routeQuestions
        let down = books.routesGone(
            RouteVerdicts(questions: questions, unroutable: [true, true, false, true]), evaluator: evaluator,
            at: Self.at(2))
        #expect(down.list?.map(\.name) == books.map(\.status.name))
        #expect(down.list == books.map(\.status))
        #expect(down.unjudged == [2] && down.judgedPlaces == [0, 1, 3] && down.entries.isEmpty)
        let few = books.routesGone(
            RouteVerdicts(questions: questions, unroutable: [false, false, true, false]), evaluator: evaluator,
            at: Self.at(3))
        #expect(few.list == nil && few.judgedPlaces == [2])
        #expect(few.entries.map(\.status) == [books[2].status])
    }

    /// A link-down of more books than `LargeDocuments.worthSharing` is judged in parts by two
    /// threads at the same time: the list is every book's entry in order, as judging them one by
    /// one gives, and the unjudged places are in order across the parts (an odd count, so the
    /// parts differ in size).
    @Test func aLargeLinkDownIsJudgedInPartsAsOneByOne() throws {
        let count = 2 * LargeDocuments.worthSharing + 1
        var books = try (0..<count).map { try Self.book("tcp://198.18.\(1 + $0 / 250).\(1 + $0 % 250):5432") }
        // Every book gets its address in both families on some books, so places and books differ.
        for index in stride(from: 0, to: count, by: 7) {
            books[index].record(
                Self.resolved([Self.family(books[index].addresses[0], nil), Self.family(Self.v6, nil)]),
                evaluator: evaluator, at: Self.at(1))
        }
        let questions = books.routeQuestions
        // Every question unroutable but those of every 100th book, which is then not judged.
        var keep = Set<Int>()
        var place = 0
        var unroutable: [Bool] = []
        for (index, book) in books.enumerated() {
            for _ in book.addresses {
                unroutable.append(index % 100 != 0)
                place += 1
            }
            if index % 100 == 0 { keep.insert(index) }
        }
        var oneByOne = books
        let expected = oneByOne.indices.map { index in
            if !keep.contains(index) {
                oneByOne[index].routesGone(Set(oneByOne[index].addresses), evaluator: evaluator, at: Self.at(2))
            }
            return oneByOne[index].status
        }
        let judged = books.routesGone(
            RouteVerdicts(questions: questions, unroutable: unroutable), evaluator: evaluator, at: Self.at(2))
        #expect(judged.list == expected)
        #expect(judged.unjudged == keep.sorted())
        #expect(books.map(\.status) == expected)
        #expect(expected.filter { $0.reason == .noRoute }.count == count - keep.count)
        // Marked in every part: every book whose every address was found without a route.
        #expect(
            books.indices.filter { books[$0].unroutableAtLastJudgement } == books.indices.filter { !keep.contains($0) })
    }

    /// The judgement marks a book only when the batch found every one of its addresses without a
    /// route (`ProbeScheduler.AnsweredByChange` then leaves it to its timer): one routable
    /// address of either family, or no address at all, leaves it unmarked; new addresses clear it.
    @Test func aBookIsMarkedAnsweredOnlyWhenEveryAddressHasNoRoute() throws {
        var books = try (1...4).map { try Self.book("tcp://198.18.1.\($0):5432") }
        books[1].record(
            Self.resolved([Self.family(books[1].addresses[0], nil), Self.family(Self.v6, nil)]), evaluator: evaluator,
            at: Self.at(1))
        books[2].record(
            Self.resolved([Self.family(books[2].addresses[0], nil), Self.family(Self.v6, nil)]), evaluator: evaluator,
            at: Self.at(1))
        books.append(try Self.book())  // a name never resolved: no address
        let questions = books.routeQuestions
        // Book 0: its one address gone; book 1: both gone; book 2: IPv6 still routable; book 3: routable.
        let unroutable = [true, true, true, true, false, false]
        #expect(questions.count == unroutable.count)
        _ = books.routesGone(
            RouteVerdicts(questions: questions, unroutable: unroutable), evaluator: evaluator, at: Self.at(2))
        #expect(books.map(\.unroutableAtLastJudgement) == [true, true, false, false, false])
        // A probe that finds the first book at another address: the batch said nothing of it.
        books[0].record(
            Self.resolved([Self.family(IPAddress("198.18.9.9")!, nil)]), evaluator: evaluator, at: Self.at(3))
        #expect(!books[0].unroutableAtLastJudgement)
        #expect(books[1].unroutableAtLastJudgement)
    }

    /// Verdicts asked before a book's addresses changed (a probe recorded between the questions
    /// and the judgement) no longer line up with the books: each is then read by value, and the
    /// judgement is the same.
    @Test func verdictsThatNoLongerLineUpAreReadByValue() throws {
        var books = [try Self.book("tcp://198.18.1.11:5432"), try Self.book("tcp://198.18.1.12:5432")]
        // Asked while the first book still had another address before its own.
        let questions = [RouteQuestion(IPAddress("198.18.1.99")!, via: .kernelChoice)] + books.routeQuestions
        let judged = books.routesGone(
            RouteVerdicts(questions: questions, unroutable: [true, false, true]), evaluator: evaluator, at: Self.at(2))
        #expect(judged.judgedPlaces == [1])
        #expect(books[0].status.state == .unknown)
        #expect(books[1].status.state == .unreachable && books[1].status.reason == .noRoute)
    }

    @Test func aDeadFamilyNeedsTheSuccessThresholdToComeBack() throws {
        let strict = ThresholdEvaluator(failureThreshold: 3, successThreshold: 2)
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, .timeout)]), evaluator: strict,
            at: Self.at(1))
        #expect(book.status.ipv6?.state == .unreachable)
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: strict, at: Self.at(2))
        #expect(book.status.ipv6?.state == .unreachable, "one success of two")
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: strict, at: Self.at(3))
        #expect(book.status.ipv6?.state == .reachable && !book.status.degraded)
    }

    // MARK: Each family resolved on its own (RFC 8305)

    /// A result for some families only: the part of a run ready before the other family resolved.
    static func part(
        covering covered: Set<AddressFamily>, _ families: [ProbePipeline.FamilyResult],
        addresses: [IPAddress], failedLookups: Set<AddressFamily> = []
    ) -> ProbePipeline.Result {
        ProbePipeline.Result(covers: covered, addresses: addresses, families: families, failedLookups: failedLookups)
    }

    @Test func anIPv4VerdictCountsBeforeTheAAAAAnswerAndAFailedAAAAIsNoFamily() throws {
        var book = try Self.book()
        book.record(
            Self.part(covering: [.ipv4], [Self.family(Self.v4, nil)], addresses: [Self.v4]), evaluator: evaluator,
            at: Self.at(1))
        #expect(book.status.state == .reachable && book.status.ipv4?.state == .reachable)
        #expect(book.status.ipv6 == nil && book.status.addresses == ["198.18.1.10"])
        // The AAAA query then fails (REFUSED by every server, or none answered): the name never had
        // an IPv6 address here, so the family stays null and nothing is counted against it.
        let failed = book.record(
            Self.part(covering: [.ipv6], [], addresses: [], failedLookups: [.ipv6]), evaluator: evaluator,
            at: Self.at(2))
        #expect(failed == 0)
        #expect(book.status.state == .reachable && !book.status.degraded && book.status.ipv6 == nil)
        #expect(book.status.ipv4?.state == .reachable && book.status.since == Self.at(1))
    }

    @Test func aFamilyThatHadAddressesAndWhoseLookupFailsIsAFailedProbeWithReasonDNS() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: evaluator, at: Self.at(1))
        for attempt in 1...3 {
            let failed = book.record(
                Self.part(
                    covering: [.ipv4, .ipv6], [Self.family(Self.v4, nil)], addresses: [Self.v4], failedLookups: [.ipv6]),
                evaluator: evaluator, at: Self.at(1 + Double(attempt)))
            #expect(failed == 1, "counted like any failed probe")
            let status = book.status
            #expect(status.addresses == ["198.18.1.10", "2001:db8:1::10"], "its last addresses stay while shown")
            #expect(status.state == .reachable && status.reason == nil, "IPv4 answers: never unreachable (dns)")
            if attempt < 3 {
                #expect(status.ipv6?.state == .reachable && !status.degraded, "below --target-failures")
            } else {
                #expect(status.ipv6?.state == .unreachable && status.ipv6?.reason == .dns && status.degraded)
            }
        }
        // The AAAA query answers again: the family is probed and judged as before.
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, nil)]), evaluator: evaluator, at: Self.at(9))
        #expect(book.status.ipv6?.state == .reachable && !book.status.degraded)
    }

    @Test func aPartLeavesTheOtherFamilyAsItWas() throws {
        var book = try Self.book()
        book.record(
            Self.resolved([Self.family(Self.v4, nil), Self.family(Self.v6, .timeout)]), evaluator: evaluator,
            at: Self.at(1))
        #expect(book.status.ipv6?.state == .unreachable && book.status.degraded)
        book.record(
            Self.part(covering: [.ipv4], [Self.family(Self.v4, nil)], addresses: [Self.v4]), evaluator: evaluator,
            at: Self.at(2))
        #expect(book.status.ipv6?.state == .unreachable && book.status.ipv6?.reason == .timeout, "not covered: kept")
        #expect(book.status.addresses == ["198.18.1.10", "2001:db8:1::10"])
        book.record(
            Self.part(covering: [.ipv6], [Self.family(Self.v6, nil)], addresses: [Self.v6]), evaluator: evaluator,
            at: Self.at(3))
        #expect(book.status.ipv6?.state == .reachable && !book.status.degraded)
        #expect(book.status.addresses == ["198.18.1.10", "2001:db8:1::10"])
    }

    @Test func theConnectivityBookKeepsAnUncoveredFamilyAndJudgesAFailedLookupLimitedDNS() throws {
        let spec = try ConnectivitySpec.parse(url: "http://check.test/generate_204")
        var book = ConnectivityBook(spec: spec, interval: .seconds(300), since: Self.start)
        let ok = ProbeOutcome(failure: nil, statusCode: 204)
        func family(_ address: IPAddress) -> ProbePipeline.FamilyResult {
            ProbePipeline.FamilyResult(family: address.addressFamily, address: address, interface: "eth0", outcome: ok)
        }
        _ = book.record(
            ProbePipeline.Result(addresses: [Self.v4, Self.v6], families: [family(Self.v4), family(Self.v6)]),
            pathUnreachable: false, at: Self.at(1))
        #expect(book.status.state == .full && !book.status.degraded)
        let partDelay = book.record(
            Self.part(covering: [.ipv4], [family(Self.v4)], addresses: [Self.v4]), pathUnreachable: false,
            isLast: false, at: Self.at(2))
        #expect(partDelay == nil, "a part moves no backoff")
        #expect(book.status.ipv6?.state == .full, "not covered: kept")
        _ = book.record(
            Self.part(covering: [.ipv6], [], addresses: [], failedLookups: [.ipv6]), pathUnreachable: false,
            at: Self.at(3))
        #expect(book.status.ipv6?.state == .limited && book.status.ipv6?.reason == .dns)
        #expect(book.status.state == .full && book.status.degraded, "IPv4 still gets through")
    }
}

/// The connectivity check per family: the best family decides, in NetworkManager's order.
@Suite struct ConnectivityBookTests {
    static let v4 = IPAddress("198.18.1.10")!
    static let v6 = IPAddress("2001:db8:1::10")!
    static let start = Date(timeIntervalSince1970: 1_000)

    static func book() throws -> ConnectivityBook {
        ConnectivityBook(
            spec: try ConnectivitySpec.parse(url: "http://check.test/generate_204", response: ""),
            interval: .seconds(300), since: start)
    }

    static func answer(_ address: IPAddress, _ status: Int?, failure: ProbeFailureReason? = nil)
        -> ProbePipeline.FamilyResult
    {
        ProbePipeline.FamilyResult(
            family: address.addressFamily, address: address, interface: "eth0",
            outcome: ProbeOutcome(failure: failure, statusCode: status))
    }

    @Test func theBestFamilyDecidesAndAFamilyBelowFullIsDegraded() throws {
        var book = try Self.book()
        let delay = book.record(
            ProbePipeline.Result(
                addresses: [Self.v4, Self.v6],
                families: [Self.answer(Self.v4, 204), Self.answer(Self.v6, nil, failure: .timeout)]),
            pathUnreachable: false, at: Self.start)
        #expect(book.status.state == .full && book.status.degraded)
        #expect(book.status.ipv6 == ConnectivityFamilyStatus(state: .limited, reason: .timeout))
        #expect(delay == .seconds(1), "the shorter interval while a family is not full")
    }

    @Test func limitedRanksAbovePortalAndIPv6WinsTies() throws {
        var book = try Self.book()
        _ = book.record(
            ProbePipeline.Result(
                addresses: [Self.v4, Self.v6],
                families: [Self.answer(Self.v4, 302), Self.answer(Self.v6, nil, failure: .refused)]),
            pathUnreachable: false, at: Self.start)
        #expect(book.status.state == .limited && book.status.reason == .refused)
        _ = book.record(
            ProbePipeline.Result(
                addresses: [Self.v4, Self.v6],
                families: [Self.answer(Self.v4, nil, failure: .tls), Self.answer(Self.v6, nil, failure: .timeout)]),
            pathUnreachable: false, at: Self.start)
        #expect(book.status.reason == .timeout, "IPv6's reason on a tie")
    }

    @Test func routesGoneIsNoneAndBeforeAnyResolutionThePathDecides() throws {
        var book = try Self.book()
        book.routesGone([], pathUnreachable: true, at: Self.start)
        #expect(book.status.state == .none, "never resolved, and the network is unreachable")
        _ = book.record(
            ProbePipeline.Result(addresses: [Self.v4], families: [Self.answer(Self.v4, 204)]),
            pathUnreachable: false, at: Self.start)
        #expect(book.status.state == .full && book.status.ipv6 == nil)
        book.routesGone([Self.v4], pathUnreachable: false, at: Self.start)
        #expect(book.status.state == .none && book.status.ipv4?.state == ConnectivityStatus.State.none)
    }
}

/// The run bookkeeping every source shares.
@Suite struct ProbeRunsTests {
    @Test func aNewRunMakesTheOneUnderWayStale() {
        var runs = ProbeRuns()
        let first = runs.begin(1)
        let second = runs.begin(2)
        #expect(first && second)
        let finishedFirst = runs.finish(1)
        let finishedSecond = runs.finish(2)
        #expect(finishedFirst == .stale)
        #expect(finishedSecond == .current)
    }

    @Test func pastTheMaximumARunIsOwedAndStartsWhenOneEnds() {
        var runs = ProbeRuns()
        _ = runs.begin(1)
        _ = runs.begin(2)
        let third = runs.begin(3)
        #expect(!third, "two under way already")
        let finishedFirst = runs.finish(1)
        #expect(finishedFirst == .runAgain)
        let fourth = runs.begin(4)
        #expect(fourth)
        let finishedSecond = runs.finish(2)
        let finishedFourth = runs.finish(4)
        #expect(finishedSecond == .stale)
        #expect(finishedFourth == .current)
    }
}
