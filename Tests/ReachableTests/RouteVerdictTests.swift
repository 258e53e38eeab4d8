import CMnl
import Glibc
import Testing

@testable import Reachable

/// How the kernel's answer for one target address is judged (`RouteChecker.verdict`): like the
/// status itself, and a `local` route (an address of this host) counts.
@Suite struct RouteVerdictTests {
    static let snapshot: RoutingSnapshot = {
        var snapshot = RoutingSnapshot()
        snapshot.interfaceNames = [1: "lo", 2: "eth0", 3: "wlan0"]
        snapshot.usableInterfaces = [2]
        snapshot.usableAddresses = [[198, 18, 0, 2]]
        return snapshot
    }()

    static func verdict(_ answer: RouteLookup) -> RouteVerdict {
        RouteChecker.verdict(for: answer, snapshot: snapshot)
    }

    @Test func unicastOutOfAUsableInterfaceWithAUsableSourceIsRoutable() {
        #expect(
            Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: [198, 18, 0, 2]))
                == .routable(interface: "eth0"))
        #expect(
            Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: nil))
                == .routable(interface: "eth0"), "no preferred source named: the interface decides")
    }

    @Test func aLocalRouteIsRoutableThroughLoopback() {
        #expect(
            Self.verdict(.route(type: UInt8(RTN_LOCAL), outputInterface: 1, preferredSource: nil))
                == .routable(interface: "lo"))
    }

    @Test func anUnusableInterfaceOrSourceIsNoRoute() {
        #expect(Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 3, preferredSource: nil)) == .noRoute)
        #expect(
            Self.verdict(.route(type: UInt8(RTN_UNICAST), outputInterface: 2, preferredSource: [198, 18, 0, 9]))
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
