import Reachable
import Synchronization

/// One subscriber: reads `monitor.updates` in a task of its own and keeps every status with
/// the instant it arrived. Tests wait on it with timeouts, never with fixed sleeps.
final class StatusRecorder: Sendable {
    struct Arrival: Sendable {
        var status: ReachabilityStatus
        var at: ContinuousClock.Instant
    }

    struct Timeout: Error, CustomStringConvertible {
        var waitingFor: String
        var latest: ReachabilityStatus?
        var description: String {
            "timed out waiting for \(waitingFor); latest: \(latest.map { String(decoding: $0.jsonBytes(), as: UTF8.self) } ?? "none")"
        }
    }

    private struct Log {
        var arrivals: [Arrival] = []
        var finished = false
    }

    private let log = Mutex(Log())
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    init(_ updates: AsyncStream<ReachabilityStatus>) {
        let task = Task { [self] in
            for await status in updates {
                let now = ContinuousClock.now
                log.withLock { $0.arrivals.append(Arrival(status: status, at: now)) }
            }
            log.withLock { $0.finished = true }
        }
        consumer.withLock { $0 = task }
    }

    /// Stops reading (the subscription ends through its `onTermination`).
    func cancel() {
        consumer.withLock { $0?.cancel() }
    }

    var arrivals: [Arrival] { log.withLock { $0.arrivals } }
    var statuses: [ReachabilityStatus] { arrivals.map(\.status) }
    var count: Int { log.withLock { $0.arrivals.count } }
    var latest: ReachabilityStatus? { log.withLock { $0.arrivals.last?.status } }
    /// Whether the stream finished (the for-await loop ended).
    var isFinished: Bool { log.withLock { $0.finished } }

    /// The first status at or after position `start` that satisfies `predicate`.
    @discardableResult
    func first(
        from start: Int = 0, timeout: Duration = .seconds(30), _ description: String,
        where predicate: (ReachabilityStatus) -> Bool
    ) async throws -> (index: Int, arrival: Arrival) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let arrivals = self.arrivals
            if start < arrivals.count, let index = arrivals[start...].firstIndex(where: { predicate($0.status) }) {
                return (index, arrivals[index])
            }
            guard ContinuousClock.now < deadline else { throw Timeout(waitingFor: description, latest: latest) }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Waits until the latest status satisfies `predicate`.
    @discardableResult
    func latest(
        timeout: Duration = .seconds(30), _ description: String, where predicate: (ReachabilityStatus) -> Bool
    ) async throws -> ReachabilityStatus {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let latest, predicate(latest) { return latest }
            guard ContinuousClock.now < deadline else { throw Timeout(waitingFor: description, latest: latest) }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Waits for the stream to finish; `false` on timeout.
    func waitUntilFinished(timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isFinished {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}

extension ReachabilityStatus {
    var compactJSON: String { String(decoding: jsonBytes(), as: UTF8.self) }

    func interface(named name: String) -> InterfaceStatus? { path.interface(named: name) }
}
