import Glibc

/// A failed system call on a netlink socket, with the errno that explains it.
public struct NetlinkError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var code: Int32

    public init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "\(operation): \(String(cString: strerror(code))) (errno \(code))" }
}
