import Synchronization

/// A source's book, shared by the probe engine's thread (recording results) and the netlink
/// thread (the route gate), behind a lock taken briefly and never across I/O. A class so the
/// closures of both can hold it.
final class SharedBook<Value: Sendable>: Sendable {
    private let book: Mutex<Value>

    init(_ value: sending Value) {
        book = Mutex(value)
    }

    func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> sending Result {
        book.withLock(body)
    }
}
