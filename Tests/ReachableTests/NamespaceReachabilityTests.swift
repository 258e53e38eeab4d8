import Reachable
import Testing

extension KernelTests {
    /// Real kernel changes in a namespace, seen by a monitor living in it.
    @Suite struct NamespaceReachability {
        @Test func vethWithIPv4FollowsLinkDownUpAndDefaultRouteRemoval() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                let reachable = try await recorder.latest("reachable over v0") { $0.isReachable }
                #expect(reachable.path.ipv4)
                #expect(!reachable.path.ipv6)
                #expect(reachable.path.transport == TransportSet(ethernet: true))
                #expect(!reachable.path.isDataMetered)
                let v0 = reachable.interface(named: "v0")
                #expect(v0?.kind == "veth")
                #expect(v0?.transport == .ethernet)
                #expect(v0?.operState == "up")
                #expect(v0?.isDefaultRoute == true)
                #expect(v0?.addresses == ["198.18.0.2/24"])
                #expect(reachable.path.interfaces.map(\.name) == ["v0"], "lo is not listed")

                try await lab.monitored.ip("link", "set", "v0", "down")
                let down = try await recorder.latest("unreachable after link down") {
                    $0.state == .unreachable && $0.interface(named: "v0")?.operState == "down"
                }
                #expect(!down.path.ipv4)
                #expect(down.path.transport == TransportSet())
                // The kernel flushes the IPv4 routes of a downed link without RTM_DELROUTE.
                try await recorder.latest("silently flushed default route") {
                    $0.interface(named: "v0")?.isDefaultRoute == false
                }

                // Up again; the flushed default route has to be put back, as after any real link down.
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("route", "replace", "default", "via", VethLab.gateway, "dev", "v0")
                // The lookup may see the new route a moment before its notification is read: the
                // table (isDefaultRoute) follows with the next batch.
                try await recorder.latest("reachable after link up, default route noted") {
                    $0.isReachable && $0.interface(named: "v0")?.isDefaultRoute == true
                }

                try await lab.monitored.ip("route", "del", "default")
                let noRoute = try await recorder.latest("unreachable without default route") {
                    $0.state == .unreachable
                }
                #expect(noRoute.interface(named: "v0")?.isDefaultRoute == false)
                #expect(noRoute.interface(named: "v0")?.operState == "up", "the link itself is fine")

