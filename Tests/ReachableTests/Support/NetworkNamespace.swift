import Foundation
import Glibc
import Reachable
import Synchronization

/// A network namespace of this test process's own (`rt-<pid>-<n>`), deleted on `delete()` or
/// at the latest when the object goes away — in every outcome of a test.
final class NetworkNamespace: Sendable {
    let name: String
    private let deleted = Atomic<Bool>(false)

    private static let counter = Atomic<Int>(0)
    private static let staleCleanup = Mutex(false)

    /// Kernel tests need root and `ip`; elsewhere they are skipped, not failed.
    static var isAvailable: Bool {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: Shell.ip)
    }

    init() async throws {
        Self.removeStaleNamespaces()
        name = "rt-\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        try await Shell.ip("netns", "add", name)
    }

    deinit {
        delete()
    }

    /// Idempotent; deleting the namespace also deletes the veth ends inside it.
    func delete() {
        guard !deleted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = try? Shell.runBlocking(Shell.ip, ["netns", "delete", name])
    }

    /// `ip -n NAME ARGUMENTS…`.
    @discardableResult
    func ip(_ arguments: String...) async throws -> Shell.Output {
        try await Shell.run(Shell.ip, ["-n", name] + arguments)
    }

    /// `ip -n NAME -batch FILE` with one command per line: many changes from one process.
    @discardableResult
    func batch(_ commands: [String]) async throws -> Shell.Output {
        let file = NSTemporaryDirectory() + "\(name)-batch-\(UInt32.random(in: 0...UInt32.max)).txt"
        try (commands.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try await Shell.run(Shell.ip, ["-n", name, "-batch", file])
    }

    /// Opens a monitor whose netlink sockets belong to this namespace: they are bound to the
    /// namespace of the thread that creates them, so this thread enters the namespace, creates
    /// the monitor and returns, with no suspension point in between.
    func makeMonitor(_ configuration: MonitorConfiguration = MonitorConfiguration()) throws -> NetworkMonitor {
        try withThreadInside { try NetworkMonitor(configuration: configuration) }
    }

    /// A route checker whose request socket belongs to this namespace (see `makeMonitor`).
    func makeRouteChecker(_ monitor: NetworkMonitor) throws -> RouteChecker {
        try withThreadInside { try RouteChecker(monitor: monitor) }
    }

    private func withThreadInside<T>(_ body: () throws -> T) throws -> T {
        let target = open("/var/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
        guard target >= 0 else { throw SystemError("open /var/run/netns/\(name)") }
        defer { close(target) }
        let original = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)
        guard original >= 0 else { throw SystemError("open /proc/thread-self/ns/net") }
        defer { close(original) }
        guard Self.setns(target, Self.cloneNewNet) == 0 else { throw SystemError("setns \(name)") }
        defer {
            // A pool thread left in a test namespace would poison every later test on it.
            if Self.setns(original, Self.cloneNewNet) != 0 {
                fatalError("cannot return to the original network namespace")
            }
        }
        return try body()
    }

    /// glibc's setns(2) wrapper: Swift's Glibc module does not import it (it needs _GNU_SOURCE).
    private static let setns: @convention(c) (Int32, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "setns") else { fatalError("setns not found in the C library") }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()
    private static let cloneNewNet: Int32 = 0x4000_0000  // CLONE_NEWNET

    /// Namespaces that a crashed earlier run of these tests left behind (its pid is gone).
    private static func removeStaleNamespaces() {
        guard
            staleCleanup.withLock({ done in
                defer { done = true }; return !done
            })
        else { return }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/var/run/netns") else { return }
        for name in names {
            let parts = name.split(separator: "-")
            guard parts.count == 3, parts[0] == "rt", let pid = Int32(parts[1]), pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? Shell.runBlocking(Shell.ip, ["netns", "delete", name])
        }
    }
}

/// Two namespaces joined by a veth pair: `v0` in `monitored` (where the monitor runs) and `v1`
/// in `peer`, up, so `v0` gets carrier. Addresses come from 198.18.0.0/15 and 2001:db8::/32;
/// nothing is ever sent to them.
final class VethLab: Sendable {
    let monitored: NetworkNamespace
    let peer: NetworkNamespace

    static let address = "198.18.0.2"
    static let gateway = "198.18.0.1"

    init() async throws {
        monitored = try await NetworkNamespace()
        peer = try await NetworkNamespace()
        // No IPv6 link-local address on v0: the address lists stay exactly what a test adds.
        try await monitored.ip("link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", peer.name)
        try await monitored.ip("link", "set", "v0", "addrgenmode", "none")
        try await peer.ip("link", "set", "v1", "up")
    }

    func delete() {
        monitored.delete()
        peer.delete()
    }

    /// v0 up with 198.18.0.2/24 and a default route via 198.18.0.1.
    func configureIPv4() async throws {
        try await monitored.ip("link", "set", "v0", "up")
        try await monitored.ip("address", "add", "\(Self.address)/24", "dev", "v0")
        try await monitored.ip("route", "add", "default", "via", Self.gateway, "dev", "v0")
    }
}
