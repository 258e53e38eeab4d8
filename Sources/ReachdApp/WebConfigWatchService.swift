import Glibc
import Probes
import Reachable
import ReachableServer
import ServiceLifecycle

/// Reads the web config again when it or a file it names changes. Each file is watched through
/// every directory on its path (`FileWatch`), so a symlink swapped anywhere along it — the swap by
/// which Kubernetes updates a Secret's files and cert-manager rotates a certificate, a deploy's
/// `current -> v2` — is seen, as is a write in place or a rename.
///
/// A thread of its own sleeps in `poll` on the inotify descriptors and a stop event: nothing
/// wakes reachd while the files stay as they are (it never polls on a timer), and a change is
/// read at once. The files watched are those of the configuration in force, taken again after
/// each reload (a new `cert_file` is watched from then on).
struct WebConfigWatchService: Service {
    let reloader: WebConfigReloader

    func run() async throws {
        let stop = try StopEvent()
        let thread = try DedicatedThread { [reloader] in Self.watch(reloader, until: stop) }
        // Ends at graceful shutdown (not only when cancelled): the group waits for it.
        try? await gracefulShutdown()
        stop.event.signal()
        thread.join()  // at once: the thread's poll returns on the event
    }

    /// The thread: waits for any watched file or the stop event; one change is one reload
    /// however many files it touched (every watch is drained).
    private static func watch(_ reloader: WebConfigReloader, until stop: StopEvent) {
        var watched = reloader.security.watchedFiles
        var watches = watch(watched)
        while true {
            var descriptors = [pollfd(fd: stop.event.rawValue, events: Int16(POLLIN), revents: 0)]
            descriptors += watches.map { pollfd(fd: $0.pollDescriptor, events: Int16(POLLIN), revents: 0) }
            guard (try? systemCall("poll") { poll(&descriptors, nfds_t(descriptors.count), -1) }) != nil else {
                return
            }
            if descriptors[0].revents != 0 { return }
            let changed = watches.map { $0.drain() }.contains(true)
            guard changed else { continue }
            reloader.reload(.fileChanged)
            let files = reloader.security.watchedFiles
            if files != watched {
                watched = files
                watches = watch(files)
            }
        }
    }

    /// A watch per file; a file not one of whose directories can be watched is left out (out of
    /// inotify watches, or no permission to read any: SIGHUP still reloads).
    private static func watch(_ files: [String]) -> [FileWatch] {
        files.compactMap { try? FileWatch(path: $0, completedWritesOnly: true) }
    }

    /// The stop signal shared by the service and its thread.
    private final class StopEvent: Sendable {
        let event: WakeUpEvent
        init() throws(SystemError) { event = try WakeUpEvent() }
    }
}
