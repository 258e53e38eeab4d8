import Reachable
import Testing

extension KernelTests {
    /// The kernel removes routes without `RTM_DELROUTE` when a link is set down or an address is
    /// removed; reachd re-reads the routes of that interface only then, and only of it.
    @Suite struct NamespaceRouteFlush {
        @Test func removingTheDefaultRoutesSourceAddressDropsItFromTheTable() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("address", "add", "198.18.0.2/24", "dev", "v0")
                try await lab.monitored.ip("address", "add", "198.18.0.3/24", "dev", "v0")
                try await lab.monitored.ip(
                    "route", "add", "default", "via", VethLab.gateway, "dev", "v0", "src", "198.18.0.3")
            }) { lab, monitor, recorder in
                try await recorder.latest("reachable with a default route") {
                    $0.isReachable && $0.interface(named: "v0")?.isDefaultRoute == true
                }
                try await lab.monitored.ip("address", "del", "198.18.0.3/24", "dev", "v0")
                let after = try await recorder.latest("the default route went with its source address") {
                    $0.interface(named: "v0")?.isDefaultRoute == false
                }
                #expect(after.state == .unreachable, "no default route is left")
                #expect(after.interface(named: "v0")?.addresses == ["198.18.0.2/24"])
            }
        }

        @Test func removingTheLastAddressFlushesTheInterfacesRoutes() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") {
                    $0.isReachable && $0.interface(named: "v0")?.isDefaultRoute == true
                }
                let start = monitor.statistics.routeRereads
                try await lab.monitored.ip("address", "del", "\(VethLab.address)/24", "dev", "v0")
                let after = try await recorder.latest("the default route went with the last address") {
                    $0.interface(named: "v0")?.isDefaultRoute == false
                }
                #expect(after.state == .unreachable)
                #expect(monitor.statistics.routeRereads == start + 1)
            }
        }

        @Test func onlyLinkDownAndLastAddressRemovalReReadRoutes() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                let start = monitor.statistics.routeRereads
                try await lab.monitored.ip("address", "add", "198.18.0.9/24", "dev", "v0")
                try await recorder.latest("address added") {
                    $0.interface(named: "v0")?.addresses.contains("198.18.0.9/24") == true
                }
                try await lab.monitored.ip("route", "add", "198.18.50.0/24", "via", VethLab.gateway)
                try await monitor.waitForCurrent("route noticed") { _ in monitor.statistics.wakeUps >= 2 }
                #expect(monitor.statistics.routeRereads == start, "additions cannot flush anything")

                try await lab.monitored.ip("address", "del", "198.18.0.9/24", "dev", "v0")
                try await recorder.latest("address removed") {
                    $0.interface(named: "v0")?.addresses.contains("198.18.0.9/24") == false
                }
                #expect(monitor.statistics.routeRereads == start, "a secondary address takes no other route")

                try await lab.monitored.ip("link", "set", "v0", "down")
                try await recorder.latest("link down flushed the default route") {
                    $0.state == .unreachable && $0.interface(named: "v0")?.isDefaultRoute == false
                }
                #expect(monitor.statistics.routeRereads >= start + 1)
            }
        }
    }
}
