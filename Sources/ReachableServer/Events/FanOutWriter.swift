import Dispatch
import Glibc
import Reachable
import Synchronization

/// A thread of its own that writes each change to its share of the `/events` streams.
///
/// A change reaches thousands of sockets, one system call each: milliseconds of blocking work
/// (docs/scale.md). Done on Swift's cooperative pool (one thread per core) it would hold the
/// threads everything else runs on; here the publisher hands over the frame and returns, and
/// the writer wakes once for whatever was handed over since it last looked. Only the newest
/// frame is kept (status is state, not a log), and each stream belongs to one writer for its
/// whole life, so its frames go out in order.
final class FanOutWriter: Sendable {
    /// A stream, and the generation of the frame it started with: it must not get that one again.
    private struct Entry {
        let stream: EventStream
        let startedAt: UInt64
    }

    private struct State {
        var streams: [ObjectIdentifier: Entry] = [:]
        /// The newest frame not written yet.
        var frame: (bytes: [UInt8], generation: UInt64)?
        var isHeartbeatDue = false
        /// Callers of `flush`, released once everything handed over before them is written.
        var flushes: [DispatchSemaphore] = []
        var isStopping = false
        /// A wake-up is on its way: handing over more needs no second one.
        var isWaking = false
        var thread: DedicatedThread?
    }

    /// What one wake-up found to do.
    private struct Work {
        var frame: (bytes: [UInt8], generation: UInt64)?
        var isHeartbeatDue: Bool
        var streams: [Entry]
        var flushes: [DispatchSemaphore]
        var isStopping: Bool
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    /// Starts the thread (the one dedicated-thread type, `DedicatedThread`). It keeps this writer
    /// alive until `stop`.
    func start() throws(SystemError) {
        let thread = try DedicatedThread { [self] in run() }
        state.withLock { $0.thread = thread }
    }

    /// Writes what was handed over, then ends the thread and waits for it. Idempotent.
    func stop() {
        hand { $0.isStopping = true }
        let thread = state.withLock { state in
            defer { state.thread = nil }
            return state.thread
        }
        thread?.join()
    }

    func add(_ stream: EventStream, startedAt generation: UInt64) {
        state.withLock { $0.streams[ObjectIdentifier(stream)] = Entry(stream: stream, startedAt: generation) }
    }

    /// Whether the stream was one of this writer's.
    func remove(_ id: ObjectIdentifier) -> Bool {
        state.withLock { $0.streams.removeValue(forKey: id) != nil }
    }

    var streams: [EventStream] { state.withLock { $0.streams.values.map(\.stream) } }

    /// Hands over a frame; an older one not yet written is dropped.
    func write(_ frame: [UInt8], generation: UInt64) {
        hand { state in
            if generation > state.frame?.generation ?? 0 { state.frame = (frame, generation) }
        }
    }

    func heartbeat() {
        hand { $0.isHeartbeatDue = true }
    }

    /// Returns once everything handed over before the call is written (at once if not running).
    func flush() {
        let done = DispatchSemaphore(value: 0)
        var isRunning = false
        hand { state in
            isRunning = state.thread != nil && !state.isStopping
            if isRunning { state.flushes.append(done) }
        }
        if isRunning { done.wait() }
    }

    /// Changes the state and wakes the thread, once per batch of changes.
    private func hand(_ change: (inout State) -> Void) {
        let wake = state.withLock { state in
            change(&state)
            defer { state.isWaking = true }
            return !state.isWaking
        }
        if wake { wakeUp.signal() }
    }

    private func run() {
        Self.nameThisThread("reachd-fanout")
        while true {
            wakeUp.wait()
            let work = state.withLock { state in
                defer {
                    state.isWaking = false
                    state.frame = nil
                    state.isHeartbeatDue = false
                    state.flushes = []
                }
                let hasWrites = state.frame != nil || state.isHeartbeatDue
                return Work(
                    frame: state.frame, isHeartbeatDue: state.isHeartbeatDue,
                    streams: hasWrites ? Array(state.streams.values) : [], flushes: state.flushes,
                    isStopping: state.isStopping)
            }
            if let frame = work.frame {
                for entry in work.streams where entry.startedAt < frame.generation {
                    entry.stream.offer(frame: frame.bytes)
                }
            }
            if work.isHeartbeatDue {
                for entry in work.streams { entry.stream.heartbeat() }
            }
            for flush in work.flushes { flush.signal() }
            if work.isStopping { return }
        }
    }

    /// Names the calling thread (what `top -H`, `perf --sort comm` and `/proc/PID/task` show).
    /// Glibc's `pthread_setname_np` is not visible to Swift; the kernel file is what it writes.
    private static func nameThisThread(_ name: String) {
        guard
            let file = try? systemCall(
                "open /proc/thread-self/comm",
                {
                    open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
                })
        else { return }
        let descriptor = OwnedDescriptor(taking: file)
        _ = try? systemCall("write thread name") { Glibc.write(descriptor.rawValue, name, name.utf8.count) }
    }
}
