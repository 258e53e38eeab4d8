import Glibc

/// A failed system call: which operation, and the `errno` that explains it. The one error type
/// for every call reachd makes to the kernel, so logs and health documents read the same way.
public struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    public var operation: String
    public var code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// The failure the calling thread's `errno` describes right now.
    public init(_ operation: String) {
        self.init(operation, code: errno)
    }

    public var description: String { "\(operation): \(String(cString: strerror(code))) (errno \(code))" }

    /// Errors that say "not now", not "never": a retry may well succeed.
    public var isTransient: Bool {
        [EINTR, EAGAIN, EBUSY, ETIMEDOUT, ENOBUFS, ENOMEM].contains(code)
    }
}

/// Runs a system call until it is not interrupted by a signal; `-1` becomes a `SystemError`.
///
/// The one place that retries `EINTR`, so no loop elsewhere gets it subtly wrong.
@discardableResult
public func systemCall<Result: BinaryInteger>(
    _ operation: @autoclosure () -> String, _ call: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = errno
        if code != EINTR { throw SystemError(operation(), code: code) }
    }
}
