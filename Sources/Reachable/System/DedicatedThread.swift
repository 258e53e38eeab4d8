import CThreads
import Glibc
import Synchronization

/// A dedicated POSIX thread for work that sleeps in `poll` or on a semaphore (the netlink
/// source, the probe engine, the fan-out writers): outside Swift's cooperative pool, which must
/// never block. Joined exactly once; joining from the thread itself (an owner
/// released inside one of its own callbacks) returns at once instead of deadlocking.
package final class DedicatedThread: Sendable {
    private struct State: @unchecked Sendable {
        // Unchecked: pthread_t is an integer on Linux; it is only read under the lock.
        var thread: pthread_t
        var joined = false
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - elsewhere: the thread starts on a core other than the one the caller runs on now
    ///     (where there is another), then may run on any: for work done beside the caller's own
    ///     (`LargeDocuments.runInParts`). Left to the kernel, such a thread was often put on the caller's core and
    ///     ran only once the caller waited for it, the other core idle meanwhile (perf, 2 cores:
    ///     3 link-downs in 8); kept off the caller's core for good, it waited there for the probe
    ///     engine while the caller's core stood idle.
    ///   - startedOn: the core it started on, set before `body` runs (for the tests).
    package init(
        elsewhere: Bool = false, startedOn: UnsafeMutablePointer<Int32>? = nil,
        _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let start: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }
        let created =
            elsewhere
            ? reachd_thread_create_elsewhere(&thread, start, context, startedOn)
            : pthread_create(&thread, nil, start, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError("pthread_create", code: created)
        }
        state = Mutex(State(thread: thread))
    }

    /// Whether the caller runs on this thread.
    package var isCurrent: Bool {
        state.withLock { pthread_equal($0.thread, pthread_self()) != 0 }
    }

    /// Waits until the thread has ended. Idempotent; from the thread itself it returns at once.
    package func join() {
        let thread = state.withLock { state -> pthread_t? in
            guard !state.joined, pthread_equal(state.thread, pthread_self()) == 0 else { return nil }
            state.joined = true
            return state.thread
        }
        if let thread { pthread_join(thread, nil) }
    }

    deinit {
        // Never joined (its owner was released on the thread itself): let it end on its own.
        state.withLock { state in
            if !state.joined { pthread_detach(state.thread) }
        }
    }

    /// The thread's work, carried through pthread_create's context pointer.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
