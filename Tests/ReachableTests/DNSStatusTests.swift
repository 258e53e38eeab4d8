import FoundationEssentials
import Reachable
import Testing

/// `dns.state` from its servers, as the contract's table says, and what a server not asked yet
/// does to it (nothing is known of every server: the state stays).
struct DNSStatusTests {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)
    private static let later = start.addingTimeInterval(5)

    private static func server(
        _ address: String, _ state: NameserverStatus.State, _ reason: DNSFailureReason? = nil
    ) -> NameserverStatus {
        NameserverStatus(address: address, state: state, reason: reason, since: start)
    }

    private static func derived(_ servers: [NameserverStatus], from dns: DNSStatus? = nil) -> DNSStatus {
        var dns = dns ?? DNSStatus(state: .unknown, name: "db.test.", since: start)
        dns.servers = servers
        dns.deriveOverall(at: later)
        return dns
    }

    @Test func everyServerAnsweringIsOkSomeIsDegradedNoneIsFailingWithTheFirstServersReason() {
        let ok = Self.derived([Self.server("10.0.0.1", .answering), Self.server("10.0.0.2", .answering)])
        #expect(ok.state == .ok && ok.reason == nil && ok.since == Self.later)
        let degraded = Self.derived([Self.server("10.0.0.1", .failing, .timeout), Self.server("10.0.0.2", .answering)])
        #expect(degraded.state == .degraded && degraded.reason == nil)
        let failing = Self.derived([
            Self.server("10.0.0.1", .failing, .servfail), Self.server("10.0.0.2", .failing, .timeout),
        ])
        #expect(failing.state == .failing && failing.reason == .servfail)
        let none = Self.derived([])
        #expect(none.state == .failing && none.reason == .noServers)
    }

    @Test func aFirstAnswerWhileAnotherServerIsStillAskedIsNotOkYet() {
        let first = Self.derived([Self.server("10.0.0.1", .answering), Self.server("10.0.0.2", .unknown)])
        #expect(first.state == .unknown && first.reason == nil && first.since == Self.start, "no ok before degraded")
        let second = Self.derived(
            [Self.server("10.0.0.1", .answering), Self.server("10.0.0.2", .failing, .timeout)], from: first)
        #expect(second.state == .degraded)
    }

    @Test func aServerAddedToResolvConfLeavesTheStateAsItWas() {
        let ok = Self.derived([Self.server("10.0.0.1", .answering)])
        let added = Self.derived([Self.server("10.0.0.1", .answering), Self.server("10.0.0.3", .unknown)], from: ok)
        #expect(added.state == .ok && added.since == ok.since)
        let failing = Self.derived([Self.server("10.0.0.1", .failing, .refused)])
        let addedToFailing = Self.derived(
            [Self.server("10.0.0.1", .failing, .refused), Self.server("10.0.0.3", .unknown)], from: failing)
        #expect(addedToFailing.state == .failing && addedToFailing.reason == .refused)
    }

    @Test func serversListedAfterNoneAreUnknownUntilAsked() {
        let none = Self.derived([])
        let listed = Self.derived([Self.server("10.0.0.1", .unknown)], from: none)
        #expect(listed.state == .unknown && listed.reason == nil)
    }
}
