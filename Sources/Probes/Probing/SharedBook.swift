import Synchronization

/// A source's book, shared by the probe engine's thread (recording results) and the netlink
/// thread (the route gate), behind a mutex taken briefly and never across I/O. A class so the
/// closures of both can hold it (a `Mutex` itself cannot be captured).
final class SharedBook<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) {
        mutex = Mutex(value)
    }

    func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> sending Result {
        mutex.withLock(body)
    }
}
