import Probes
import ReachableServer
import ServiceLifecycle

/// Reads the web config again when it or a file it names changes. Each file is watched through
/// its directory (`FileWatch`), so the symlink swap by which Kubernetes updates a Secret's files
/// and cert-manager rotates a certificate is seen, as is a write in place or a rename.
///
/// The inotify descriptors are non-blocking and drained every `interval` from a task, rather than
/// by a thread of its own: a rotation is rare, a quarter second of delay changes nothing for it,
/// and no thread sits in `poll` for a file that changes a few times a year. The files watched
/// are those of the configuration in force, taken again after each reload (a new `cert_file`
/// is watched from then on).
struct WebConfigWatchService: Service {
    let reloader: WebConfigReloader
    var interval: Duration = .milliseconds(250)

    func run() async {
        // Ends at graceful shutdown (not only when cancelled): the group waits for it.
        try? await cancelWhenGracefulShutdown { await watch() }
    }

    private func watch() async {
        var watched = reloader.security.watchedFiles
        var watches = Self.watch(watched)
        while (try? await Task.sleep(for: interval)) != nil, !Task.isCancelled {
            // Every watch is drained, so one change is one reload however many files it touched.
            let changed = watches.map { $0.drain() }.contains(true)
            guard changed else { continue }
            reloader.reload(.fileChanged)
            let files = reloader.security.watchedFiles
            if files != watched {
                watched = files
                watches = Self.watch(files)
            }
        }
    }

    /// A watch per file; a file whose directory cannot be watched is left out (its reading at
    /// start succeeded, so this is a directory gone meanwhile: SIGHUP still reloads).
    private static func watch(_ files: [String]) -> [FileWatch] {
        files.compactMap { try? FileWatch(path: $0, completedWritesOnly: true) }
    }
}
