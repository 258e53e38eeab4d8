import FoundationEssentials
import Reachable
import ReachdClient
import Testing

/// The lines `reachd status` and `watch` print from a served document.
struct StatusTextTests {
    /// Found by FuzzClient on a recorded `/status`: `.063` came back as `.062`, because the time
    /// read from the document is a `Double` just below it and the format cut the fraction off.
    @Test(arguments: ["2026-11-23T16:43:45.063Z", "2026-11-23T16:43:45.058Z", "2026-11-21T22:00:00.123Z"])
    func theTimeIsPrintedAsServed(time: String) throws {
        let parsed = try ReachabilityStatus.timestampStyle.parse(time)
        #expect(ReachabilityStatus.timestampStyle.format(parsed) == time)
        let status = ReachabilityStatus(path: NetworkPath(state: .unreachable), sequence: 3, changedAt: parsed)
        #expect(StatusText.summary(status) == "\(time) #3 unreachable")
    }

    @Test func everyMillisecondOfASecondReadsBackTheSame() throws {
        for millisecond in 0..<1000 {
            let time = "2026-11-23T16:43:45." + String(String(millisecond + 1000).dropFirst()) + "Z"
            let parsed = try ReachabilityStatus.timestampStyle.parse(time)
            #expect(ReachabilityStatus.timestampStyle.format(parsed) == time)
        }
    }

    /// The first and last millisecond of RFC 3339's four-digit years read back as served.
    @Test(arguments: ["0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"])
    func theEdgesOfFourDigitYearsReadBack(time: String) throws {
        #expect(ReachabilityStatus.timestampStyle.format(try ReachabilityStatus.timestampStyle.parse(time)) == time)
    }

    /// Found by FuzzClient (`Fuzz/Regressions/FuzzClient/year-before-0000`): a time that is year
    /// 0000 with its offset but before it in UTC was written `-0001-12-31T23:00:00.000Z`, which the
    /// parser then refused: `reachd status` printed a time no RFC 3339 reader takes.
    @Test(arguments: [
        "0000-01-01T00:00:00.000+01:00", "9999-12-31T23:59:59.9996Z", "9999-12-31T23:00:00.000-01:00",
        "10000-01-01T00:00:00.000Z",
    ])
    func aTimeOutsideFourDigitYearsIsRefused(time: String) {
        #expect(throws: (any Error).self) { try ReachabilityStatus.timestampStyle.parse(time) }
    }

    @Test func aTimeBetweenMillisecondsIsRoundedToTheNearest() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123_6)
        #expect(ReachabilityStatus.timestampStyle.format(date) == "2026-11-18T11:06:40.124Z")
    }
}

/// Found by FuzzClient (`Fuzz/Regressions/FuzzClient/control-character-printed`): names from the
/// document reached the terminal as they were. The kernel allows ESC in an interface name, so
/// whoever may create one in reachd's namespace could send a terminal commands through
/// `reachd status`.
struct StatusTextControlCharacterTests {
    @Test func controlCharactersInNamesAreShownEscaped() {
        let since = Date(timeIntervalSince1970: 0)
        let interface = InterfaceStatus(
            name: "eth\u{1B}]0;owned\u{07}", index: 2, transport: .ethernet, kind: "veth", operState: "up",
            isDefaultRoute: true, addresses: ["198.18.0.2/24"])
        #expect(StatusText.line(interface) == "  eth\\x1b]0;owned\\x07 (veth) up default-route 198.18.0.2/24")
        let target = TargetStatus(
            name: "db", url: "tcp://db:5432", state: .reachable, addresses: ["198.18.1.1"], interface: "l\u{7F}",
            since: since)
        #expect(
            StatusText.line(target)
                == "  target db tcp://db:5432 reachable via l\\x7f [198.18.1.1] since 1970-01-01T00:00:00.000Z")
        let unreachable = TargetStatus(
            name: "x\u{9B}", url: "host://x", state: .unreachable, reason: .dns, since: since)
        #expect(StatusText.targetsSummary([unreachable]) == "targets 0/1 reachable (x\\x9b dns)")
    }

    @Test func otherTextIsShownAsItIs() {
        let interface = InterfaceStatus(
            name: "lan-ü", index: 5, transport: .ethernet, kind: nil, operState: "down", isDefaultRoute: false,
            addresses: [])
        #expect(StatusText.line(interface) == "  lan-ü (ethernet) down")
    }
}

