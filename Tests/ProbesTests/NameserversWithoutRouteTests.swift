import CProbeLibraries
import Foundation
import Reachable
import Testing

@testable import Probes

/// Honest words for DNS: a name that does not resolve because no nameserver has a route says so
/// (never c-ares' ECONNREFUSED, which it reports for every socket error), and a family the route
/// gate marked `no-route` stays so when the batch's run then fails to resolve the name.
@Suite struct NameserversWithoutRouteTests {
    static let start = Date(timeIntervalSince1970: 1_000)
    static let v4 = IPAddress("198.19.1.81")!
    static let v6 = IPAddress("2001:db8:1:5::81")!
    let evaluator = ThresholdEvaluator(failureThreshold: 3)

    @Test func theWordsNameTheNameserversAndNoRoute() {
        #expect(
            FailureDetail.noRoute(toNameservers: [IPAddress("198.19.1.53")!])
                == "no route to the nameserver 198.19.1.53")
        #expect(
            FailureDetail.noRoute(toNameservers: [IPAddress("198.19.1.53")!, IPAddress("2001:db8::53")!])
                == "no route to the nameservers 198.19.1.53, 2001:db8::53")
    }

    @Test func aSocketErrorIsNotCalledARefusedConnection() {
        let words = FailureDetail.dns(status: ARES_ECONNREFUSED, servers: ["198.19.1.57"])
        #expect(words == "could not contact 198.19.1.57")
        #expect(!words.contains("ECONNREFUSED") && !words.contains("refused"))
        #expect(FailureDetail.dns(status: ARES_ECONNREFUSED, servers: []) == "could not contact the nameservers")
    }

    /// Both reachable, then the IPv4 default route goes and the only nameserver is IPv4: the gate
    /// marks IPv4 `no-route`; the batch's run cannot resolve the name (both queries fail) and
    /// reports IPv4 `no-route` from the same routes and IPv6's lookup failed.
    @Test func theGatesNoRouteIsNotTurnedIntoDNSByTheRunThatFollows() throws {
        var book = TargetBook(spec: try TargetSpec.parse("db=tcp://both.test:5432"), since: Self.start)
        book.record(
            ProbePipeline.Result(
                addresses: [Self.v4, Self.v6],
                families: [
                    ProbePipeline.FamilyResult(
                        family: .ipv4, address: Self.v4, interface: "eth0", outcome: ProbeOutcome(failure: nil)),
                    ProbePipeline.FamilyResult(
                        family: .ipv6, address: Self.v6, interface: "eth0", outcome: ProbeOutcome(failure: nil)),
                ]),
            evaluator: evaluator, at: Self.start)
        book.routesGone([Self.v4], evaluator: evaluator, at: Self.start.addingTimeInterval(1))
        let gates = book.status
        #expect(gates.ipv4?.reason == .noRoute && gates.state == .reachable && gates.degraded)

        let noRoute = "no route to the nameserver 198.19.1.53"
        let run = ProbePipeline.Result(
            addresses: [Self.v4],
            families: [
                ProbePipeline.FamilyResult(family: .ipv4, outcome: .failed(.noRoute, detail: "no route to the address"))
            ],
            failedLookups: [.ipv6], lookupDetails: [.ipv6: noRoute])
        book.record(run, evaluator: evaluator, at: Self.start.addingTimeInterval(1.002))
        #expect(book.status == gates, "the run's document is the gate's: nothing flips")

        // The IPv6 lookups keep failing: the target reads `dns`, naming the nameserver.
        book.record(run, evaluator: evaluator, at: Self.start.addingTimeInterval(2))
        book.record(run, evaluator: evaluator, at: Self.start.addingTimeInterval(4))
        let status = book.status
        #expect(status.state == .unreachable && status.reason == .dns && status.detail == noRoute)
        #expect(status.ipv4?.reason == .noRoute, "IPv4 still has no route: never `dns`")
        #expect(status.addresses == ["198.19.1.81", "2001:db8:1:5::81"], "kept while shown")
    }
}
