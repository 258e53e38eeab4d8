import Glibc

/// A file descriptor with exactly one owner, closed when the owner goes away (as swift-system's
/// `FileDescriptor` users wrap it): it cannot be copied, so it cannot be closed twice.
public struct OwnedDescriptor: ~Copyable, Sendable {
    public let rawValue: Int32

    public init(taking rawValue: Int32) {
        self.rawValue = rawValue
    }

    deinit {
        close(rawValue)
    }
}
