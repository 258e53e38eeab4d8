import Reachable
import Testing

extension KernelTests {
    /// Why the one route rule (`RouteVerdict(judging:by:)`) requires a usable preferred source:
    /// what the kernel answers when there is none, for the path and for a target address alike.
    @Suite struct NamespaceRouteVerdict {
        /// A pinned question (`RTA_OIF`) counts only a routing-table entry that leaves through
        /// that interface: IPv4 answers a forced output interface with an on-link guess, IPv6
        /// with the table's best route out of another interface — neither is a way out.
        @Test func aPinnedQuestionCountsOnlyARouteOutOfThatInterface() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.configureIPv4()
                try await lab.monitored.ip("-6", "address", "add", "2001:db8:1::2/64", "dev", "v0", "nodad")
                try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "v0")
                // A second way out (its far end is only there to give b0 carrier).
                try await lab.monitored.ip("link", "add", "b0", "type", "veth", "peer", "name", "b1")
                try await lab.monitored.ip("link", "set", "b0", "addrgenmode", "none")
                try await lab.monitored.ip("link", "set", "b1", "up")
                try await lab.monitored.ip("link", "set", "b0", "up")
                try await lab.monitored.ip("address", "add", "198.19.1.2/24", "dev", "b0")
                try await lab.monitored.ip("-6", "address", "add", "2001:db8:9::2/64", "dev", "b0", "nodad")
            }) { lab, monitor, recorder in
                let routes = try lab.monitored.makeRouteChecker(monitor)
                try await recorder.latest("both interfaces are seen") {
                    $0.interface(named: "b0")?.addresses.count == 2 && $0.path.ipv4 && $0.path.ipv6
                }
                let (outside4, outside6) = (IPAddress("198.18.5.5")!, IPAddress("2001:db8:2::5")!)
                let backup = Egress.pinned(to: "b0")
                #expect(routes.route(to: outside4, via: backup) == .noRoute, "no route out of b0: not an on-link guess")
                #expect(routes.route(to: outside6, via: backup) == .noRoute, "not the table's route out of v0")
                #expect(
                    routes.route(to: IPAddress("198.19.1.10")!, via: backup)
                        == .routable(interface: "b0", source: IPAddress("198.19.1.2")), "its own subnet is routed")

                // A backup default route (a higher metric) makes b0 a way out of its own.
                try await lab.monitored.ip("route", "add", "default", "via", "198.19.1.1", "dev", "b0", "metric", "200")
                try await lab.monitored.ip(
                    "-6", "route", "add", "default", "via", "2001:db8:9::1", "dev", "b0", "metric", "200")
                #expect(routes.route(to: outside4) == .routable(interface: "v0", source: IPAddress(VethLab.address)))
                #expect(
                    routes.route(to: outside4, via: backup)
                        == .routable(interface: "b0", source: IPAddress("198.19.1.2")))
                #expect(
                    routes.route(to: outside6, via: backup)
                        == .routable(interface: "b0", source: IPAddress("2001:db8:9::2")))
            }
        }

        /// `--per-uplink`'s uplinks, found on every reading: an interface with a route out of it
        /// toward the outside address — a backup in the main table, or a default route in a table
        /// that a `from` rule selects (asked once more from the interface's source address); not
        /// one with an address and no route out.
        @Test func everyUplinkIsFoundAlsoThroughATableARuleSelectsBySource() async throws {
            var configuration = MonitorConfiguration()
            configuration.discoversUplinks = true
            try await withMonitoredLab(
                configuration,
                setUp: { lab in
                    try await lab.configureIPv4()
                    try await lab.monitored.ip("-6", "address", "add", "2001:db8:1::2/64", "dev", "v0", "nodad")
                    try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "v0")
                    try await lab.monitored.ip("link", "add", "b0", "type", "veth", "peer", "name", "b1")
                    try await lab.monitored.ip("link", "set", "b0", "addrgenmode", "none")
                    try await lab.monitored.ip("link", "set", "b1", "up")
                    try await lab.monitored.ip("link", "set", "b0", "up")
                    try await lab.monitored.ip("address", "add", "198.19.1.2/24", "dev", "b0")
                    try await lab.monitored.ip("-6", "address", "add", "2001:db8:9::2/64", "dev", "b0", "nodad")
                }
            ) { lab, monitor, recorder in
                let routes = try lab.monitored.makeRouteChecker(monitor)
                try await recorder.latest("both interfaces are seen") {
                    $0.interface(named: "b0")?.addresses.count == 2 && $0.path.ipv4 && $0.path.ipv6
                }
                #expect(monitor.routingSnapshot.uplinks == ["v0": [.ipv4, .ipv6]], "b0 has no route out")

                // b0's default routes live in table 100, chosen only for its own source addresses.
                try await lab.monitored.ip("route", "add", "default", "via", "198.19.1.1", "dev", "b0", "table", "100")
                try await lab.monitored.ip(
                    "-6", "route", "add", "default", "via", "2001:db8:9::1", "dev", "b0", "table", "100")
                try await lab.monitored.ip("rule", "add", "from", "198.19.1.2", "table", "100")
                try await lab.monitored.ip("-6", "rule", "add", "from", "2001:db8:9::2", "table", "100")
                let deadline = ContinuousClock.now + .seconds(30)
                while monitor.routingSnapshot.uplinks["b0"] != [.ipv4, .ipv6], ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(monitor.routingSnapshot.uplinks == ["v0": [.ipv4, .ipv6], "b0": [.ipv4, .ipv6]])
                #expect(monitor.current.path.ipv4 && monitor.current.interfaces.first { $0.name == "v0" } != nil)
                let backup = Egress.pinned(to: "b0")
                #expect(
                    routes.route(to: IPAddress("198.18.5.5")!, via: backup)
                        == .routable(interface: "b0", source: IPAddress("198.19.1.2")))
                #expect(
                    routes.route(to: IPAddress("2001:db8:2::5")!, via: backup)
                        == .routable(interface: "b0", source: IPAddress("2001:db8:9::2")))
                #expect(
                    routes.route(to: IPAddress("198.18.5.5")!)
                        == .routable(interface: "v0", source: IPAddress(VethLab.address)))

                // The rule gone: no longer an uplink of IPv4, on the very next reading.
                try await lab.monitored.ip("rule", "del", "from", "198.19.1.2", "table", "100")
                let gone = ContinuousClock.now + .seconds(30)
                while monitor.routingSnapshot.uplinks["b0"] != [.ipv6], ContinuousClock.now < gone {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(monitor.routingSnapshot.uplinks["b0"] == [.ipv6])
                #expect(routes.route(to: IPAddress("198.18.5.5")!, via: backup) == .noRoute)
            }
        }

        /// An IPv4 route on an interface without an IPv4 address: the kernel answers the lookup
        /// without a source (a connect would send from 0.0.0.0), so nothing can come back.
        @Test func aRouteWithoutAnAddressOfItsFamilyIsNoRoute() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("route", "add", "default", "dev", "v0")
            }) { lab, monitor, recorder in
                let routes = try lab.monitored.makeRouteChecker(monitor)
                try await recorder.latest("the default route is seen") {
                    $0.interface(named: "v0")?.isDefaultRoute == true
                }
                #expect(monitor.current.path.ipv4 == false)
                #expect(routes.route(to: IPAddress("198.18.5.5")!) == .noRoute)

                try await lab.monitored.ip("address", "add", "\(VethLab.address)/24", "dev", "v0")
                try await recorder.latest("reachable once the interface has an address") { $0.path.ipv4 }
                let outside = IPAddress("198.18.5.5")!
                #expect(routes.route(to: outside) == .routable(interface: "v0", source: IPAddress(VethLab.address)))
                // A pinned egress asks the kernel for a route out of that interface only (RTA_OIF).
                #expect(
                    routes.route(to: outside, via: .pinned(to: "v0"))
                        == .routable(interface: "v0", source: IPAddress(VethLab.address)))
                #expect(routes.route(to: outside, via: .pinned(to: "lo")) == .noRoute)
                #expect(routes.route(to: outside, via: .pinned(to: "nosuch0")) == .noRoute)
            }
        }

        /// Only a tentative IPv6 address (duplicate address detection still running): the kernel
        /// will not use it as a source, so the family does not count until DAD ends.
        @Test func aTentativeSourceAddressIsNoRoute() async throws {
            try await withMonitoredLab(setUp: { lab in
                // DAD that takes minutes: the address stays tentative for the whole test.
                try await lab.monitored.ip("link", "set", "v0", "up")
                _ = try await Shell.run(
                    Shell.ip,
                    ["netns", "exec", lab.monitored.name, "sysctl", "-qw", "net.ipv6.conf.v0.dad_transmits=200"])
                try await lab.monitored.ip("-6", "address", "add", "2001:db8:1::2/64", "dev", "v0")
                try await lab.monitored.ip("-6", "route", "add", "default", "via", "2001:db8:1::1", "dev", "v0")
            }) { lab, monitor, recorder in
                let routes = try lab.monitored.makeRouteChecker(monitor)
                try await recorder.latest("the tentative address and the route are seen") {
                    $0.interface(named: "v0")?.isDefaultRoute == true
                        && $0.interface(named: "v0")?.addresses.contains("2001:db8:1::2/64") == true
                }
                #expect(monitor.current.path.ipv6 == false)
                #expect(routes.route(to: IPAddress("2001:db8:2::5")!) == .noRoute)

                try await lab.monitored.ip("-6", "address", "add", "2001:db8:1::3/64", "dev", "v0", "nodad")
                try await recorder.latest("reachable once a usable address exists") { $0.path.ipv6 }
                let outside = IPAddress("2001:db8:2::5")!
                #expect(routes.route(to: outside) == .routable(interface: "v0", source: IPAddress("2001:db8:1::3")))
                #expect(
                    routes.route(to: outside, via: .pinned(to: "v0"))
                        == .routable(interface: "v0", source: IPAddress("2001:db8:1::3")))
                #expect(routes.route(to: outside, via: .pinned(to: "lo")) == .noRoute)
            }
        }
    }
}
