import Foundation
import Glibc
import Testing

@testable import ReachableServer

/// Who closes the listening socket: reachd closes its own descriptor at `stop`, libmicrohttpd
/// the one it was given (when quiescing hands it back, or when it stops), never both. A
/// descriptor number can be reused by another test at once, so "closed" means the number no
/// longer refers to the same socket (its inode changed or it is gone); and no descriptor of
/// this process may refer to the socket after `stop`.
@Suite(.serialized)
struct HTTPDaemonTests {
    /// Answers nothing useful: these tests never send a request.
    struct Unused: HTTPHandler {
        func respond(to request: HTTPRequest, on connection: any StreamConnection) -> HTTPResponse {
            Problem.notFound.response
        }
        func streamEnded(_ stream: any BodyStream) {}
    }

    private func makeDaemon() throws -> (HTTPDaemon, descriptor: Int32, inode: UInt) {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let listening = try ListeningSocket(host: configuration.host, port: configuration.port)
        let descriptor = listening.descriptor
        let inode = try #require(Self.inode(of: descriptor))
        return (HTTPDaemon(listening: listening, configuration: configuration), descriptor, inode)
    }

    private static func inode(of descriptor: Int32) -> UInt? {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? UInt(info.st_ino) : nil
    }

    /// How many of this process's descriptors refer to the socket `inode`.
    private static func descriptors(of inode: UInt) -> Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let descriptor = Int32(name), Self.inode(of: descriptor) == inode { count += 1 }
        }
        return count
    }

    @Test func aDaemonNeverStartedClosesItsSocketWhenStopped() throws {
        let (daemon, descriptor, inode) = try makeDaemon()
        daemon.stop()
        #expect(Self.inode(of: descriptor) != inode)
        #expect(Self.descriptors(of: inode) == 0)
    }

    @Test func aRunningDaemonHoldsASecondDescriptorOfItsOwn() throws {
        let (daemon, _, inode) = try makeDaemon()
        try daemon.start(handler: Unused())
        #expect(Self.descriptors(of: inode) == 2, "reachd's and libmicrohttpd's")
        daemon.stop()
        #expect(Self.descriptors(of: inode) == 0)
    }

    @Test func aQuiescedDaemonGivesUpItsDescriptorAndReachdClosesItsOwnAtTheStop() throws {
        let (daemon, descriptor, inode) = try makeDaemon()
        try daemon.start(handler: Unused())
        daemon.quiesce()
        #expect(Self.inode(of: descriptor) == inode, "open until the stop, refusing connections")
        #expect(Self.descriptors(of: inode) == 1, "libmicrohttpd's closed when it handed it back")
        daemon.stop()
        #expect(Self.inode(of: descriptor) != inode)
        #expect(Self.descriptors(of: inode) == 0)
    }

    @Test func aDaemonStoppedWhileRunningClosesBothDescriptors() throws {
        let (daemon, descriptor, inode) = try makeDaemon()
        try daemon.start(handler: Unused())
        daemon.stop()
        #expect(Self.inode(of: descriptor) != inode)
        #expect(Self.descriptors(of: inode) == 0)
        daemon.stop()
    }

    @Test func aQuiescedDaemonRefusesNewConnectionsAtOnce() throws {
        let (daemon, port) = try HTTPDaemon.onLoopback()
        try daemon.start(handler: Unused())
        defer { daemon.stop() }
        #expect(Self.connect(port: port) == 0)
        daemon.quiesce()
        #expect(Self.connect(port: port) == ECONNREFUSED)
    }

    /// 0 when a TCP connection to 127.0.0.1:`port` is accepted, else the errno.
    private static func connect(port: Int) -> Int32 {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0 ? 0 : errno
    }
}
