import Synchronization

/// A value handed to a closure that runs once and takes it whole (moved out, not copied): a route
/// gate's judged entries, given to the edit the monitor runs under its lock, where a captured
/// array could only be read, and so copied entry by entry.
final class MovedOnce<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    init(_ value: sending Value) {
        self.value = Mutex(value)
    }

    /// The value; `nil` once taken.
    func take() -> sending Value? {
        value.withLock { $0.take() }
    }
}
