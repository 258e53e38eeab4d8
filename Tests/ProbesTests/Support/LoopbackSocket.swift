import Foundation
import Reachable

/// Sockets bound to loopback addresses for the test servers: nothing a test starts listens anywhere
/// else, and nothing is ever sent off the machine.
enum LoopbackSocket {
    static let stream = Int32(SOCK_STREAM.rawValue)
    static let datagram = Int32(SOCK_DGRAM.rawValue)

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ what: String) { description = "\(what): \(String(cString: strerror(errno)))" }
    }

    /// A socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`) bound to `address:port` (0: any free port).
    static func bound(_ type: Int32, address: String, port: UInt16 = 0) throws -> Int32 {
        guard let ip = IPAddress(address) else { throw Failure("\(address) is not an IP address") }
        let descriptor = socket(ip.family, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("socket") }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = ip.withSocketAddress(port: port) { bind(descriptor, $0, $1) }
        guard result == 0 else {
            let failure = Failure("bind \(address):\(port)")
            close(descriptor)
            throw failure
        }
        return descriptor
    }

    /// The port a bound socket got.
    static func port(of descriptor: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// A port free for both UDP and TCP on every one of `addresses` right now (a DNS server needs both).
    static func freePort(on addresses: [String]) throws -> UInt16 {
        for _ in 0..<50 {
            let probe = try bound(datagram, address: addresses[0])
            let port = port(of: probe)
            close(probe)
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            var free = true
            for address in addresses {
                for type in [datagram, stream] {
                    guard let descriptor = try? bound(type, address: address, port: port) else {
                        free = false
                        break
                    }
                    held.append(descriptor)
                }
            }
            if free { return port }
        }
        throw Failure("no free port")
    }

    /// Whether `::1` can be bound (IPv6 may be off in a container).
    static let ipv6Available: Bool = {
        guard let descriptor = try? bound(stream, address: "::1") else { return false }
        close(descriptor)
        return true
    }()

    /// Connects to `address:port` over TCP; whether it was accepted (for readiness checks).
    static func canConnect(address: String, port: UInt16) -> Bool {
        guard let ip = IPAddress(address) else { return false }
        let descriptor = socket(ip.family, stream | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return ip.withSocketAddress(port: port) { connect(descriptor, $0, $1) } == 0
    }
}
