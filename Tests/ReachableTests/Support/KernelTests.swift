import Reachable
import Testing

/// Every test that changes real kernel state (in namespaces of its own), one at a time. Needs
/// root and `ip`; skipped elsewhere. Nested suites in other files inherit these traits.
@Suite(
    .serialized,
    .enabled(if: NetworkNamespace.isAvailable, "needs root and iproute2 for network namespaces"),
    .timeLimit(.minutes(3))
)
struct KernelTests {}

/// A veth lab, a monitor inside its first namespace and one subscriber; all three are torn
/// down whatever the test's outcome (namespaces last).
func withMonitoredLab(
    _ configuration: MonitorConfiguration = MonitorConfiguration(),
    setUp: (VethLab) async throws -> Void = { _ in },
    _ body: (VethLab, NetworkMonitor, StatusRecorder) async throws -> Void
) async throws {
    let lab = try await VethLab()
    defer { lab.delete() }
    try await setUp(lab)
    let monitor = try lab.monitored.makeMonitor(configuration)
    defer { monitor.close() }
    let recorder = StatusRecorder(monitor.updates)
    defer { recorder.cancel() }
    try await body(lab, monitor, recorder)
}

extension NetworkMonitor {
    /// Waits until `current` satisfies `predicate` (the monitor's own view, not a subscriber's).
    @discardableResult
    func waitForCurrent(
        timeout: Duration = .seconds(30), _ description: String, where predicate: (ReachabilityStatus) -> Bool
    ) async throws -> ReachabilityStatus {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = current
            if predicate(status) { return status }
            guard ContinuousClock.now < deadline else {
                throw StatusRecorder.Timeout(waitingFor: description, latest: status)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
