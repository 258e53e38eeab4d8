import Foundation
import Reachable
import Testing

/// The contract's cause table ("The cause first"), row by row, on documents built by hand: the
/// rules are a pure function of the document and what the monitor remembers.
@Suite struct CauseRulesTests {
    private static let now = Date(timeIntervalSince1970: 1_796_600_000)

    /// eth0 carries both families; everything answers.
    private static func healthy(ipv6: Bool = true) -> ReachabilityStatus {
        var status = ReachabilityStatus(
            path: NetworkPath(
                state: .reachable, ipv4: true, ipv6: ipv6, transport: TransportSet(ethernet: true),
                interfaces: [
                    InterfaceStatus(
                        name: "eth0", index: 2, transport: .ethernet, kind: "veth", operState: "up",
                        isDefaultRoute: true, addresses: ["198.18.0.2/24", "2001:db8::2/64"])
                ],
                facts: PathFacts(
                    ipv4: .out(interface: "eth0"), ipv6: ipv6 ? .out(interface: "eth0") : .noRoute,
                    links: ["eth0": .init(trouble: nil, addressed: ipv6 ? [.ipv4, .ipv6] : [.ipv4])])),
            sequence: 3, changedAt: now)
        status.targets = [
            target("web", v4: .reachable, v6: ipv6 ? .reachable : nil),
            target("db", v4: .reachable, v6: ipv6 ? .reachable : nil),
        ]
        return status
    }

    private static func target(
        _ name: String, url: String? = nil, v4: TargetStatus.State?, v6: TargetStatus.State?,
        reason: ProbeFailureReason = .refused, detail: String? = "ECONNREFUSED: connection refused"
    ) -> TargetStatus {
        var target = TargetStatus(name: name, url: url ?? "tcp://\(name).test:80", since: now)
        func family(_ state: TargetStatus.State) -> TargetFamilyStatus {
            state == .unreachable
                ? TargetFamilyStatus(
                    state: .unreachable, reason: reason, detail: detail, address: "x", interface: "eth0")
                : TargetFamilyStatus(state: state, address: "x", interface: "eth0")
        }
        target.ipv4 = v4.map(family)
        target.ipv6 = v6.map(family)
        target.deriveOverall(unresolved: nil, at: now)
        return target
    }

    private static let dualStack = CauseMemory(lastWayOut: [.ipv4: "eth0", .ipv6: "eth0"])
    private static let ipv4Only = CauseMemory(lastWayOut: [.ipv4: "eth0"])

    private static func cause(_ status: ReachabilityStatus, _ memory: CauseMemory = dualStack) -> Cause? {
        CauseRules.cause(of: status, remembering: memory)
    }

    /// The layer, family and subject, as `layer/family/subject` (`-` for none).
    private static func summary(_ cause: Cause?) -> String {
        guard let cause else { return "null" }
        return "\(cause.layer.rawValue)/\(cause.family?.rawValue ?? "-")/\(cause.subject ?? "-")"
    }

    private static func losingRoutes(
        _ status: inout ReachabilityStatus, ipv4: Bool, ipv6: Bool, trouble: PathFacts.LinkTrouble?,
        wayOut: PathFacts.WayOut = .noRoute
    ) {
        status.ipv4 = !ipv4 && status.ipv4
        status.ipv6 = !ipv6 && status.ipv6
        status.state = status.ipv4 || status.ipv6 ? .reachable : .unreachable
        if ipv4 { status.pathFacts.ipv4 = wayOut }
        if ipv6 { status.pathFacts.ipv6 = wayOut }
        status.pathFacts.links["eth0"]?.trouble = trouble
    }

    @Test func nothingWrongIsNull() {
        #expect(Self.cause(Self.healthy()) == nil)
        var unknown = Self.healthy()
        unknown.state = .unknown
        unknown.ipv4 = false
        unknown.ipv6 = false
        #expect(Self.cause(unknown, CauseMemory()) == nil)
        // An IPv4-only host's missing IPv6 is no cause.
        #expect(Self.cause(Self.healthy(ipv6: false), Self.ipv4Only) == nil)
        #expect(Self.cause(Self.healthy(ipv6: false), CauseMemory()) == nil)
    }

    @Test(arguments: [
        (PathFacts.LinkTrouble?.some(.down), "eth0 is down"),
        (.some(.noCarrier), "eth0 is down (no carrier)"),
    ])
    func theLinkOfBothFamiliesIsDown(trouble: PathFacts.LinkTrouble?, text: String) throws {
        var status = Self.healthy()
        Self.losingRoutes(&status, ipv4: true, ipv6: true, trouble: trouble)
        status.targets = [Self.target("web", v4: .unreachable, v6: .unreachable, reason: .noRoute)]
        status.dns.state = .failing
        let cause = try #require(Self.cause(status))
        #expect(Self.summary(cause) == "link/-/eth0")
        #expect(cause.text == text)
        #expect(cause.since == Self.now)
    }

