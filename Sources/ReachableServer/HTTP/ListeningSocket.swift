import Glibc
import Reachable

/// The TCP listening socket, made by reachd rather than libmicrohttpd so that the port is known
/// (port 0 picks a free one) and so shutdown can refuse new connections at once.
struct ListeningSocket: ~Copyable {
    let socket: OwnedDescriptor
    let port: Int

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var descriptor: Int32 { socket.rawValue }

    /// Binds `host:port` (an IPv4 or IPv6 literal) and listens with a deep backlog.
    init(host: String, port: Int) throws {
        guard (0...65535).contains(port) else { throw Failure(description: "port \(port) is not in 0...65535") }
        guard let address = IPAddress(host) else {
            throw Failure(description: "\(host) is not an IPv4 or IPv6 address")
        }

        do throws(SystemError) {
            let socket = OwnedDescriptor(
                taking: try systemCall("socket") {
                    Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                })
            try Self.set(socket, SOL_SOCKET, SO_REUSEADDR, to: 1, "SO_REUSEADDR")
            // Accepted connections inherit this fixed send buffer. Left to autotuning, a client that
            // stops reading /events lets the kernel queue every later event for it, up to tcp_wmem's
            // maximum (4 MiB by default; measured: 1.9 MiB after 3,000 changes) per stream — memory
            // no limit of reachd's bounds. Fixed, a stalled stream costs at most this much in the
            // kernel before reachd's own bound (one pending frame, the newest) takes over.
            try Self.set(socket, SOL_SOCKET, SO_SNDBUF, to: Int32(Self.sendBufferBytes), "SO_SNDBUF")
            if address.isIPv6 {
                // `::` serves IPv4 clients too.
                try Self.set(socket, Int32(IPPROTO_IPV6), IPV6_V6ONLY, to: 0, "IPV6_V6ONLY")
            }
            try address.withSocketAddress(port: UInt16(port)) { (socketAddress, length) throws(SystemError) in
                try systemCall("bind") { bind(socket.rawValue, socketAddress, length) }
            }
            try systemCall("listen") { listen(socket.rawValue, 4096) }
            self.port = try Self.boundPort(socket)
            self.socket = socket
        } catch {
            throw Failure(description: "cannot listen on \(host):\(port): \(String(cString: strerror(error.code)))")
        }
    }

    /// A descriptor of the same socket for libmicrohttpd, which closes its own when it stops:
    /// each descriptor has one owner, and this one stays reachd's.
    func duplicate() throws(SystemError) -> Int32 {
        try systemCall("fcntl F_DUPFD_CLOEXEC") { fcntl(socket.rawValue, F_DUPFD_CLOEXEC, 0) }
    }

    /// The send buffer each connection gets (`SO_SNDBUF`; the kernel doubles it for its own
    /// bookkeeping): Linux's usual starting size, which the largest answers (the page, /metrics)
    /// fit in a few writes.
    static let sendBufferBytes = 16 * 1024

    private static func set(
        _ socket: borrowing OwnedDescriptor, _ level: Int32, _ option: Int32, to value: Int32, _ name: String
    ) throws(SystemError) {
        var value = value
        try systemCall("setsockopt \(name)") {
            setsockopt(socket.rawValue, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// The port the kernel bound (the chosen one when asked for port 0).
    private static func boundPort(_ socket: borrowing OwnedDescriptor) throws(SystemError) -> Int {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var service = [CChar](repeating: 0, count: 16)
        try withUnsafeMutablePointer(to: &bound) { (storage) throws(SystemError) in
            try storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemError) in
                try systemCall("getsockname") { getsockname(socket.rawValue, address, &length) }
                // Not a system call: 0 or an EAI_ code, never errno.
                _ = getnameinfo(address, length, nil, 0, &service, socklen_t(service.count), NI_NUMERICSERV)
            }
        }
        return Int(service.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }) ?? 0
    }
}
