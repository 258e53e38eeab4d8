import Reachable
import Testing

extension KernelTests {
    /// IPv4 announces a route's removal before it unlinks it: a lookup asked at once can still
    /// take the removed route. Remove and restore the way out many times in a row; every removal
    /// must read `unreachable` (before the fix, about one removal in 600 stayed `reachable` for good).
    @Suite struct NamespaceRouteRemoval {
        private static let rounds = 150

        @Test(arguments: [
            ("default", ["default"]),
            // How OpenVPN and wg-quick take the way out without touching the default route.
            ("two halves", ["0.0.0.0/1", "128.0.0.0/1"]),
        ])
        func everyIPv4RemovalIsSeen(name: String, prefixes: [String]) async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("address", "add", "\(VethLab.address)/24", "dev", "v0")
            }) { lab, monitor, recorder in
                try await Self.toggle(prefixes, gateway: VethLab.gateway, family: "-4", lab: lab, recorder: recorder)
                print("\(name): \(Self.rounds) removals, \(monitor.statistics.staleLookups) stale lookups waited out")
            }
        }

        @Test func everyIPv6RemovalIsSeen() async throws {
            try await withMonitoredLab(setUp: { lab in
                try await lab.monitored.ip("link", "set", "v0", "up")
                try await lab.monitored.ip("-6", "address", "add", "2001:db8::2/64", "dev", "v0", "nodad")
            }) { lab, monitor, recorder in
                try await Self.toggle(["default"], gateway: "2001:db8::1", family: "-6", lab: lab, recorder: recorder)
                print("IPv6: \(Self.rounds) removals, \(monitor.statistics.staleLookups) stale lookups waited out")
            }
        }

        private static func toggle(
            _ prefixes: [String], gateway: String, family: String, lab: VethLab, recorder: StatusRecorder
        ) async throws {
            for round in 0..<rounds {
                for prefix in prefixes {
                    try await lab.monitored.ip(family, "route", "replace", prefix, "via", gateway, "dev", "v0")
                }
                try await recorder.latest(timeout: .seconds(30), "reachable in round \(round)") { $0.isReachable }
                for prefix in prefixes {
                    try await lab.monitored.ip(family, "route", "del", prefix)
                }
                try await recorder.latest(timeout: .seconds(30), "unreachable in round \(round)") {
                    $0.state == .unreachable
                }
            }
        }
    }
}