/// Per family, `degraded` and DNS: one line per thing, the families only once the document has them.
struct StatusTextFamilyTests {
    private static let since = Date(timeIntervalSince1970: 1_795_000_000)

    private static let web = TargetStatus(
        name: "web", url: "https://web.test/", state: .reachable, addresses: ["198.18.1.10", "2001:db8::10"],
        interface: "eth0", since: since,
        ipv4: TargetFamilyStatus(state: .reachable, address: "198.18.1.10", interface: "eth0"),
        ipv6: TargetFamilyStatus(state: .unreachable, reason: .timeout, address: "2001:db8::10", interface: "eth0"),
        degraded: true)

    private static func document(
        targets: [TargetStatus] = [], connectivity: ConnectivityStatus? = nil, dns: DNSStatus? = nil
    ) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true, transport: TransportSet(ethernet: true)),
            targets: targets, connectivity: connectivity, dns: dns, sequence: 4, changedAt: since)
    }

    @Test func aDegradedUplinkIsNotCountedFull() {
        func uplink(_ name: String, _ connectivity: ConnectivityStatus) -> InterfaceStatus {
            InterfaceStatus(
                name: name, index: 2, transport: .ethernet, kind: nil, operState: "up", isDefaultRoute: true,
                addresses: [], connectivity: connectivity)
        }
        let full = ConnectivityStatus(state: .full, url: "http://c.test/", since: Self.since, ipv4: .init(state: .full))
        let degraded = ConnectivityStatus(
            state: .full, url: "http://c.test/", since: Self.since, ipv4: .init(state: .full),
            ipv6: .init(state: .limited, reason: .timeout), degraded: true)
        #expect(
            StatusText.uplinksSummary([uplink("wan0", full), uplink("wan1", degraded)])
                == "uplinks 1/2 full (wan1 full degraded: ipv6 limited (timeout))")
    }

    @Test func theSummaryNamesTheCauseRightAfterTheState() {
        var status = ReachabilityStatus(
            path: NetworkPath(state: .unreachable), sequence: 9, changedAt: Self.since)
        status.cause = Cause(layer: .link, subject: "eth0", text: "eth0 is down (no carrier)", since: Self.since)
        #expect(StatusText.summary(status).hasSuffix("#9 unreachable — eth0 is down (no carrier)"))
        #expect(!StatusText.summary(Self.document()).contains("—"))
    }

    @Test func aTargetLineShowsEachFamilyAndDegraded() {
        #expect(
            StatusText.line(Self.web)
                == "  target web https://web.test/ reachable degraded via eth0 [198.18.1.10, 2001:db8::10] since 2026-11-18T11:06:40.000Z; "
                + "ipv4 reachable 198.18.1.10 via eth0, ipv6 unreachable (timeout) 2001:db8::10 via eth0")
        let literal = TargetStatus(
            name: "db", url: "tcp://198.18.1.10:5432", state: .unreachable, reason: .noRoute,
            addresses: ["198.18.1.10"], since: Self.since, ipv4: .noRoute)
        #expect(
            StatusText.line(literal)
                == "  target db tcp://198.18.1.10:5432 unreachable (no-route) [198.18.1.10] since 2026-11-18T11:06:40.000Z; "
                + "ipv4 unreachable (no-route: no route to the address)"
        )
        // The failure in words, for the target and its family; the targets file's state.
        let refused = TargetStatus(
            name: "db", url: "tcp://198.18.1.10:5432", state: .unreachable, reason: .refused,
            detail: "ECONNREFUSED: connection refused", addresses: ["198.18.1.10"], since: Self.since,
            ipv4: TargetFamilyStatus(
                state: .unreachable, reason: .refused, detail: "ECONNREFUSED: connection refused",
                address: "198.18.1.10", interface: "eth0"))
        #expect(
            StatusText.line(refused)
                == "  target db tcp://198.18.1.10:5432 unreachable (refused: ECONNREFUSED: connection refused) "
                + "[198.18.1.10] since 2026-11-18T11:06:40.000Z; "
                + "ipv4 unreachable (refused: ECONNREFUSED: connection refused) 198.18.1.10 via eth0")
        let file = TargetsFileStatus(path: "/etc/reachd/targets", appliedAt: Self.since, error: "line 3: oops")
        #expect(
            StatusText.line(file)
                == "  targets file /etc/reachd/targets applied 2026-11-18T11:06:40.000Z; last read not applied: line 3: oops"
        )
        // Not resolved: no family at all, the line as before.
        let unresolved = TargetStatus(
            name: "nx", url: "host://nx.test", state: .unreachable, reason: .dns, since: Self.since)
        #expect(
            StatusText.line(unresolved) == "  target nx host://nx.test unreachable (dns) since 2026-11-18T11:06:40.000Z"
        )
    }

    @Test func theSummaryNamesDegradedTargetsAfterTheUnreachableOnes() {
        let down = TargetStatus(name: "db", url: "tcp://db:1", state: .unreachable, reason: .refused, since: Self.since)
        #expect(
            StatusText.targetsSummary([Self.web, down])
                == "targets 1/2 reachable (db refused, web degraded: ipv6 timeout)")
        var healthy = Self.web
        healthy.ipv6?.state = .reachable
        healthy.ipv6?.reason = nil
        healthy.degraded = false
        #expect(StatusText.targetsSummary([healthy]) == "targets 1/1 reachable")
    }

    /// An impaired family says which impairments hold, on the target's line and in the summary.
    @Test func impairmentsAreNamedOnTheLineAndInTheSummary() {
        let gateway = TargetStatus(
            name: "gw", url: "icmp://198.18.1.1", state: .reachable, addresses: ["198.18.1.1"], interface: "eth0",
            since: Self.since,
            ipv4: TargetFamilyStatus(
                state: .reachable, address: "198.18.1.1", interface: "eth0", impairments: [.loss, .mtu]),
            degraded: true)
        #expect(
            StatusText.line(gateway)
                == "  target gw icmp://198.18.1.1 reachable degraded via eth0 [198.18.1.1] since 2026-11-18T11:06:40.000Z; "
                + "ipv4 reachable impaired: loss, mtu 198.18.1.1 via eth0")
        #expect(StatusText.targetsSummary([gateway]) == "targets 1/1 reachable (gw degraded: ipv4 loss mtu)")
    }

    @Test func aCheckThroughAProxyNamesIt() {
        let target = TargetStatus(
            name: "api", url: "https://api.test/", proxy: "http://198.18.0.1:3128", state: .unreachable,
            reason: .proxy, detail: "proxy answered 403 to CONNECT api.test:443", addresses: ["198.18.0.1"],
            interface: "eth0", since: Self.since,
            ipv4: TargetFamilyStatus(
                state: .unreachable, reason: .proxy, detail: "proxy answered 403 to CONNECT api.test:443",
                address: "198.18.0.1", interface: "eth0"))
        #expect(
            StatusText.line(target)
                == "  target api https://api.test/ unreachable (proxy: proxy answered 403 to CONNECT api.test:443) "
                + "through http://198.18.0.1:3128 via eth0 [198.18.0.1] since 2026-11-18T11:06:40.000Z; "
                + "ipv4 unreachable (proxy: proxy answered 403 to CONNECT api.test:443) 198.18.0.1 via eth0")
        let check = ConnectivityStatus(
            state: .full, url: "http://check.test/generate_204", proxy: "http://[2001:db8::3]:3128", since: Self.since)
        #expect(
            StatusText.line(check)
                == "  connectivity full http://check.test/generate_204 through http://[2001:db8::3]:3128 "
                + "since 2026-11-18T11:06:40.000Z")
    }

    @Test func connectivityShowsEachFamilyAndDegraded() {
        let check = ConnectivityStatus(
            state: .full, url: "http://check.test/generate_204", since: Self.since,
            ipv4: ConnectivityFamilyStatus(state: .full),
            ipv6: ConnectivityFamilyStatus(state: .limited, reason: .timeout),
            degraded: true)
        #expect(
            StatusText.line(check)
                == "  connectivity full degraded http://check.test/generate_204 since 2026-11-18T11:06:40.000Z; ipv4 full, ipv6 limited (timeout)"
        )
        #expect(StatusText.connectivitySummary(check) == "connectivity full degraded: ipv6 limited (timeout)")
        let limited = ConnectivityStatus(
            state: .limited, url: "http://check.test/", reason: .timeout, since: Self.since,
            ipv4: ConnectivityFamilyStatus(state: .limited, reason: .timeout))
        #expect(StatusText.connectivitySummary(limited) == "connectivity limited (timeout)")
        #expect(
            StatusText.line(limited)
                == "  connectivity limited (timeout) http://check.test/ since 2026-11-18T11:06:40.000Z; ipv4 limited (timeout)"
        )
    }

    @Test(arguments: [
        ([NameserverStatus.State.answering, .answering], "dns ok"),
        ([.answering, .failing], "dns degraded (10.0.0.2 timeout)"),
        ([.failing, .failing], "dns failing (10.0.0.1 timeout, 10.0.0.2 timeout)"),
        ([.unknown, .unknown], "dns unknown"),
        ([], "dns failing (no-servers)"),
    ])
    func dnsShowsItsStateAndTheFailingServers(states: [NameserverStatus.State], expected: String) {
        let servers = states.enumerated().map { index, state in
            NameserverStatus(
                address: "10.0.0.\(index + 1)", state: state, reason: state == .failing ? .timeout : nil,
                since: Self.since)
        }
        var dns = DNSStatus(
            state: .unknown, name: "kubernetes.default.svc.cluster.local.", since: Self.since, servers: servers)
        dns.deriveOverall(at: Self.since)
        #expect(StatusText.dnsSummary(dns) == expected)
        #expect(StatusText.summary(Self.document(dns: dns)).hasSuffix(", " + expected))
    }

    /// `reachd status` shows every field of `dns`: its line (state, reason, name, since), then
    /// one line per nameserver (address, state, reason, since).
    @Test func dnsAndEachServerHaveLinesOfTheirOwn() {
        let dns = DNSStatus(
            state: .degraded, name: "a.test.", since: Self.since,
            servers: [
                NameserverStatus(address: "10.0.0.1", state: .answering, since: Self.since),
                NameserverStatus(address: "10.0.0.2", state: .failing, reason: .timeout, since: Self.since),
            ])
        #expect(StatusText.line(dns) == "  dns degraded a.test. since 2026-11-18T11:06:40.000Z")
        #expect(
            dns.servers.map(StatusText.line) == [
                "    nameserver 10.0.0.1 answering since 2026-11-18T11:06:40.000Z",
                "    nameserver 10.0.0.2 failing (timeout) since 2026-11-18T11:06:40.000Z",
            ])
        let none = DNSStatus(state: .failing, name: "a.test.", reason: .noServers, since: Self.since)
        #expect(StatusText.line(none) == "  dns failing (no-servers) a.test. since 2026-11-18T11:06:40.000Z")
    }

    @Test func manyFailingServersShowTheFirstFew() {
        let servers = (1...5).map {
            NameserverStatus(address: "10.0.0.\($0)", state: .failing, reason: .refused, since: Self.since)
        }
        let dns = DNSStatus(state: .failing, name: "a.test.", reason: .refused, since: Self.since, servers: servers)
        #expect(
            StatusText.dnsSummary(dns) == "dns failing (10.0.0.1 refused, 10.0.0.2 refused, 10.0.0.3 refused, +2 more)")
    }

    @Test func theSummaryHasOnePartPerThing() {
        let check = ConnectivityStatus(state: .full, url: "http://check.test/", since: Self.since)
        let dns = DNSStatus(
            state: .ok, name: "a.test.", since: Self.since,
            servers: [NameserverStatus(address: "10.0.0.1", state: .answering, since: Self.since)])
        #expect(
            StatusText.summary(Self.document(targets: [Self.web], connectivity: check, dns: dns))
                == "2026-11-18T11:06:40.000Z #4 reachable ipv4 via ethernet, targets 1/1 reachable (web degraded: ipv6 timeout), "
                + "connectivity full, dns ok")
        // Disabled DNS says nothing, as a disabled connectivity check.
        #expect(!StatusText.summary(Self.document()).contains("dns"))
    }

    @Test func serverAddressesFromResolvConfAreShownEscaped() {
        let dns = DNSStatus(
            state: .failing, name: "a.test.", reason: .error, since: Self.since,
            servers: [NameserverStatus(address: "fe80::1%e\u{1B}0", state: .failing, reason: .error, since: Self.since)]
        )
        #expect(StatusText.dnsSummary(dns) == "dns failing (fe80::1%e\\x1b0 error)")
    }
}