    @Test func aLinkThatWasRemovedOrStillCarriesALinkdownRoute() {
        var removed = Self.healthy(ipv6: false)
        Self.losingRoutes(&removed, ipv4: true, ipv6: false, trouble: nil)
        removed.pathFacts.links = [:]
        #expect(Self.summary(Self.cause(removed, Self.ipv4Only)) == "link/-/eth0")
        #expect(Self.cause(removed, Self.ipv4Only)?.text == "eth0 was removed")
        // The route moved to wan1 before wan1 lost its carrier; eth0, the last way out, is fine.
        var moved = Self.healthy(ipv6: false)
        Self.losingRoutes(&moved, ipv4: true, ipv6: false, trouble: nil, wayOut: .unusableInterface("wan1"))
        moved.pathFacts.links["wan1"] = .init(trouble: .noCarrier, addressed: [.ipv4])
        #expect(Self.summary(Self.cause(moved, Self.ipv4Only)) == "link/-/wan1")
    }

    @Test func oneFamilysRouteRemovedNamesThatFamily() throws {
        var status = Self.healthy()
        Self.losingRoutes(&status, ipv4: true, ipv6: false, trouble: nil)
        let cause = try #require(Self.cause(status))
        #expect(Self.summary(cause) == "route/ipv4/-")
        #expect(cause.text == "no IPv4 route out")
        // On an IPv4-only host the same loss is everything: no family.
        var only = Self.healthy(ipv6: false)
        Self.losingRoutes(&only, ipv4: true, ipv6: false, trouble: nil)
        #expect(Self.summary(Self.cause(only, Self.ipv4Only)) == "route/-/-")
        // A host that never had a way out since reachd started.
        #expect(Self.summary(Self.cause(only, CauseMemory())) == "route/-/-")
        #expect(Self.cause(only, CauseMemory())?.text == "no route out")
    }

    @Test func anAddressGoneOrTentative() {
        // IPv6: the route stays (a link-local gateway) but no usable source is left.
        var tentative = Self.healthy()
        Self.losingRoutes(&tentative, ipv4: false, ipv6: true, trouble: nil, wayOut: .withoutSource(interface: "eth0"))
        #expect(Self.summary(Self.cause(tentative)) == "address/ipv6/eth0")
        #expect(Self.cause(tentative)?.text == "eth0 has no usable IPv6 address")
        // IPv4: the kernel flushes the routes with the address; the interface has none left.
        var gone = Self.healthy()
        Self.losingRoutes(&gone, ipv4: true, ipv6: false, trouble: nil)
        gone.pathFacts.links["eth0"]?.addressed = [.ipv6]
        #expect(Self.summary(Self.cause(gone)) == "address/ipv4/eth0")
    }

    @Test func aLowerLayerExplainsTheOtherFamilysLoss() {
        // IPv6 went with wan6's carrier; IPv4's route was deleted: the link is named first.
        var status = Self.healthy()
        Self.losingRoutes(&status, ipv4: true, ipv6: true, trouble: nil)
        status.pathFacts.links["wan6"] = .init(trouble: .noCarrier, addressed: [.ipv6])
        let memory = CauseMemory(lastWayOut: [.ipv4: "eth0", .ipv6: "wan6"])
        #expect(Self.summary(Self.cause(status, memory)) == "link/ipv6/wan6")
    }

    @Test func dnsFailing() throws {
        var status = Self.healthy()
        status.dns = DNSStatus(
            state: .failing, name: "check.test.", reason: .timeout, since: Self.now,
            servers: [NameserverStatus(address: "198.18.0.53", state: .failing, reason: .timeout, since: Self.now)])
        status.targets[0] = Self.target("web", v4: .unreachable, v6: .unreachable, reason: .timeout)
        let cause = try #require(Self.cause(status))
        #expect(Self.summary(cause) == "dns/-/-")
        #expect(cause.text.contains("198.18.0.53"))

        var unresolved = Self.healthy()
        var web = TargetStatus(name: "web", url: "http://web.test/", since: Self.now)
        web.deriveOverall(unresolved: (.dns, "no answer before the deadline"), at: Self.now)
        unresolved.targets[0] = web
        #expect(Self.summary(Self.cause(unresolved)) == "dns/-/-")
        #expect(Self.cause(unresolved)?.text.contains("web") == true)
    }

