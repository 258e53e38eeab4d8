import Glibc
import Testing

@testable import ReachableServer

/// The listening socket from an IP literal (the one address type's `sockaddr`), and its refusals.
struct ListeningSocketTests {
    @Test(arguments: ["127.0.0.1", "::1", "::"])
    func bindsALiteralOnAFreePortOfItsFamily(host: String) throws {
        let listening = try ListeningSocket(host: host, port: 0)
        #expect(listening.port > 0)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening.descriptor, $0, &length) }
        }
        #expect(ok == 0 && Int32(storage.ss_family) == (host.contains(":") ? AF_INET6 : AF_INET))
    }

    @Test(arguments: [("localhost", "is not an IPv4 or IPv6 address"), ("127.1", "is not an IPv4 or IPv6 address")])
    func aNameOrShorthandIsRefused(host: String, says: String) {
        let error = #expect(throws: ListeningSocket.Failure.self) { _ = try ListeningSocket(host: host, port: 0) }
        #expect(error?.description == "\(host) \(says)")
    }

    @Test func aPortOutOfRangeIsRefused() {
        let error = #expect(throws: ListeningSocket.Failure.self) {
            _ = try ListeningSocket(host: "127.0.0.1", port: 65536)
        }
        #expect(error?.description == "port 65536 is not in 0...65535")
    }
}