                let sequences = recorder.statuses.map(\.sequence)
                #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "\(sequences)")
                try await monitor.waitForCurrent("subscriber and monitor agree") { $0 == recorder.latest }
                #expect(monitor.failure == nil)
            }
        }

        @Test func ipv6OnlyIsReachableOverIPv6() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("-6", "address", "add", "2001:db8::2/64", "dev", "v0", "nodad")
                try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8::1", "dev", "v0")
            }) { lab, monitor, recorder in
                let status = try await recorder.latest("reachable over IPv6") { $0.isReachable }
                #expect(status.path.ipv6)
                #expect(!status.path.ipv4)
                #expect(status.interface(named: "v0")?.addresses == ["2001:db8::2/64"])
                #expect(status.interface(named: "v0")?.isDefaultRoute == true)

                // A ULA address and an IPv4 address make it dual-stack.
                try await lab.monitored.ip("-6", "address", "add", "fd00::2/64", "dev", "v0", "nodad")
                try await lab.monitored.ip("address", "add", "198.18.0.2/24", "dev", "v0")
                try await lab.monitored.ip("route", "add", "default", "via", VethLab.gateway, "dev", "v0")
                // The kernel announces a new IPv6 address from a work queue, even with nodad: the
                // IPv4 address and route added after it can be announced first.
                let dual = try await recorder.latest("dual stack with the ULA address") {
                    $0.path.ipv4 && $0.path.ipv6 && $0.interface(named: "v0")?.addresses.contains("fd00::2/64") == true
                }
                #expect(dual.interface(named: "v0")?.addresses == ["198.18.0.2/24", "2001:db8::2/64", "fd00::2/64"])

                try await lab.monitored.ip("-6", "route", "del", "default")
                let v4only = try await recorder.latest("IPv4 only") { $0.path.ipv4 && !$0.path.ipv6 }
                #expect(v4only.isReachable)
            }
        }

        @Test func tentativeIPv6AddressIsNotUsableUntilDuplicateDetectionEnds() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
            }) { lab, monitor, recorder in
                try await recorder.latest("carrier") { $0.interface(named: "v0")?.operState == "up" }
                // With DAD (one probe, about a second), the address starts tentative.
                try await lab.monitored.ip("-6", "address", "add", "2001:db8::2/64", "dev", "v0")
                try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8::1", "dev", "v0")
                let tentative = try await recorder.latest("address and route seen") {
                    $0.interface(named: "v0")?.isDefaultRoute == true
                }
                #expect(tentative.state == .unreachable, "tentative: \(tentative.compactJSON)")
                try await recorder.latest(timeout: .seconds(15), "reachable once DAD is done") { $0.isReachable }
            }
        }

        @Test func loopbackOnlyNamespaceStartsUnreachable() async throws {
            let namespace = try await NetworkNamespace()
            defer { namespace.delete() }
            let monitor = try namespace.makeMonitor()
            defer { monitor.close() }
            let seeded = monitor.current
            #expect(seeded.state == .unreachable, "seeded synchronously: never unknown after init")
            #expect(seeded.sequence == 1)
            #expect(seeded.path.interfaces.isEmpty)

            try await namespace.ip("link", "set", "lo", "up")
            try await namespace.ip("address", "add", "198.18.9.9/32", "dev", "lo")
            let deadline = ContinuousClock.now + .seconds(30)
            while monitor.statistics.wakeUps == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(monitor.statistics.wakeUps > 0, "the change woke the monitor")
            #expect(monitor.current.state == .unreachable)
            #expect(monitor.current.path.interfaces.isEmpty)
        }

        /// Tailscale's issue 4038: a default route in another table, chosen by a policy rule.
        @Test func defaultRouteInAnotherTableSelectedByRuleIsReachable() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("address", "add", "198.18.0.2/24", "dev", "v0")
            }) { lab, monitor, recorder in
                try await lab.monitored.ip(
                    "route", "add", "default", "via", VethLab.gateway, "dev", "v0", "table", "100")
                let noRule = try await recorder.latest("table 100 default route seen") {
                    $0.interface(named: "v0")?.isDefaultRoute == true
                }
                #expect(noRule.state == .unreachable, "no rule sends traffic to table 100 yet")

                try await lab.monitored.ip("rule", "add", "from", "all", "lookup", "100", "priority", "100")
                let ruled = try await recorder.latest("reachable through the rule") { $0.isReachable }
                #expect(ruled.path.ipv4)

                try await lab.monitored.ip("rule", "del", "from", "all", "lookup", "100", "priority", "100")
                try await recorder.latest("unreachable once the rule is gone") { $0.state == .unreachable }
            }
        }

        @Test func unreachableDefaultRouteWithLowerMetricWins() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("address", "add", "198.18.0.2/24", "dev", "v0")
                try await lab.monitored.ip(
                    "route", "add", "default", "via", VethLab.gateway, "dev", "v0", "metric", "100")
            }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                try await lab.monitored.ip("route", "add", "unreachable", "default", "metric", "50")
                let blocked = try await recorder.latest("unreachable route wins") { $0.state == .unreachable }
                #expect(blocked.interface(named: "v0")?.isDefaultRoute == true, "the unicast route is still there")

                try await lab.monitored.ip("route", "del", "unreachable", "default", "metric", "50")
                try await recorder.latest("reachable again") { $0.isReachable }

                try await lab.monitored.ip("route", "add", "blackhole", "default", "metric", "10")
                try await recorder.latest("blackhole wins") { $0.state == .unreachable }
            }
        }
    }
}