    @Test func oneCheckFamilyFailingOnDNS() {
        var status = Self.healthy()
        status.connectivity = ConnectivityStatus(
            state: .full, url: "http://check.test/generate_204", since: Self.now,
            ipv4: ConnectivityFamilyStatus(state: .full),
            ipv6: ConnectivityFamilyStatus(state: .limited, reason: .dns, detail: "SERVFAIL from 198.18.0.53"),
            degraded: true)
        #expect(Self.summary(Self.cause(status)) == "dns/-/-")
        #expect(Self.cause(status)?.text.contains("check.test") == true)
    }

    @Test func aDNSTargetsWrongAnswerIsATargetCause() {
        var status = Self.healthy()
        status.targets.append(
            Self.target(
                "split", url: "dns://198.18.0.9/db.test", v4: .unreachable, v6: nil, reason: .dns,
                detail: "NXDOMAIN from 198.18.0.9"))
        #expect(Self.summary(Self.cause(status)) == "target/-/split")
    }

    @Test func pastTheGatewayDark() throws {
        var status = Self.healthy()
        status.connectivity = ConnectivityStatus(
            state: .limited, url: "http://check.test/generate_204", reason: .timeout, since: Self.now,
            ipv4: ConnectivityFamilyStatus(state: .limited, reason: .timeout, detail: "ETIMEDOUT"),
            ipv6: ConnectivityFamilyStatus(state: .limited, reason: .hostUnreachable, detail: "EHOSTUNREACH"))
        status.targets[0] = Self.target("web", v4: .unreachable, v6: .unreachable, reason: .timeout)
        let cause = try #require(Self.cause(status))
        #expect(Self.summary(cause) == "path/-/eth0")
        // One family dark: that family.
        status.connectivity.ipv6 = ConnectivityFamilyStatus(state: .full)
        #expect(Self.summary(Self.cause(status)) == "path/ipv4/eth0")
    }

    @Test func aCheckFamilyWithoutAWayOnAHostThatNeverHadThatFamily() {
        // An IPv4-only host, a check host with both families: IPv6's check has no way (`none`).
        var status = Self.healthy(ipv6: false)
        status.connectivity = ConnectivityStatus(
            state: .full, url: "http://check.test/generate_204", since: Self.now,
            ipv4: ConnectivityFamilyStatus(state: .full), ipv6: ConnectivityFamilyStatus(state: .none), degraded: true)
        #expect(Self.summary(Self.cause(status, Self.ipv4Only)) == "path/ipv6/-")
        #expect(Self.cause(status, Self.ipv4Only)?.text == "IPv6 has no way to check.test")
    }

    @Test func pastTheGatewayWithoutACheckIsEveryTargetOfAFamily() {
        var status = Self.healthy(ipv6: false)
        status.targets = [
            Self.target("web", v4: .unreachable, v6: nil, reason: .timeout),
            Self.target("db", v4: .unreachable, v6: nil, reason: .hostUnreachable),
        ]
        #expect(Self.summary(Self.cause(status, Self.ipv4Only)) == "path/-/eth0")
        // One of them answers: the network is fine, a target is not.
        status.targets[1] = Self.target("db", v4: .reachable, v6: nil)
        #expect(Self.summary(Self.cause(status, Self.ipv4Only)) == "target/-/web")
    }

    @Test func aPortalAndACheckServerThatMisbehaves() {
        var portal = Self.healthy()
        portal.connectivity = ConnectivityStatus(
            state: .portal, url: "http://check.test/generate_204", since: Self.now,
            ipv4: ConnectivityFamilyStatus(state: .portal), ipv6: ConnectivityFamilyStatus(state: .portal))
        #expect(Self.summary(Self.cause(portal)) == "portal/-/-")
        #expect(Self.cause(portal)?.text == "captive portal at check.test")

        var check = Self.healthy()
        check.connectivity = ConnectivityStatus(
            state: .limited, url: "http://[2001:db8::80]:8080/health", reason: .httpStatus, since: Self.now,
            ipv4: nil, ipv6: ConnectivityFamilyStatus(state: .limited, reason: .httpStatus, detail: "HTTP 503"))
        #expect(Self.summary(Self.cause(check)) == "check/-/-")
        #expect(Self.cause(check)?.text == "[2001:db8::80] fails the connectivity check (HTTP 503)")
    }

