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
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                address.pointee.sin_addr = v4
            }
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                address.pointee.sin6_addr = v6
            }
        } else {
            throw Failure(description: "--host must be an IPv4 or IPv6 address, not \(host)")
        }
        guard (0...65535).contains(port) else { throw Failure(description: "--port must be 0...65535") }

        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // `::` serves IPv4 clients too.
            var zero: Int32 = 0
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 4096) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot listen on \(host):\(port): \(reason)")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        let portBytes = withUnsafeBytes(of: &actual) { raw in
            family == AF_INET
                ? raw.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)
                : raw.load(fromByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!, as: UInt16.self)
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: portBytes))
    }
}
