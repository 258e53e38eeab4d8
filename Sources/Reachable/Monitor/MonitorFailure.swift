/// Why a monitor cannot observe the kernel: after trying to recover, or from the start.
/// A value with its cause, for health documents and logs alike.
public struct MonitorFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The routing sockets could not be opened or read when the monitor started.
        case cannotStart
        /// The kernel connection broke and reopening it failed `attempts` times in a row.
        case connectionLost(attempts: Int)
    }

    public var kind: Kind
    /// The last system call that failed.
    public var cause: SystemError

    public init(_ kind: Kind, cause: SystemError) {
        self.kind = kind
        self.cause = cause
    }

    public var description: String {
        switch kind {
        case .cannotStart:
            "cannot observe the kernel's routing state: \(cause)"
        case .connectionLost(let attempts):
            "lost the kernel connection; \(attempts) attempts to reopen it failed, the last with \(cause)"
        }
    }
}
