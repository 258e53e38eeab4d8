import CProbeLibraries

/// The files the engine follows for others (a `--targets-file`; the resolver watches resolv.conf
/// itself), as a driver of the engine loop: each watch's inotify descriptor is polled with the
/// others, and its listener runs when the file changed. Engine thread only.
final class FileWatches: EngineDriver {
    private var watches: [(watch: FileWatch, onChange: () -> Void)] = []

    init(settings: EngineSettings) {}

    /// Follows `watch`; `onChange` runs on the engine thread after each change.
    func add(_ watch: FileWatch, onChange: @escaping () -> Void) {
        watches.append((watch, onChange))
    }

    func processTimeouts(now: ContinuousClock.Instant) {}

    func appendWaitDescriptors(to descriptors: inout [curl_waitfd]) {
        for (watch, _) in watches {
            descriptors.append(curl_waitfd(fd: watch.pollDescriptor, events: Int16(CURL_WAIT_POLLIN), revents: 0))
        }
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    func process(_ descriptors: [curl_waitfd]) {
        for descriptor in descriptors where descriptor.revents != 0 {
            for (watch, onChange) in watches where watch.pollDescriptor == descriptor.fd && watch.drain() {
                onChange()
            }
        }
    }

    /// The listeners hold the probing sources, which hold the engine: let both go.
    func shutdown() {
        watches = []
    }
}
