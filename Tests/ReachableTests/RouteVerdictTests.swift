import CMnl
import Glibc
import Testing

@testable import Reachable

/// How the kernel's answer for one address is judged (`RouteVerdict(judging:by:)`, the one rule of
/// the path and the probes): a `local` route (an address of this host) counts too.
@Suite struct RouteVerdictTests {
    static let snapshot: RoutingSnapshot = {
        var snapshot = RoutingSnapshot()
        snapshot.interfaceNames = [1: "lo", 2: "eth0", 3: "wlan0"]
        snapshot.usableInterfaces = [2]
        snapshot.usableAddresses = [IPAddress("198.18.0.2")!]
        return snapshot
    }()

    static func verdict(_ answer: RouteLookup) -> RouteVerdict {
        RouteVerdict(judging: answer, by: snapshot)
    }

    @Test func unicastOutOfAUsableInterfaceWithAUsableSourceIsRoutable() {
        #expect(
            Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: IPAddress("198.18.0.2")))
                == .routable(interface: "eth0", source: IPAddress("198.18.0.2")))
        #expect(
            Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: nil)) == .noRoute,
            "no preferred source: the kernel would send from 0.0.0.0 (NamespaceRouteVerdictTests)")
    }

    @Test func aLocalRouteIsRoutableThroughLoopback() {
        #expect(
            Self.verdict(.route(type: UInt8(RTN_LOCAL), outputInterface: 1, preferredSource: nil))
                == .routable(interface: "lo", source: nil))
    }

    @Test func aPinnedQuestionAnsweredOutOfAnotherInterfaceIsNoRoute() {
        let answer = RouteLookup.route(
            type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: IPAddress("198.18.0.2"))
        #expect(RouteVerdict(judging: answer, by: Self.snapshot, pinnedTo: 2) != .noRoute)
        #expect(RouteVerdict(judging: answer, by: Self.snapshot, pinnedTo: 3) == .noRoute)
        let local = RouteLookup.route(type: UInt8(RTN_LOCAL), outputInterface: 1, preferredSource: nil)
        #expect(
            RouteVerdict(judging: local, by: Self.snapshot, pinnedTo: 2) == .noRoute,
            "a local address is not out of eth0")
    }

    @Test func anUnusableInterfaceOrSourceIsNoRoute() {
        #expect(Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 3, preferredSource: nil)) == .noRoute)
        #expect(
            Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: IPAddress("198.18.0.9")))
                == .noRoute)
        #expect(Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 9, preferredSource: nil)) == .noRoute)
    }

    @Test(arguments: [RTN_UNREACHABLE, RTN_BLACKHOLE, RTN_PROHIBIT, RTN_THROW])
    func unreachableKindsOfRouteAreNoRoute(type: Int) {
        #expect(Self.verdict(.route(type: UInt8(type), outputInterface: 2, preferredSource: nil)) == .noRoute)
    }

    @Test func theKernelsNoRouteIsAnAnswerAPassingErrorIsNot() {
        #expect(Self.verdict(.failed(errno: ENETUNREACH)) == .noRoute)
        #expect(Self.verdict(.failed(errno: EHOSTUNREACH)) == .noRoute)
        #expect(Self.verdict(.failed(errno: EBUSY)) == .unknown)
        #expect(Self.verdict(.failed(errno: EAGAIN)) == .unknown)
        #expect(Self.verdict(.notAsked) == .unknown)
    }
}
