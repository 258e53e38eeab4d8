import Foundation
import Logging
import Reachable
import TestSupport
import Testing

@testable import ReachableServer

/// The exposition text for given documents: names, HELP and TYPE, labels, zeros from the start,
/// series that go with their interface, and the counters' deltas.
struct ServerMetricsTests {
    private static let since = Date(timeIntervalSince1970: 1_763_700_000.125)

    private static func eth0(_ operState: String = "up", kind: String? = "veth") -> InterfaceStatus {
        InterfaceStatus(
            name: "eth0", index: 2, transport: .ethernet, kind: kind, operState: operState, isDefaultRoute: true,
            addresses: ["198.18.0.2/24"])
    }

    private static let wlan0 = InterfaceStatus(
        name: "wlan0", index: 3, transport: .wifi, kind: nil, operState: "down", isDefaultRoute: false,
        addresses: [])

    private static func document(
        _ state: NetworkPath.State = .reachable, interfaces: [InterfaceStatus] = [eth0(), wlan0],
        targets: [TargetStatus] = [], connectivity: ConnectivityStatus? = nil, dns: DNSStatus? = nil,
        sequence: UInt64 = 1
    ) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(
                state: state, ipv4: state == .reachable, ipv6: false,
                transport: TransportSet(ethernet: state == .reachable), isDataMetered: false, interfaces: interfaces),
            targets: targets, connectivity: connectivity, dns: dns, sequence: sequence, changedAt: since)
    }

    /// A dual-stack target whose IPv6 is dead: reachable, degraded.
    private static let degradedWeb = TargetStatus(
        name: "web", url: "https://web.test/", state: .reachable, addresses: ["198.18.1.10", "2001:db8::10"],
        interface: "eth0", since: since,
        ipv4: TargetFamilyStatus(state: .reachable, address: "198.18.1.10", interface: "eth0"),
        ipv6: TargetFamilyStatus(state: .unreachable, reason: .timeout, address: "2001:db8::10", interface: "eth0"),
        degraded: true)

    private static func dns(_ servers: [NameserverStatus]) -> DNSStatus {
        var dns = DNSStatus(
            state: .unknown, name: "kubernetes.default.svc.cluster.local.", since: since, servers: servers)
        dns.deriveOverall(at: since)
        return dns
    }

    private func render(_ metrics: ServerMetrics, sseClients: Int = 0) -> Exposition {
        Exposition(metrics.render(sseClients: sseClients))
    }

    @Test func everyFamilyHasHelpAndAType() {
        let metrics = ServerMetrics(version: "1.2.3")
        metrics.update(
            Self.document(
                targets: [TargetStatus(name: "db", url: "tcp://db.test:5432", since: Self.since), Self.degradedWeb],
                dns: Self.dns([NameserverStatus(address: "10.96.0.10", state: .answering, since: Self.since)])))
        let text = render(metrics)
        let families = [
            "reachd_build_info", "reachd_state", "reachd_family_reachable", "reachd_transport_active",
            "reachd_data_metered", "reachd_status_updates_total", "reachd_last_change_timestamp_seconds",
            "reachd_interface_up", "reachd_interface_info", "reachd_target_up",
            "reachd_target_probe_duration_seconds", "reachd_connectivity_state", "reachd_sse_clients",
            "reachd_sse_events_sent_total", "reachd_netlink_messages_total",
            "reachd_netlink_malformed_messages_total", "reachd_netlink_resyncs_total", "reachd_http_requests_total",
            "reachd_target_family_up", "reachd_target_transitions_total", "reachd_target_probe_failures_total",
            "reachd_config_last_reload_successful", "reachd_config_last_reload_success_timestamp_seconds",
            "reachd_connectivity_family_state", "reachd_dns_state", "reachd_dns_server_up",
            "reachd_dns_query_duration_seconds", "reachd_changes_kept", "reachd_target_impaired", "reachd_cause",
        ]
        #expect(Set(text.type.keys) == Set(families))
        for family in families {
            #expect(text.help[family]?.isEmpty == false, "\(family) has HELP")
            #expect(!text.series(of: family).isEmpty, "\(family) has series")
        }
        for (family, type) in text.type {
            #expect(
                (type == "counter") == family.hasSuffix("_total"), "\(family): counters and only they end in _total")
        }
        #expect(text.type["reachd_target_probe_duration_seconds"] == "histogram")
        #expect(text.type["reachd_dns_query_duration_seconds"] == "histogram")
        let buildInfo = text.series(of: "reachd_build_info")
        #expect(buildInfo.count == 1)
        #expect(buildInfo.first?.hasPrefix(#"reachd_build_info{version="1.2.3",libmicrohttpd=""#) == true)
        #expect(buildInfo.first.flatMap { text.samples[$0] } == 1)
        #expect(text.samples.keys.allSatisfy { $0.hasPrefix("reachd_") })
    }

    @Test func everyLabelledSeriesExistsFromTheStartAtZero() {
        let text = render(ServerMetrics())
        for state in ["unknown", "reachable", "unreachable"] {
            #expect(text["reachd_state", [("state", state)]] == 0)
        }
        for family in ["ipv4", "ipv6"] {
            #expect(text["reachd_family_reachable", [("family", family)]] == 0)
        }
        for transport in ["wifi", "cellular", "ethernet", "other"] {
            #expect(text["reachd_transport_active", [("transport", transport)]] == 0)
        }
        for state in ["disabled", "unknown", "none", "limited", "portal", "full"] {
            #expect(text["reachd_connectivity_state", [("state", state)]] == 0)
            for family in ["ipv4", "ipv6"] {
                #expect(text["reachd_connectivity_family_state", [("family", family), ("state", state)]] == 0)
            }
        }
        for state in ["disabled", "unknown", "ok", "degraded", "failing"] {
            #expect(text["reachd_dns_state", [("state", state)]] == 0)
        }
        for layer in ["none"] + Cause.Layer.allCases.map(\.rawValue) {
            #expect(text["reachd_cause", [("layer", layer)]] == 0)
        }
        let requests: [(String, String)] = [
            ("status", "200"), ("events", "200"), ("liveness", "200"), ("liveness", "503"), ("readiness", "200"),
            ("readiness", "503"), ("metrics", "200"), ("not_found", "404"), ("invalid", "400"), ("invalid", "405"),
        ]
        for (route, code) in requests {
            #expect(text["reachd_http_requests_total", [("route", route), ("code", code)]] == 0)
        }
        for counter in [
            "reachd_status_updates_total", "reachd_sse_events_sent_total", "reachd_netlink_messages_total",
            "reachd_netlink_malformed_messages_total", "reachd_netlink_resyncs_total",
        ] {
            #expect(text[counter] == 0)
        }
    }

    @Test func theConfigurationReadAtStartCountsAsASuccessfulReload() {
        let started = Date(timeIntervalSince1970: 1_763_700_100.5)
        let text = render(ServerMetrics(configured: started))
        #expect(text["reachd_config_last_reload_successful"] == 1)
        #expect(text["reachd_config_last_reload_success_timestamp_seconds"] == 1_763_700_100.5)
        #expect(text.type["reachd_config_last_reload_successful"] == "gauge")
    }

    @Test func theDocumentSetsTheGauges() {
        let metrics = ServerMetrics()
        let db = TargetStatus(name: "db", url: "tcp://db.test:5432", state: .reachable, since: Self.since)
        let api = TargetStatus(
            name: "api", url: "http://api.test/", state: .unreachable, reason: .timeout, since: Self.since)
        let full = ConnectivityStatus(state: .full, url: "http://check.test/", since: Self.since)
        metrics.update(Self.document(targets: [db, api], connectivity: full, sequence: 7))
        let text = render(metrics, sseClients: 3)
        #expect(text["reachd_state", [("state", "reachable")]] == 1)
        #expect(text["reachd_state", [("state", "unknown")]] == 0)
        #expect(text["reachd_state", [("state", "unreachable")]] == 0)
        #expect(text["reachd_family_reachable", [("family", "ipv4")]] == 1)
        #expect(text["reachd_family_reachable", [("family", "ipv6")]] == 0)
        #expect(text["reachd_transport_active", [("transport", "ethernet")]] == 1)
        #expect(text["reachd_transport_active", [("transport", "wifi")]] == 0)
        #expect(text["reachd_data_metered"] == 0)
        #expect(text["reachd_status_updates_total"] == 7)
        #expect(text["reachd_last_change_timestamp_seconds"] == 1_763_700_000.125)
        #expect(text["reachd_interface_up", [("device", "eth0")]] == 1)
        #expect(text["reachd_interface_up", [("device", "wlan0")]] == 0)
        #expect(text["reachd_interface_info", [("device", "eth0"), ("transport", "ethernet"), ("kind", "veth")]] == 1)
        #expect(text["reachd_interface_info", [("device", "wlan0"), ("transport", "wifi"), ("kind", "")]] == 1)
        #expect(text["reachd_target_up", [("target", "db")]] == 1)
        #expect(text["reachd_target_up", [("target", "api")]] == 0)
        #expect(text["reachd_target_probe_duration_seconds_count", [("target", "db")]] == 0)
        #expect(text["reachd_connectivity_state", [("state", "full")]] == 1)
        #expect(text["reachd_connectivity_state", [("state", "disabled")]] == 0)
        #expect(text["reachd_sse_clients"] == 3)
        #expect(text["reachd_cause", [("layer", "none")]] == 1)
        #expect(text["reachd_cause", [("layer", "target")]] == 0)
    }

    @Test func theCauseSetsItsLayerAlone() {
        let metrics = ServerMetrics()
        var document = Self.document(sequence: 3)
        document.cause = Cause(layer: .link, subject: "eth0", text: "eth0 is down", since: Self.since)
        metrics.update(document)
        let text = render(metrics)
        #expect(text["reachd_cause", [("layer", "link")]] == 1)
        for layer in ["none"] + Cause.Layer.allCases.map(\.rawValue) where layer != "link" {
            #expect(text["reachd_cause", [("layer", layer)]] == 0)
        }
    }

    @Test func interfacesThatAreGoneLoseTheirSeries() {
        let metrics = ServerMetrics()
        metrics.update(Self.document())
        metrics.update(Self.document(.unreachable, interfaces: [Self.eth0("down")], sequence: 2))
        var text = render(metrics)
        #expect(text["reachd_interface_up", [("device", "eth0")]] == 0)
        #expect(text["reachd_interface_up", [("device", "wlan0")]] == nil)
        #expect(text.series(of: "reachd_interface_info").count == 1)
        #expect(text["reachd_state", [("state", "unreachable")]] == 1)
        #expect(text["reachd_state", [("state", "reachable")]] == 0)

        // Its kind changed (a device of the same name made anew): the old info series goes.
        metrics.update(Self.document(interfaces: [Self.eth0(kind: "bridge")], sequence: 3))
        text = render(metrics)
        #expect(
            text.series(of: "reachd_interface_info") == [
                #"reachd_interface_info{device="eth0",transport="ethernet",kind="bridge"}"#
            ])

        // None left: the families go (Prometheus sees the series end), and come back with one.
        metrics.update(Self.document(.unreachable, interfaces: [], sequence: 4))
        text = render(metrics)
        #expect(text.series(of: "reachd_interface_up").isEmpty)
        #expect(text.series(of: "reachd_interface_info").isEmpty)
        metrics.update(Self.document(interfaces: [Self.wlan0], sequence: 5))
        #expect(
            render(metrics)["reachd_interface_info", [("device", "wlan0"), ("transport", "wifi"), ("kind", "")]] == 1)
    }

    /// A name listed twice is one series: the same series twice is a scrape Prometheus refuses.
    @Test func anInterfaceListedTwiceIsOneSeries() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(interfaces: [Self.eth0(), Self.eth0("down")]))
        let lines = String(decoding: metrics.render(sseClients: 0), as: UTF8.self).split(separator: "\n")
        #expect(
            lines.filter { $0.hasPrefix(#"reachd_interface_up{device="eth0"}"#) } == [
                #"reachd_interface_up{device="eth0"} 1.0"#
            ])
        #expect(lines.filter { $0.hasPrefix(#"reachd_interface_info{device="eth0""#) }.count == 1)
    }

    @Test func labelValuesAreEscaped() {
        let metrics = ServerMetrics()
        let odd = InterfaceStatus(
            name: #"we"ird\"#, index: 9, transport: .other, kind: nil, operState: "up", isDefaultRoute: false,
            addresses: [])
        metrics.update(Self.document(interfaces: [odd]))
        let text = String(decoding: metrics.render(sseClients: 0), as: UTF8.self)
        #expect(text.contains(#"reachd_interface_up{device="we\"ird\\"} 1"#))
    }

    @Test func countersAddDeltas() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(sequence: 3))
        metrics.update(Self.document(sequence: 3))
        metrics.update(Self.document(sequence: 9))
        var statistics = SourceStatistics()
        statistics.messages = 40
        statistics.malformedMessages = 2
        statistics.resyncs = 1
        metrics.recordSource(statistics)
        metrics.recordSource(statistics)
        statistics.messages = 45
        metrics.recordSource(statistics)
        metrics.eventsSent(4)
        metrics.eventsSent(0)
        let text = render(metrics)
        #expect(text["reachd_status_updates_total"] == 9)
        #expect(text["reachd_netlink_messages_total"] == 45)
        #expect(text["reachd_netlink_malformed_messages_total"] == 2)
        #expect(text["reachd_netlink_resyncs_total"] == 1)
        #expect(text["reachd_sse_events_sent_total"] == 4)
    }

    @Test func probeDurationsFillTheHistogram() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [TargetStatus(name: "db", url: "tcp://db.test:1", since: Self.since)]))
        metrics.recordProbe(target: "db", duration: .milliseconds(20), failure: nil)
        metrics.recordProbe(target: "db", duration: .seconds(4), failure: .timeout)
        let text = render(metrics)
        let db = [("target", "db")]
        #expect(text["reachd_target_probe_duration_seconds_count", db] == 2)
        #expect(text["reachd_target_probe_duration_seconds_sum", db] == 4.02)
        #expect(text["reachd_target_probe_duration_seconds_bucket", db + [("le", "0.01")]] == 0)
        #expect(text["reachd_target_probe_duration_seconds_bucket", db + [("le", "0.025")]] == 1)
        #expect(text["reachd_target_probe_duration_seconds_bucket", db + [("le", "5.0")]] == 2)
        #expect(text["reachd_target_probe_duration_seconds_bucket", db + [("le", "+Inf")]] == 2)
    }

    /// A family's path series come with its first measurement and stay: round trips for every
    /// kind, echoes counted and the path MTU for `icmp://` only; a bound is `le`-inclusive.
    @Test func qualitySeriesComeWithTheFirstMeasurementOfAFamily() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [TargetStatus(name: "gw", url: "icmp://gw.test", since: Self.since)]))
        #expect(render(metrics).series(of: "reachd_target_rtt_seconds_count").isEmpty)
        metrics.recordQuality(
            target: "gw", family: .ipv6, roundTrips: [.microseconds(500), .milliseconds(3)], echoesSent: 3,
            echoesAnswered: 2, pathMTU: nil)
        metrics.recordQuality(
            target: "gw", family: .ipv6, roundTrips: [.milliseconds(7)], echoesSent: 3, echoesAnswered: 1,
            pathMTU: 1400)
        metrics.recordQuality(
            target: "web", family: .ipv4, roundTrips: [.milliseconds(1)], echoesSent: 0, echoesAnswered: 0,
            pathMTU: nil)
        let text = render(metrics)
        let gw = [("target", "gw"), ("family", "ipv6")]
        #expect(text["reachd_target_rtt_seconds_count", gw] == 3)
        #expect(text["reachd_target_rtt_seconds_sum", gw] == 0.0105)
        #expect(text["reachd_target_rtt_seconds_bucket", gw + [("le", "0.0005")]] == 1)
        #expect(text["reachd_target_rtt_seconds_bucket", gw + [("le", "0.005")]] == 2)
        #expect(text["reachd_target_rtt_seconds_bucket", gw + [("le", "0.01")]] == 3)
        #expect(text["reachd_target_rtt_seconds_bucket", gw + [("le", "+Inf")]] == 3)
        #expect(text["reachd_target_packets_sent_total", gw] == 6)
        #expect(text["reachd_target_packets_received_total", gw] == 3)
        #expect(text["reachd_target_path_mtu_bytes", gw] == 1400)
        #expect(text.series(of: "reachd_target_rtt_seconds_count").count == 2, "the web target's too")
        // In the order written: the bounds ascend, each once (a 2.5 s among the milliseconds did not).
        let lines = String(decoding: metrics.render(sseClients: 0), as: UTF8.self).split(separator: "\n")
        let bounds = lines.filter { $0.hasPrefix("reachd_target_rtt_seconds_bucket{target=\"gw\"") }
            .compactMap { $0.split(separator: "le=\"").last?.split(separator: "\"").first.map(String.init) }
        #expect(bounds.count == 14 && bounds.last == "+Inf", "\(bounds)")
        let finite = bounds.dropLast().compactMap(Double.init)
        #expect(finite == finite.sorted() && Set(finite).count == finite.count, "\(bounds)")
        #expect(text.series(of: "reachd_target_packets_sent_total").count == 1, "tcp and http send no echoes")
        #expect(text.series(of: "reachd_target_path_mtu_bytes").count == 1)
    }

    @Test func everyTargetHasEveryFailureReasonFromItsFirstDocument() {
        let metrics = ServerMetrics()
        metrics.update(Self.document(targets: [TargetStatus(name: "db", url: "tcp://db.test:1", since: Self.since)]))
        var text = render(metrics)
        let reasons = [
            "dns", "no-route", "timeout", "refused", "host-unreachable", "http-status", "tls", "proxy", "error",
        ]
        for reason in reasons {
            #expect(
                text["reachd_target_probe_failures_total", [("target", "db"), ("reason", reason)]] == 0, "\(reason)")
        }
        #expect(text.series(of: "reachd_target_probe_failures_total").count == reasons.count)
        #expect(text["reachd_target_transitions_total", [("target", "db")]] == 0)

        // Each family's probe counts; a success counts no failure.
        metrics.recordProbe(target: "db", duration: .milliseconds(3), failure: .refused)
        metrics.recordProbe(target: "db", duration: .milliseconds(3), failure: .refused)
        metrics.recordProbe(target: "db", duration: .seconds(3), failure: .timeout)
        metrics.recordProbe(target: "db", duration: .milliseconds(3), failure: nil)
        text = render(metrics)
        let db = [("target", "db")]
        #expect(text["reachd_target_probe_failures_total", db + [("reason", "refused")]] == 2)
        #expect(text["reachd_target_probe_failures_total", db + [("reason", "timeout")]] == 1)
        #expect(text["reachd_target_probe_failures_total", db + [("reason", "dns")]] == 0)
        #expect(text["reachd_target_probe_duration_seconds_count", db] == 4)
    }

    @Test func everyChangeOfATargetsStateIsATransition() {
        let metrics = ServerMetrics()
        var db = TargetStatus(name: "db", url: "tcp://db.test:1", since: Self.since)
        let api = TargetStatus(name: "api", url: "tcp://api.test:1", since: Self.since)
        var sequence: UInt64 = 1
        func publish() {
            metrics.update(Self.document(targets: [db, api], sequence: sequence))
            sequence += 1
        }
        publish()  // unknown: where every target starts
        for state in [TargetStatus.State.reachable, .reachable, .unreachable, .unreachable, .reachable] {
            db.state = state
            db.reason = state == .unreachable ? .timeout : nil
            publish()
        }
        db.reason = .refused  // the reason alone is no transition
        db.state = .unreachable
        publish()
        db.reason = .timeout
        publish()
        let text = render(metrics)
        #expect(text["reachd_target_transitions_total", [("target", "db")]] == 4)
        #expect(text["reachd_target_transitions_total", [("target", "api")]] == 0)
        #expect(text.type["reachd_target_transitions_total"] == "counter")
    }

    @Test func aFamilySeriesIsPresentWhileTheTargetHasAddressesOfIt() {
        let metrics = ServerMetrics()
        var web = Self.degradedWeb
        metrics.update(Self.document(targets: [web]))
        var text = render(metrics)
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv4")]] == 1)
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv6")]] == 0)
        #expect(text["reachd_target_up", [("target", "web")]] == 1)

        // The name lost its AAAA record: the IPv6 series goes.
        web.addresses = ["198.18.1.10"]
        web.ipv6 = nil
        web.degraded = false
        metrics.update(Self.document(targets: [web], sequence: 2))
        text = render(metrics)
        #expect(text.series(of: "reachd_target_family_up") == [#"reachd_target_family_up{target="web",family="ipv4"}"#])

        // The name does not resolve: its IPv4 series stays, at 0 (a failure removes no series).
        web.addresses = []
        web.ipv4 = nil
        web.state = .unreachable
        web.reason = .dns
        web.unresolvedFamilies = [.ipv4]
        metrics.update(Self.document(targets: [web], sequence: 3))
        text = render(metrics)
        #expect(text.series(of: "reachd_target_family_up") == [#"reachd_target_family_up{target="web",family="ipv4"}"#])
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv4")]] == 0)
        #expect(text["reachd_target_up", [("target", "web")]] == 0)

        // Back, IPv6 only: an answer without IPv4 removes its series.
        web.unresolvedFamilies = []
        web.addresses = ["2001:db8::10"]
        web.ipv6 = TargetFamilyStatus(state: .reachable, address: "2001:db8::10", interface: "eth0")
        web.state = .reachable
        web.reason = nil
        metrics.update(Self.document(targets: [web], sequence: 4))
        text = render(metrics)
        #expect(text.series(of: "reachd_target_family_up") == [#"reachd_target_family_up{target="web",family="ipv6"}"#])
        #expect(text["reachd_target_family_up", [("target", "web"), ("family", "ipv6")]] == 1)
    }

    @Test func connectivityShowsTheStateOfEachFamily() {
        let metrics = ServerMetrics()
        let check = ConnectivityStatus(
            state: .full, url: "http://check.test/", since: Self.since, ipv4: ConnectivityFamilyStatus(state: .full),
            ipv6: ConnectivityFamilyStatus(state: .limited, reason: .timeout), degraded: true)
        metrics.update(Self.document(connectivity: check))
        var text = render(metrics)
        let states = ["disabled", "unknown", "none", "limited", "portal", "full"]
        for state in states {
            #expect(
                text["reachd_connectivity_family_state", [("family", "ipv4"), ("state", state)]]
                    == (state == "full" ? 1 : 0))
            #expect(
                text["reachd_connectivity_family_state", [("family", "ipv6"), ("state", state)]]
                    == (state == "limited" ? 1 : 0))
        }
        #expect(text["reachd_connectivity_state", [("state", "full")]] == 1)

        // The host lost its IPv6 address: that family has no state, every series of it reads 0.
        var ipv4Only = check
        ipv4Only.ipv6 = nil
        ipv4Only.degraded = false
        metrics.update(Self.document(connectivity: ipv4Only, sequence: 2))
        text = render(metrics)
        for state in states {
            #expect(text["reachd_connectivity_family_state", [("family", "ipv6"), ("state", state)]] == 0)
        }
        #expect(text["reachd_connectivity_family_state", [("family", "ipv4"), ("state", "full")]] == 1)
    }

    /// `--per-uplink`: one series per state for each family an interface's own check shows,
    /// present while it shows it.
    @Test func anUplinksConnectivityHasItsSeriesWhileItIsChecked() {
        let metrics = ServerMetrics()
        var uplink = Self.eth0()
        uplink.connectivity = ConnectivityStatus(
            state: .limited, url: "http://check.test/", reason: .timeout, since: Self.since,
            ipv4: ConnectivityFamilyStatus(state: .limited, reason: .timeout))
        metrics.update(Self.document(interfaces: [uplink, Self.wlan0]))
        var text = render(metrics)
        let states = ["disabled", "unknown", "none", "limited", "portal", "full"]
        for state in states {
            #expect(
                text["reachd_interface_connectivity_state", [("device", "eth0"), ("family", "ipv4"), ("state", state)]]
                    == (state == "limited" ? 1 : 0))
        }
        #expect(text.series(of: "reachd_interface_connectivity_state").count == states.count, "no IPv6, no wlan0")
        #expect(text.type["reachd_interface_connectivity_state"] == "gauge")
        #expect(text.help["reachd_interface_connectivity_state"]?.isEmpty == false)

        uplink.connectivity?.ipv4 = ConnectivityFamilyStatus(state: .full)
        uplink.connectivity?.ipv6 = ConnectivityFamilyStatus(state: .full)
        metrics.update(Self.document(interfaces: [uplink, Self.wlan0], sequence: 2))
        text = render(metrics)
        #expect(
            text["reachd_interface_connectivity_state", [("device", "eth0"), ("family", "ipv4"), ("state", "full")]]
                == 1)
        #expect(
            text["reachd_interface_connectivity_state", [("device", "eth0"), ("family", "ipv6"), ("state", "full")]]
                == 1)

        // No longer an uplink: its series end.
        metrics.update(Self.document(interfaces: [Self.eth0(), Self.wlan0], sequence: 3))
        #expect(render(metrics).series(of: "reachd_interface_connectivity_state").isEmpty)
    }

    @Test func dnsShowsItsStateAndEachServerWhileResolvConfListsIt() {
        let metrics = ServerMetrics()
        metrics.update(Self.document())
        #expect(render(metrics)["reachd_dns_state", [("state", "disabled")]] == 1)

        let answering = NameserverStatus(address: "10.96.0.10", state: .answering, since: Self.since)
        let silent = NameserverStatus(address: "10.96.0.11", state: .failing, reason: .timeout, since: Self.since)
        metrics.update(Self.document(dns: Self.dns([answering, silent]), sequence: 2))
        metrics.recordNameserverQuery(server: "10.96.0.10", duration: .microseconds(800))
        metrics.recordNameserverQuery(server: "10.96.0.10", duration: .milliseconds(7))
        metrics.recordNameserverQuery(server: "10.96.0.11", duration: .seconds(2))
        var text = render(metrics)
        for state in ["disabled", "unknown", "ok", "degraded", "failing"] {
            #expect(text["reachd_dns_state", [("state", state)]] == (state == "degraded" ? 1 : 0), "\(state)")
        }
        #expect(text["reachd_dns_server_up", [("server", "10.96.0.10")]] == 1)
        #expect(text["reachd_dns_server_up", [("server", "10.96.0.11")]] == 0)
        let first = [("server", "10.96.0.10")]
        #expect(text["reachd_dns_query_duration_seconds_count", first] == 2)
        #expect(text["reachd_dns_query_duration_seconds_bucket", first + [("le", "0.001")]] == 1)
        #expect(text["reachd_dns_query_duration_seconds_bucket", first + [("le", "0.01")]] == 2)
        #expect(text["reachd_dns_query_duration_seconds_bucket", [("server", "10.96.0.11"), ("le", "1.0")]] == 0)
        #expect(text["reachd_dns_query_duration_seconds_bucket", [("server", "10.96.0.11"), ("le", "2.5")]] == 1)

        // resolv.conf rewritten: the second server is gone, a third is new (not asked yet).
        let third = NameserverStatus(address: "2001:db8::53", since: Self.since)
        var rewritten = Self.dns([answering])
        rewritten.servers.append(third)
        rewritten.deriveOverall(at: Self.since)
        metrics.update(Self.document(dns: rewritten, sequence: 3))
        text = render(metrics)
        #expect(text["reachd_dns_server_up", [("server", "10.96.0.11")]] == nil)
        #expect(text.series(of: "reachd_dns_query_duration_seconds").allSatisfy { !$0.contains("10.96.0.11") })
        #expect(text["reachd_dns_server_up", [("server", "2001:db8::53")]] == 0)
        #expect(text["reachd_dns_query_duration_seconds_count", [("server", "2001:db8::53")]] == 0)
        #expect(text["reachd_dns_state", [("state", "ok")]] == 1, "a server not asked yet leaves the state as it was")

        // None listed: failing (no-servers), and no server series.
        metrics.update(Self.document(dns: Self.dns([]), sequence: 4))
        text = render(metrics)
        #expect(text["reachd_dns_state", [("state", "failing")]] == 1)
        #expect(text.series(of: "reachd_dns_server_up").isEmpty)
        #expect(text.series(of: "reachd_dns_query_duration_seconds").isEmpty)
    }

    /// Prometheus' own linter on the text with every family populated (the e2e test lints a
    /// running reachd, whose document has no families or nameservers without the probes).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool")))
    func promtoolFindsNothingToLint() throws {
        let metrics = ServerMetrics(version: "1.2.3")
        let check = ConnectivityStatus(
            state: .full, url: "http://check.test/", since: Self.since, ipv4: ConnectivityFamilyStatus(state: .full),
            ipv6: ConnectivityFamilyStatus(state: .limited, reason: .timeout), degraded: true)
        let servers = [
            NameserverStatus(address: "10.96.0.10", state: .answering, since: Self.since),
            NameserverStatus(address: "2001:db8::53", state: .failing, reason: .servfail, since: Self.since),
        ]
        metrics.update(Self.document(targets: [Self.degradedWeb], connectivity: check, dns: Self.dns(servers)))
        metrics.recordProbe(target: "web", duration: .milliseconds(12), failure: .timeout)
        metrics.recordNameserverQuery(server: "10.96.0.10", duration: .milliseconds(1))
        let text = metrics.render(sseClients: 1)

        let (status, said) = try Self.promtoolCheckMetrics(text)
        #expect(status == 0 && said.isEmpty, "promtool check metrics: \(said)")
    }

    /// Nothing is sorted per scrape, so the order is the writing's own: each family once, its HELP
    /// and TYPE first and its series in one piece, a target's in the document's order; a scrape
    /// of the same values is the same text.
    @Test func everyFamilyIsWrittenOnceInOnePieceInTheDocumentsOrder() {
        let metrics = ServerMetrics(version: "1.2.3")
        metrics.recordWebConfigReload(successful: true)
        let zebra = TargetStatus(name: "zebra", url: "tcp://zebra.test:1", since: Self.since)
        let alpha = TargetStatus(name: "alpha", url: "tcp://alpha.test:1", since: Self.since)
        metrics.update(Self.document(targets: [zebra, Self.degradedWeb, alpha]))
        metrics.recordQuality(
            target: "web", family: .ipv6, roundTrips: [.milliseconds(3)], echoesSent: 2, echoesAnswered: 1,
            pathMTU: 1280)
        let text = metrics.render(sseClients: 0)
        #expect(text == metrics.render(sseClients: 0))

        var finished: Set<String> = []
        var current = ""
        var targets: [String] = []
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            let family: String
            if line.hasPrefix("# ") {
                family = String(line.split(separator: " ")[2])
                #expect(line.hasPrefix("# HELP") == (family != current), "\(line)")
            } else {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                family = ["_bucket", "_sum", "_count"].reduce(name) { name, suffix in
                    name.hasSuffix(suffix) && !name.hasSuffix("_total")
                        && current == String(name.dropLast(suffix.count))
                        ? String(name.dropLast(suffix.count)) : name
                }
                #expect(family == current, "\(line) is outside its family's piece")
                if family == "reachd_target_up", let target = line.split(separator: "\"").dropFirst().first {
                    targets.append(String(target))
                }
            }
            if family != current {
                #expect(!finished.contains(family), "\(family) is written twice")
                finished.insert(current)
                current = family
            }
        }
        #expect(targets == ["zebra", "web", "alpha"])
    }

    /// Runs `promtool check metrics` on `text`: its exit status and what it printed.
    private static func promtoolCheckMetrics(_ text: [UInt8]) throws -> (Int32, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("promtool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("metrics.txt").path
        try Data(text).write(to: URL(fileURLWithPath: input))
        let promtool = try ChildProcess(
            "/usr/bin/promtool", ["check", "metrics"], logPath: directory.appendingPathComponent("said.txt").path,
            inputPath: input)
        return (promtool.waitForExit() ?? -1, promtool.log)
    }

    @Test func requestsAreCountedByRouteAndCodeNeverByPath() {
        let metrics = ServerMetrics()
        let status = Self.document()
        let snapshot = StatusSnapshot(status)
        let router = RequestRouter(
            monitor: NetworkMonitor.shared, snapshot: snapshot,
            hub: EventHub(initialFrame: EventFrame.status(status).bytes, retryMilliseconds: 2000),
            readiness: [.reachable], isShuttingDown: { false },
            rejections: RejectionLog(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }),
            metrics: metrics)
        for (method, path, version) in [
            ("GET", "/status", "HTTP/1.1"), ("HEAD", "/status", "HTTP/1.1"), ("GET", "/readyz", "HTTP/1.1"),
            ("GET", "/nope-1", "HTTP/1.1"), ("GET", "/nope-2", "HTTP/1.1"), ("DELETE", "/status", "HTTP/1.1"),
            ("GET", "/status", "HTTP/2.0"), ("GET", "/metrics", "HTTP/1.1"),
        ] {
            _ = router.respond(
                to: HTTPRequest(method: method, path: path, version: version), on: RecordingConnection())
        }
        let response = router.respond(
            to: HTTPRequest(method: "GET", path: "/metrics", version: "HTTP/1.1"), on: RecordingConnection())
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        let text = Exposition(response.bodyBytes ?? [])
        #expect(text["reachd_http_requests_total", [("route", "status"), ("code", "200")]] == 2)
        #expect(text["reachd_http_requests_total", [("route", "readiness"), ("code", "200")]] == 1)
        #expect(text["reachd_http_requests_total", [("route", "not_found"), ("code", "404")]] == 2)
        #expect(text["reachd_http_requests_total", [("route", "invalid"), ("code", "405")]] == 1)
        #expect(text["reachd_http_requests_total", [("route", "invalid"), ("code", "400")]] == 1)
        #expect(text["reachd_http_requests_total", [("route", "metrics"), ("code", "200")]] == 1, "this one not yet")
        #expect(!text.samples.keys.contains { $0.contains("nope") })
        #expect(text.series(of: "reachd_http_requests_total").count == RouteLabel.codes.flatMap(\.1).count)
    }
}
