import Foundation
import Reachable
import Testing

extension KernelTests {
    /// How long from a link change to the subscriber's update. Measured and printed, with only a
    /// generous sanity bound: timing on a shared machine is not a contract.
    @Suite struct NamespaceLatency {
        @Test func hundredLinkFlapsReachSubscribersQuickly() async throws {
            try await withMonitoredLab(setUp: { try await $0.configureIPv4() }) { lab, monitor, recorder in
                try await recorder.latest("reachable") { $0.isReachable }
                var down = Samples()
                var up = Samples()
                for _ in 0..<100 {
                    var start = recorder.count
                    var began = ContinuousClock.now
                    let downed = try await lab.monitored.ip("link", "set", "dev", "v0", "down")
                    let lost = try await recorder.first(from: start, "unreachable") { !$0.isReachable }.arrival
                    down.add(fromReturn: lost.at - downed.returnedAt, fromStart: lost.at - began)

                    start = recorder.count
                    began = ContinuousClock.now
                    let restored = try await lab.monitored.batch([
                        "link set dev v0 up", "route replace default via \(VethLab.gateway) dev v0",
                    ])
                    let back = try await recorder.first(from: start, "reachable") { $0.isReachable }.arrival
                    up.add(fromReturn: back.at - restored.returnedAt, fromStart: back.at - began)
                }
                print("latency link down -> unreachable: \(down.summary)")
                print("latency link up + route -> reachable: \(up.summary)")
                #expect(down.worstFromStart < .seconds(20))
                #expect(up.worstFromStart < .seconds(20))
                #expect(monitor.failure == nil)
            }
        }
    }
}

/// Latencies measured two ways: from the `ip` command returning (signed: negative when the
/// update reached the subscriber before the test noticed the process had exited), and from just
/// before the command was started (an upper bound that includes starting `ip`).
struct Samples {
    private var fromReturn: [Duration] = []
    private var fromStart: [Duration] = []

    mutating func add(fromReturn: Duration, fromStart: Duration) {
        self.fromReturn.append(fromReturn)
        self.fromStart.append(fromStart)
    }

    var worstFromStart: Duration { fromStart.max() ?? .zero }

    var summary: String {
        func describe(_ values: [Duration]) -> String {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return "no samples" }
            let median = sorted[sorted.count / 2]
            return String(format: "median %.2f ms, worst %.2f ms", median.milliseconds, sorted.last!.milliseconds)
        }
        let early = fromReturn.filter { $0 < .zero }.count
        return "from command start \(describe(fromStart)); from command return \(describe(fromReturn)) "
            + "(\(early)/\(fromReturn.count) arrived before the exit was noticed)"
    }
}
