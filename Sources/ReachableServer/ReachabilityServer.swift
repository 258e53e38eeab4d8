public import Logging
public import Reachable
public import ServiceLifecycle
import Synchronization

/// reachd's HTTP service: `/status`, `/events` and health, fed by one monitor.
///
/// As a ServiceLifecycle `Service`, `run()` serves until graceful shutdown, which follows
/// the five steps in docs/operations.md ("Shutdown"): readiness fails, new connections are refused, the monitor closes,
/// every stream flushes and ends cleanly, and `run()` returns within the shutdown timeout.
public final class ReachabilityServer: Service, Sendable {
    private let monitor: NetworkMonitor
    private let configuration: ServerConfiguration
    private let logger: Logger
    private let daemon: HTTPDaemon
    private let snapshot: StatusSnapshot
    private let hub: EventHub
    private let changes: ChangeHistory
    private let router: RequestRouter
    private let metrics: ServerMetrics

    /// The port actually listened on (the chosen one when configured as 0).
    public let port: Int

    /// Binds the listening socket at once, so a bad address fails before anything runs; requests
    /// are answered from `run()` on, when the signal handlers are in place (a connection made
    /// earlier waits in the backlog).
    ///
    /// - Parameter metrics: what `/metrics` shows; the server keeps its document-derived values.
    public init(
        monitor: NetworkMonitor, configuration: ServerConfiguration, logger: Logger,
        metrics: ServerMetrics = ServerMetrics()
    ) throws {
        self.monitor = monitor
        self.metrics = metrics
        self.configuration = configuration
        self.logger = logger
        let listening = try ListeningSocket(host: configuration.host, port: configuration.port)
        port = listening.port
        daemon = HTTPDaemon(listening: listening, configuration: configuration)
        let status = monitor.current
        snapshot = StatusSnapshot(status, extraHeaders: CrossOrigin(policy: configuration.allowOrigin).sharedHeaders)
        hub = EventHub(
            initialFrame: snapshot.frame,
            retryMilliseconds: configuration.retryMilliseconds, writers: configuration.threads
        )
        // The document at start is the baseline of `/changes`, not a change (`ChangeHistory`).
        changes = ChangeHistory(capacity: configuration.history, baseline: snapshot.status)
        metrics.update(status)
        metrics.recordSource(monitor.statistics)
        metrics.recordChangesKept(0)
        router = RequestRouter(
            monitor: monitor, snapshot: snapshot, hub: hub, changes: changes, readiness: configuration.readiness,
            isShuttingDown: { [daemon] in daemon.isDraining }, rejections: RejectionLog(logger: logger),
            crossOrigin: configuration.allowOrigin, metrics: metrics,
            hosts: HostCheck(policy: configuration.allowedHosts, hostName: HostCheck.machineHostName()),
            security: configuration.security
        )
    }

    public func run() async throws {
        try hub.startWriters()
        do {
            try daemon.start(handler: router)
        } catch {
            hub.stopWriters()
            throw error
        }
        // The netlink counters follow every batch, even one that changes no document (on the
        // netlink thread: it only sets gauges).
        let batches = monitor.observeNetworkChanges { [weak self] _ in
            guard let self else { return }
            metrics.recordSource(monitor.statistics)
        }
        defer { monitor.removeNetworkChangeObserver(batches) }
        await withTaskGroup(of: Void.self) { group in
            // A child task, so it has ended before `drain` stops the daemon; and `drain` stops the
            // writers it hands each heartbeat to before that: a late resume can never meet the
            // daemon's stop (which aborts on a suspended connection).
            group.addTask { await self.sendHeartbeats() }
            await withGracefulShutdownHandler {
                // Ends when the monitor closes (shutdown) or this task is cancelled.
                for await status in monitor.updates {
                    publish(status)
                }
            } onGracefulShutdown: {
                self.beginShutdown()
            }
            group.cancelAll()
        }
        await drain()
    }

    /// Steps 1–3 of graceful shutdown; synchronous, as ServiceLifecycle's handler must be.
    public func beginShutdown() {
        logger.info("shutting down: readiness fails, new connections are refused")
        daemon.quiesce()
        monitor.close()
    }

    /// Records a status change: encoded once here, shared by `/status` and every stream. The
    /// hub's writer threads write it to the streams; this returns at once.
    private func publish(_ status: ReachabilityStatus) {
        guard status.sequence != snapshot.status.sequence else { return }
        let (frame, replaced) = snapshot.install(status)
        // The previous document's entries are released after the streams have the frame (by the
        // change history, once it has diffed the new one against them, and the log line).
        withExtendedLifetime(replaced) { metrics.eventsSent(hub.publish(frame)) }
        // Diffed here, once per change, against the document published before.
        metrics.recordChangesKept(changes.record(status))
        // After the streams have the frame, off a link-down's way to its event; a scrape that
        // comes first applies the installed document itself (`ServerMetrics.response`), so
        // `/metrics` is never older than `/status`.
        metrics.update(status)
        metrics.recordSource(monitor.statistics)
        // One line per published change (a fleet's: the targets that changed, and counts).
        let metadata = StatusChangeLine.metadata(for: status, after: replaced)
        logger.info("status changed", metadata: metadata)
        // Last: the frame is with the writers, the change recorded, the line logged.
        LargeDocuments.trimAfterPublishing(documentSize: snapshot.json.count)
    }

    /// A keep-alive comment on every idle stream each interval, until cancelled (written by the
    /// hub's writer threads).
    private func sendHeartbeats() async {
        while (try? await Task.sleep(for: .seconds(configuration.heartbeat))) != nil {
            hub.heartbeat()
        }
    }

    /// Steps 4–5: every stream writes what is pending, a jittered `retry:`, and its final chunk;
    /// then the daemon stops. Streams that do not finish by the deadline are cut.
    private func drain() async {
        if !daemon.isDraining { beginShutdown() }
        // Every change published so far is written first; after this no thread but the daemon's
        // touches a stream's connection.
        hub.stopWriters()
        hub.closeAll()
        let deadline = ContinuousClock.now + .seconds(max(0.1, configuration.shutdownTimeout - 0.5))
        await hub.waitUntilEmpty(deadline: deadline)
        let remaining = hub.count
        if remaining > 0 { logger.warning("cutting \(remaining) event streams that did not finish in time") }
        // No request may be left parked when the daemon stops (it aborts on one).
        router.verifier.stop()
        daemon.stop()
        logger.info("stopped")
    }
}
