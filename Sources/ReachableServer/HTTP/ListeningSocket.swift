import Glibc

/// The TCP listening socket, made by reachd rather than libmicrohttpd so that the port is known
/// (port 0 picks a free one) and so shutdown can refuse new connections at once.
struct ListeningSocket: Sendable {
    let descriptor: Int32
    let port: Int

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Binds `host:port` (an IPv4 or IPv6 literal) and listens with a deep backlog.
    init(host: String, port: Int) throws {
        guard (0...65535).contains(port) else { throw Failure(description: "port \(port) is not in 0...65535") }
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found?.pointee else {
            throw Failure(description: "\(host) is not an IPv4 or IPv6 address")
        }
        defer { freeaddrinfo(found) }

        let descriptor = socket(address.ai_family, address.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        // Accepted connections inherit this fixed send buffer. Left to autotuning, a client that
        // stops reading /events lets the kernel queue every later event for it, up to tcp_wmem's
        // maximum (4 MiB by default; measured: 1.9 MiB after 3,000 changes) per stream — memory
        // no limit of reachd's bounds. Fixed, a stalled stream costs at most this much in the
        // kernel before reachd's own bound (one pending frame, the newest) takes over.
        var sendBuffer = Int32(Self.sendBufferBytes)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        if address.ai_family == AF_INET6 {
            // `::` serves IPv4 clients too.
            var zero: Int32 = 0
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(descriptor, address.ai_addr, address.ai_addrlen) == 0, listen(descriptor, 4096) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot listen on \(host):\(port): \(reason)")
        }
        self.descriptor = descriptor
        self.port = Self.boundPort(descriptor)
    }

    /// The send buffer each connection gets (`SO_SNDBUF`; the kernel doubles it for its own
    /// bookkeeping): Linux's usual starting size, which the largest answers (the page, /metrics)
    /// fit in a few writes.
    static let sendBufferBytes = 16 * 1024

    /// The port the kernel bound (the chosen one when asked for port 0).
    private static func boundPort(_ descriptor: Int32) -> Int {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var service = [CChar](repeating: 0, count: 16)
        return withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                guard getsockname(descriptor, address, &length) == 0,
                    getnameinfo(address, length, nil, 0, &service, socklen_t(service.count), NI_NUMERICSERV) == 0
                else { return 0 }
                return Int(String(cString: service)) ?? 0
            }
        }
    }
}
