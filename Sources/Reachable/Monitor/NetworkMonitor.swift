import FoundationEssentials
import Synchronization

/// The process's view of network reachability: one kernel observer, any number of subscribers.
///
/// Keeps the rules of NWPathMonitor and Android's ConnectivityManager: late joiners get the
/// current value first, `unknown` is a real state, the first reading is taken synchronously,
/// and `close()` is idempotent and finishes every stream while the last value stays readable.
///
/// A class with a mutex rather than an actor: the netlink thread publishes without awaiting,
/// and `current` is read synchronously on libmicrohttpd's threads.
public final class NetworkMonitor: Sendable {
    /// The process-wide instance, started on first use. Its `close()` does nothing, so no
    /// feature can end everyone else's streams by accident.
    public static let shared = NetworkMonitor(sharedWith: MonitorConfiguration())

    private struct State {
        var latest: ReachabilityStatus
        var subscribers: [UInt64: AsyncStream<ReachabilityStatus>.Continuation] = [:]
        var nextSubscriberID: UInt64 = 0
        var isClosed = false
        var failure: String?
    }

    private let state: Mutex<State>
    private let source: NetlinkSource?
    private let isShared: Bool

    /// A monitor this caller owns and closes. Takes the first full reading before returning.
    ///
    /// - Throws: `NetlinkError` when the kernel's routing sockets cannot be opened or read.
    public init(configuration: MonitorConfiguration = MonitorConfiguration()) throws {
        isShared = false
        state = Mutex(State(latest: Self.unknownStatus()))
        let source = try NetlinkSource(configuration: configuration)
        let path = try source.seed()
        self.source = source
        publish(path)
        startSource()
    }

    /// The shared instance cannot throw: a failure to start is reported through `failure`.
    private init(sharedWith configuration: MonitorConfiguration) {
        isShared = true
        state = Mutex(State(latest: Self.unknownStatus()))
        do {
            let source = try NetlinkSource(configuration: configuration)
            let path = try source.seed()
            self.source = source
            publish(path)
            startSource()
        } catch {
            self.source = nil
            state.withLock { $0.failure = "\(error)" }
        }
    }

    private static func unknownStatus() -> ReachabilityStatus {
        ReachabilityStatus(path: .unknown, sequence: 0, changedAt: Date())
    }

    private func startSource() {
        source?.start(
            publish: { [weak self] path in self?.publish(path) },
            fail: { [weak self] reason in self?.state.withLock { $0.failure = reason } }
        )
    }

    /// The latest status (the last one observed, once closed).
    public var current: ReachabilityStatus { state.withLock { $0.latest } }

    /// Why the monitor stopped observing the kernel for good; `nil` while it works.
    public var failure: String? { state.withLock { $0.failure } }

    /// Whether `close()` has ended this monitor.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// What the netlink source has done so far.
    public var statistics: SourceStatistics { source?.statistics ?? SourceStatistics() }

    /// A new subscription: the current status at once, then every change. A slow consumer finds
    /// only the newest status waiting (status is state, not a log). Finishes when the monitor closes.
    public var updates: AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ReachabilityStatus.self, bufferingPolicy: .bufferingNewest(1)
        )
        let id = state.withLock { state -> UInt64? in
            continuation.yield(state.latest)
            guard !state.isClosed else { return nil }
            state.nextSubscriberID += 1
            state.subscribers[state.nextSubscriberID] = continuation
            return state.nextSubscriberID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many subscriptions are open (for tests and metrics).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Records a derived path; a new status (and sequence) only when it differs from the last.
    private func publish(_ path: NetworkPath) {
        state.withLock { state in
            guard !state.isClosed, state.latest.path != path else { return }
            state.latest = ReachabilityStatus(path: path, sequence: state.latest.sequence + 1, changedAt: Date())
            for continuation in state.subscribers.values {
                continuation.yield(state.latest)
            }
        }
    }

    /// Stops observing the kernel and finishes every subscriber's stream. Idempotent; does
    /// nothing on `shared`.
    public func close() {
        guard !isShared else { return }
        source?.stop()
        let subscribers = state.withLock { state in
            state.isClosed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        // Outside the lock: finishing runs each stream's onTermination, which takes it.
        for continuation in subscribers { continuation.finish() }
    }

    deinit {
        source?.stop()
    }
}
