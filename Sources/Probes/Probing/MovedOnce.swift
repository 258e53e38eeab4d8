/// A value handed to a closure that runs once and takes it whole (moved out, not copied): a route
/// gate's judged entries, given to the edit the monitor runs under its lock, where a captured
/// array could only be read, and so copied entry by entry.
///
/// No lock of its own: nothing but the monitor's may be taken under the monitor's lock. The gate
/// makes it and the monitor runs the edit on the same thread (the netlink thread's batch), and
/// the edit runs once; so the value is never touched by two threads.
final class MovedOnce<Value: Sendable>: @unchecked Sendable {
    private var value: Value?

    init(_ value: sending Value) {
        self.value = value
    }

    /// The value; `nil` once taken.
    func take() -> sending Value? {
        value.take()
    }
}
