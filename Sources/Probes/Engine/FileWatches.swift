import Reachable

/// The files the engine follows for others (a `--targets-file`; the resolver watches resolv.conf
/// itself), as a driver of the engine loop: each watch's inotify descriptor is on the loop, and
/// its listener runs when the file changed. Engine thread only.
final class FileWatches: EngineDriver, DescriptorOwner {
    private let loop: EventLoop
    private var watches: [Int32: (watch: FileWatch, onChange: () -> Void)] = [:]

    init(settings: EngineSettings) {
        loop = settings.loop
    }

    /// Follows `watch`; `onChange` runs on the engine thread after each change.
    func add(_ watch: FileWatch, onChange: @escaping () -> Void) {
        watches[watch.pollDescriptor] = (watch, onChange)
        loop.watch(watch.pollDescriptor, reading: true, writing: false, for: self)
    }

    func ready(_ descriptor: Int32, readable: Bool, writable: Bool) {
        if let (watch, onChange) = watches[descriptor], watch.drain() { onChange() }
    }

    func processTimeouts(now: ContinuousClock.Instant) {}

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    /// The listeners hold the probing sources, which hold the engine: let both go.
    func shutdown() {
        for descriptor in watches.keys { loop.unwatch(descriptor, for: self) }
        watches = [:]
    }
}
