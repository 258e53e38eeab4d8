import CEventFD  // sys/eventfd.h, which Glibc's module map leaves out
import Glibc

/// An `eventfd` counter: one thread sleeps in `poll` on it, any other wakes it with `signal()`.
public struct WakeUpEvent: ~Copyable, Sendable {
    private let descriptor: OwnedDescriptor

    public init() throws(SystemError) {
        descriptor = OwnedDescriptor(taking: try systemCall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC)) })
    }

    public var rawValue: Int32 { descriptor.rawValue }

    /// Makes the descriptor readable, for good: it is a stop signal, never reset.
    public func signal() {
        var one: UInt64 = 1
        _ = try? systemCall("write eventfd") { write(descriptor.rawValue, &one, MemoryLayout<UInt64>.size) }
    }
}