    @Test func targetsBothFamiliesFirstThenIPv6ThenIPv4() throws {
        var status = Self.healthy()
        status.targets = [
            Self.target("a", v4: .unreachable, v6: .reachable),
            Self.target("b", v4: .reachable, v6: .unreachable, reason: .timeout),
            Self.target("c", v4: .unreachable, v6: .unreachable),
        ]
        let cause = try #require(Self.cause(status))
        #expect(Self.summary(cause) == "target/-/c")
        #expect(cause.text == "c is unreachable (refused: ECONNREFUSED: connection refused)")
        status.targets.removeLast()
        #expect(Self.summary(Self.cause(status)) == "target/ipv6/b")
        status.targets.removeLast()
        #expect(Self.summary(Self.cause(status)) == "target/ipv4/a")
    }

    @Test func aBackupUplinkNeverHidesATarget() {
        var status = Self.healthy()
        status.interfaces.append(
            InterfaceStatus(
                name: "wan1", index: 3, transport: .ethernet, kind: "veth", operState: "up", isDefaultRoute: true,
                addresses: ["198.18.40.2/24"],
                connectivity: ConnectivityStatus(
                    state: .limited, url: "http://check.test/", reason: .timeout, since: Self.now,
                    ipv4: ConnectivityFamilyStatus(state: .limited, reason: .timeout))))
        // The kernel's own choice, eth0, is fine and full.
        status.interfaces[0].connectivity = ConnectivityStatus(
            state: .full, url: "http://check.test/", since: Self.now, ipv4: ConnectivityFamilyStatus(state: .full))
        #expect(Self.summary(Self.cause(status)) == "uplink/-/wan1")
        #expect(Self.cause(status)?.text == "uplink wan1 is limited (timeout)")
        status.targets[1] = Self.target("db", v4: .unreachable, v6: .unreachable)
        #expect(Self.summary(Self.cause(status)) == "target/-/db")
    }

    @Test func anImpairment() {
        var status = Self.healthy()
        status.targets[1].ipv4?.impairments = [.loss, .mtu]
        #expect(Self.summary(Self.cause(status)) == "quality/ipv4/db")
        #expect(Self.cause(status)?.text == "db is impaired over IPv4: loss, mtu")
        // A target of one family: that is every family it has.
        var single = Self.healthy(ipv6: false)
        single.targets[0].ipv4?.impairments = [.latency]
        #expect(Self.summary(Self.cause(single, Self.ipv4Only)) == "quality/-/web")
    }

    @Test func aFileNotApplied() {
        var status = Self.healthy()
        status.targetsFile = TargetsFileStatus(
            path: "/etc/reachd/targets", appliedAt: Self.now, error: "line 3: invalid target \"oops\"")
        #expect(Self.summary(Self.cause(status)) == "config/-/-")
        #expect(Self.cause(status)?.text.contains("line 3") == true)
        var memory = Self.dualStack
        memory.webConfigRefusal = .init(file: "/etc/reachd/web.yml", error: "tls_server_config.cert_file: no such file")
        #expect(Self.cause(Self.healthy(), memory)?.text.hasPrefix("web config /etc/reachd/web.yml") == true)
    }

    @Test func oneNameserverFailingOnlyWhenNothingElseFails() {
        var status = Self.healthy()
        status.dns = DNSStatus(
            state: .degraded, name: "check.test.", since: Self.now,
            servers: [
                NameserverStatus(address: "198.18.0.53", state: .answering, since: Self.now),
                NameserverStatus(address: "2001:db8::53", state: .failing, reason: .timeout, since: Self.now),
            ])
        #expect(Self.summary(Self.cause(status)) == "dns/-/2001:db8::53")
        #expect(Self.cause(status)?.text == "nameserver 2001:db8::53 (timeout) fails while another answers")
        var two = status
        two.dns.servers.append(
            NameserverStatus(address: "198.18.0.57", state: .failing, reason: .refused, since: Self.now))
        #expect(Self.summary(Self.cause(two)) == "dns/-/-")
        #expect(
            Self.cause(two)?.text
                == "nameservers 2001:db8::53 (timeout), 198.18.0.57 (refused) fail while another answers")
        status.targets[0] = Self.target("web", v4: .unreachable, v6: .unreachable)
        #expect(Self.summary(Self.cause(status)) == "target/-/web")
    }

    @Test func theMemoryRemembersTheLastWayOutOfEachFamily() {
        var memory = CauseMemory()
        memory.remember(PathFacts(ipv4: .out(interface: "eth0"), ipv6: .noRoute))
        memory.remember(PathFacts(ipv4: .noRoute, ipv6: .noRoute))
        #expect(memory.lastWayOut == [.ipv4: "eth0"])
        #expect(memory.needs(.ipv4) && !memory.needs(.ipv6))
    }
}
