import Reachable
import ServiceLifecycle

/// The monitor as a service: it observes from the moment it is made; graceful shutdown (or
/// cancellation) closes it, which finishes every subscriber's stream. The first service, so the
/// last to stop. (The server closes it earlier, as step 3 of its own shutdown; closing is idempotent.)
struct MonitorService: Service {
    let monitor: NetworkMonitor

    func run() async {
        try? await gracefulShutdown()
        monitor.close()
    }
}
