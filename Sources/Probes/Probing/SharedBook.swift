import Glibc

/// A source's book, shared by the probe engine's thread (recording results) and the netlink
/// thread (the route gate), behind a lock taken briefly and never across I/O. A class so the
/// closures of both can hold it.
///
/// The lock is glibc's plain mutex, which puts a waiter to sleep at once, not Swift's `Mutex`: the
/// route gate holds the book through a link-down's judging, and a thread waiting on
/// a `Mutex` (a priority-inheriting futex) spins in the kernel as long as the holder runs — the
/// engine thread spun so on the one other core, the core the link-down's helper thread was to
/// take half its work on (`SharedParts`; docs/scale.md).
final class SharedBook<Value: Sendable>: @unchecked Sendable {
    /// Allocated once, never moved (a `pthread_mutex_t` must not be).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Read and written only inside `withLock`.
    private var value: Value

    init(_ value: sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value)
    }
}
