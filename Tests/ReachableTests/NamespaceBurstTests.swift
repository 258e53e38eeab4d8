import Foundation
import Reachable
import Testing

extension KernelTests {
    /// Many changes at once: coalescing, and lost events after the receive buffer overflows.
    @Suite struct NamespaceBurst {
        /// The IPv4 addresses of v0 as the kernel lists them (`ip -o -4 address show dev v0`).
        private static func kernelAddresses(_ lab: VethLab) async throws -> Set<String> {
            let output = try await lab.monitored.ip("-o", "-4", "address", "show", "dev", "v0")
            return Set(
                output.text.split(separator: "\n").compactMap { line in
                    let words = line.split(separator: " ")
                    guard let inet = words.firstIndex(of: "inet"), inet + 1 < words.count else { return nil }
                    return String(words[inet + 1])
                })
        }

        private static func ipv4Addresses(_ status: ReachabilityStatus) -> Set<String> {
            Set(status.interface(named: "v0")?.addresses.filter { !$0.contains(":") } ?? [])
        }

        @Test func burstOfFiftyAddressChangesIsCoalesced() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                let before = recorder.count
                let wakeUpsBefore = monitor.statistics.wakeUps
                let added = (1...50).map { "198.18.1.\($0)/32" }
                try await lab.monitored.batch(added.map { "address add \($0) dev v0" })

                let expected = Set(added + ["198.18.0.2/24"])
                let final = try await recorder.latest("all 50 addresses") { Self.ipv4Addresses($0) == expected }
                #expect(final.isReachable)
                #expect(try await Self.kernelAddresses(lab) == expected)
                let events = recorder.count - before
                let wakeUps = monitor.statistics.wakeUps - wakeUpsBefore
                print(
                    "coalescing: 50 address changes -> \(events) events, \(wakeUps) wake-ups; "
                        + "ratio \(String(format: "%.1f", 50.0 / Double(max(events, 1)))) changes per event")
                #expect(events >= 1)
                #expect(events <= 25, "far fewer events than changes")
                #expect(recorder.latest == monitor.current)
            }
        }

        /// A one-byte receive buffer (the kernel's minimum, really) overflows in any burst; the
        /// monitor must notice ENOBUFS, dump everything again and end up right.
        @Test func overflowedReceiveBufferResyncsToTheRightState() async throws {
            var configuration = MonitorConfiguration()
            configuration.receiveBufferSize = 1
            try await withMonitoredLab(configuration, setUp: { try await $0.configureIPv4() }) {
                lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                var expected: Set<String> = ["198.18.0.2/24"]
                var round = 0
                while monitor.statistics.resyncs == 0, round < 5 {
                    round += 1
                    let added = (0..<300).map { "198.18.\(1 + round * 2 + $0 / 250).\($0 % 250 + 1)/32" }
                    expected.formUnion(added)
                    try await lab.monitored.batch(added.map { "address add \($0) dev v0" })
                    try await recorder.latest("every added address after round \(round)") {
                        Self.ipv4Addresses($0) == expected
                    }
                }
                let statistics = monitor.statistics
                print(
                    "overflow: \(round) burst(s) of 300, resyncs \(statistics.resyncs), wake-ups \(statistics.wakeUps), "
                        + "messages \(statistics.messages)")
                #expect(statistics.resyncs > 0)
                #expect(try await Self.kernelAddresses(lab) == expected)
                #expect(monitor.current.isReachable)

                // Still following changes after the resync.
                try await lab.monitored.ip("route", "del", "default")
                try await recorder.latest("unreachable after the resync") { $0.state == .unreachable }
                #expect(monitor.failure == nil)
            }
        }
    }
}
