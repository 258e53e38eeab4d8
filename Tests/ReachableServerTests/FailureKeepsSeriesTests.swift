import Foundation
import Logging
import Reachable
import Testing

@testable import ReachableServer

/// A failure never removes a series: a name that stops resolving keeps the family series of its
/// last successful resolution, reading the overall state; only an answer without a family removes
/// it. And `/metrics` is never older than the document `/status` serves.
struct FailureKeepsSeriesTests {
    private static let since = Date(timeIntervalSince1970: 1_763_700_000.125)
    private static let states = ConnectivityStatus.State.allCases

    private static func document(
        targets: [TargetStatus] = [], connectivity: ConnectivityStatus? = nil, interfaces: [InterfaceStatus] = [],
        sequence: UInt64
    ) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(
                state: .reachable, ipv4: true, ipv6: true, transport: TransportSet(ethernet: true),
                isDataMetered: false, interfaces: interfaces),
            targets: targets, connectivity: connectivity, sequence: sequence, changedAt: since)
    }

    private static let bothUp = TargetStatus(
        name: "web", url: "http://dual.test:8080/health", state: .reachable,
        addresses: ["198.18.1.10", "2001:db8::10"], interface: "eth0", since: since,
        ipv4: TargetFamilyStatus(state: .reachable, address: "198.18.1.10", interface: "eth0"),
        ipv6: TargetFamilyStatus(state: .reachable, address: "2001:db8::10", interface: "eth0"))

    /// What the document shows once no family resolves: both `null`, reason `dns`.
    private static func unresolved(_ target: TargetStatus, had families: AddressFamilies) -> TargetStatus {
        var target = target
        target.state = .unreachable
        target.reason = .dns
        target.detail = "timeout"
        target.addresses = []
        target.interface = nil
        target.ipv4 = nil
        target.ipv6 = nil
        target.unresolvedFamilies = families
        return target
    }

    private static func check(
        _ state: ConnectivityStatus.State, reason: ProbeFailureReason? = nil, ipv4: ConnectivityStatus.State?,
        ipv6: ConnectivityStatus.State?, unresolved: AddressFamilies = []
    ) -> ConnectivityStatus {
        ConnectivityStatus(
            state: state, url: "http://check.test/generate_204", reason: reason, since: since,
            ipv4: ipv4.map { ConnectivityFamilyStatus(state: $0) },
            ipv6: ipv6.map { ConnectivityFamilyStatus(state: $0) },
            unresolvedFamilies: unresolved)
    }

    private static func wan1(_ connectivity: ConnectivityStatus?) -> InterfaceStatus {
        InterfaceStatus(
            name: "wan1", index: 4, transport: .ethernet, kind: "veth", operState: "up", isDefaultRoute: true,
            addresses: ["198.18.2.2/24"], connectivity: connectivity)
    }

    /// family → the state whose series reads 1 (a family whose series all read 0 is left out).
    private static func ones(_ text: Exposition, _ name: String, device: String? = nil) -> [String: String] {
        var found: [String: String] = [:]
        for family in AddressFamily.allCases {
            for state in states {
                let labels =
                    (device.map { [("device", $0)] } ?? []) + [("family", family.rawValue), ("state", state.rawValue)]
                if text[name, labels] == 1 { found[family.rawValue] = state.rawValue }
            }
        }
        return found
    }

    @Test func aTargetWhoseNameStopsResolvingKeepsItsFamilySeriesAtZero() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [Self.bothUp], sequence: 1))
        metrics.update(
            Self.document(targets: [Self.unresolved(Self.bothUp, had: [.ipv4, .ipv6])], sequence: 2))
        let text = Exposition(metrics.render(sseClients: 0))
        for family in ["ipv4", "ipv6"] {
            let labels = [("target", "web"), ("family", family)]
            #expect(text["reachd_target_family_up", labels] == 0, "\(family)")
            for impairment in ["loss", "latency", "mtu"] {
                #expect(text["reachd_target_impaired", labels + [("impairment", impairment)]] == 0)
            }
        }
        #expect(text["reachd_target_up", [("target", "web")]] == 0)
    }

    @Test func anAnswerWithoutAFamilyRemovesItsSeriesAFailedOneDoesNot() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [Self.bothUp], sequence: 1))
        // The name answers without AAAA: IPv6 goes.
        var ipv4Only = Self.bothUp
        ipv4Only.addresses = ["198.18.1.10"]
        ipv4Only.ipv6 = nil
        metrics.update(Self.document(targets: [ipv4Only], sequence: 2))
        // Then it stops resolving: what the last answer had (IPv4) stays, IPv6 does not come back.
        metrics.update(Self.document(targets: [Self.unresolved(ipv4Only, had: [.ipv4])], sequence: 3))
        let text = Exposition(metrics.render(sseClients: 0))
        #expect(text.series(of: "reachd_target_family_up") == [#"reachd_target_family_up{target="web",family="ipv4"}"#])
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv4")]] == 0)
    }

    @Test func aTargetThatNeverResolvedHasNoFamilySeries() {
        let metrics = ServerMetrics()
        let never = Self.unresolved(
            TargetStatus(name: "nx", url: "tcp://nx.test:1", since: Self.since), had: [])
        metrics.update(Self.document(targets: [never], sequence: 1))
        let text = Exposition(metrics.render(sseClients: 0))
        #expect(text.series(of: "reachd_target_family_up").isEmpty)
        #expect(text["reachd_target_up", [("target", "nx")]] == 0)
    }

    @Test func theConnectivityFamiliesReadLimitedWhileTheNameDoesNotResolve() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(connectivity: Self.check(.full, ipv4: .full, ipv6: .full), sequence: 1))
        #expect(
            Self.ones(Exposition(metrics.render(sseClients: 0)), "reachd_connectivity_family_state")
                == ["ipv4": "full", "ipv6": "full"])

        let failing = Self.check(.limited, reason: .dns, ipv4: nil, ipv6: nil, unresolved: [.ipv4, .ipv6])
        metrics.update(Self.document(connectivity: failing, sequence: 2))
        var text = Exposition(metrics.render(sseClients: 0))
        #expect(Self.ones(text, "reachd_connectivity_family_state") == ["ipv4": "limited", "ipv6": "limited"])
        #expect(text["reachd_connectivity_state", [("state", "limited")]] == 1)

        // It answers again, without AAAA: IPv6 has no state (every series of it 0).
        metrics.update(Self.document(connectivity: Self.check(.full, ipv4: .full, ipv6: nil), sequence: 3))
        text = Exposition(metrics.render(sseClients: 0))
        #expect(Self.ones(text, "reachd_connectivity_family_state") == ["ipv4": "full"])
        for state in Self.states {
            #expect(text["reachd_connectivity_family_state", [("family", "ipv6"), ("state", state.rawValue)]] == 0)
        }
    }

    @Test func anUplinkWhoseDNSFailsKeepsItsSeriesReadingLimited() {
        let metrics = ServerMetrics()
        metrics.update(
            Self.document(interfaces: [Self.wan1(Self.check(.full, ipv4: .full, ipv6: .full))], sequence: 1))
        let broken = Self.check(.limited, reason: .dns, ipv4: nil, ipv6: nil, unresolved: [.ipv4, .ipv6])
        metrics.update(Self.document(interfaces: [Self.wan1(broken)], sequence: 2))
        var text = Exposition(metrics.render(sseClients: 0))
        #expect(
            Self.ones(text, "reachd_interface_connectivity_state", device: "wan1") == [
                "ipv4": "limited", "ipv6": "limited",
            ])
        #expect(text.series(of: "reachd_interface_connectivity_state").count == 2 * Self.states.count)

        // No longer an uplink (connectivity `null`): its series end.
        metrics.update(Self.document(interfaces: [Self.wan1(nil)], sequence: 3))
        text = Exposition(metrics.render(sseClients: 0))
        #expect(text.series(of: "reachd_interface_connectivity_state").isEmpty)
    }

    @Test func anOlderDocumentChangesNothing() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [Self.bothUp], sequence: 5))
        metrics.update(Self.document(targets: [Self.unresolved(Self.bothUp, had: [])], sequence: 4))
        let text = Exposition(metrics.render(sseClients: 0))
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv6")]] == 1)
        #expect(text["reachd_status_updates_total"] == 5)
    }

    /// The server installs a document before it sets the series: a scrape in between applies
    /// the document `/status` serves itself.
    @Test func aScrapeIsAtLeastAsNewAsTheDocumentStatusServes() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [Self.bothUp], sequence: 1))
        let installed = Self.document(targets: [Self.unresolved(Self.bothUp, had: [.ipv4, .ipv6])], sequence: 2)
        let response = metrics.response(sseClients: 0, current: installed)
        let text = Exposition(response.bodyBytes ?? [])
        #expect(text["reachd_status_updates_total"] == 2)
        #expect(text["reachd_target_up", [("target", "web")]] == 0)
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv6")]] == 0)
        // The server's own update comes after: the same document, applied once.
        metrics.update(installed)
        #expect(Exposition(metrics.render(sseClients: 0))["reachd_target_transitions_total", [("target", "web")]] == 1)
    }

    /// The router hands the scrape the document its `/status` serves.
    @Test func theRouterScrapesWithTheDocumentStatusServes() {
        let metrics = ServerMetrics()
        let before = Self.document(targets: [Self.bothUp], sequence: 1)
        metrics.update(before)
        let snapshot = StatusSnapshot(before)
        let router = RequestRouter(
            monitor: NetworkMonitor.shared, snapshot: snapshot,
            hub: EventHub(initialFrame: EventFrame.status(before).bytes, retryMilliseconds: 2000),
            readiness: [.reachable], isShuttingDown: { false },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }),
            metrics: metrics)
        _ = snapshot.install(Self.document(targets: [Self.unresolved(Self.bothUp, had: [.ipv4])], sequence: 2))
        let response = router.respond(
            to: HTTPRequest(method: "GET", path: "/metrics", version: "HTTP/1.1"), on: RecordingConnection())
        let text = Exposition(response.bodyBytes ?? [])
        #expect(text["reachd_status_updates_total"] == 2)
        #expect(text.series(of: "reachd_target_family_up") == [#"reachd_target_family_up{target="web",family="ipv4"}"#])
    }
}
