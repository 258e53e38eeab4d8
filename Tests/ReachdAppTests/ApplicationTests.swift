import Foundation
import Glibc
import Logging
import Probes
import Reachable
import ReachableServer
import ServiceLifecycleTestKit
import Testing

@testable import ReachdApp

/// The one builder: what it makes, what a failure releases, and how the graph shuts down — the
/// graph `reachd serve` runs, on port 0.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ApplicationTests {
    static func configuration(port: Int = 0) throws -> AppConfiguration {
        var configuration = AppConfiguration()
        configuration.server?.host = "127.0.0.1"
        configuration.server?.port = port
        configuration.server?.shutdownTimeout = 3
        // A probe of this host's own loopback (the kernel's `local` route): the probe thread runs.
        configuration.probes.targets = try TargetSpec.parseList(["self=host://127.0.0.1"])
        return configuration
    }

    @Test func theServicesAreInDependencyOrder() throws {
        let application = try buildApplication(try Self.configuration(), logger: Logger(label: "test"))
        defer {
            application.probes?.stop()
            application.monitor.close()
        }
        #expect(application.services.count == 3)
        #expect(application.services[0] is MonitorService)
        #expect(application.services[1] is ProbeSourcesService)
        #expect(application.services[2] is ReachabilityServer)
        #expect(application.monitor.current.targets.map(\.name) == ["self"], "listed from the start")
    }

    @Test func withoutAServerNothingListensAndWithoutProbesNoProbeServiceExists() throws {
        var configuration = AppConfiguration()
        configuration.server = nil
        let application = try buildApplication(configuration, logger: Logger(label: "test"))
        defer { application.monitor.close() }
        #expect(application.server == nil && application.probes == nil)
        #expect(application.services.count == 1)
    }

    /// In a process of its own, so no other test's descriptors move the count.
    @Test func aFailedBuildReleasesEverythingItMade() async {
        await #expect(processExitsWith: .success) {
            let occupied = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(occupied, $0, length) + listen(occupied, 1) + getsockname(occupied, $0, &length)
                }
            }
            let port = Int(UInt16(bigEndian: address.sin_port))
            func failedBuild() -> Int32 {
                do {
                    _ = try buildApplication(
                        try ApplicationTests.configuration(port: port), logger: Logger(label: "test"))
                    return 1
                } catch let error as ApplicationError {
                    guard case .server = error.step else { return 2 }
                    return 0
                } catch {
                    return 3
                }
            }
            // Once first: what a process opens once and keeps (the probe libraries loaded, the
            // runtime's own lazily made descriptors) is not the build's to release.
            guard failedBuild() == 0 else { exit(5) }
            let before = ApplicationTests.openDescriptors()
            let failed = failedBuild()
            guard failed == 0 else { exit(failed) }
            // The monitor's netlink sockets and eventfd, the probe engine's descriptors, the
            // route checker's socket: all released before the error was thrown.
            exit(ApplicationTests.openDescriptors() == before ? 0 : 4)
        }
    }

    /// An application built and dropped without running gives its port back.
    @Test func anApplicationThatNeverRanReleasesItsSocket() async {
        await #expect(processExitsWith: .success) {
            func buildAndDrop() -> Int {
                do {
                    let application = try buildApplication(
                        try ApplicationTests.configuration(), logger: Logger(label: "test"))
                    defer {
                        application.probes?.stop()
                        application.monitor.close()
                    }
                    return application.server?.port ?? 0
                } catch {
                    return 0
                }
            }
            guard buildAndDrop() != 0 else { exit(1) }  // once first, as above
            let before = ApplicationTests.openDescriptors()
            guard buildAndDrop() != 0 else { exit(2) }
            exit(ApplicationTests.openDescriptors() == before ? 0 : 3)
        }
    }

    @Test func gracefulShutdownStopsTheWholeGraph() async throws {
        let application = try buildApplication(try Self.configuration(), logger: Logger(label: "test"))
        let port = try #require(application.server?.port)
        try await testGracefulShutdown { trigger in
            let running = Task {
                try await application.run(logger: Logger(label: "test"), shutdownTimeout: 3)
            }
            // The probes run once the group does: the target is decided.
            let deadline = ContinuousClock.now + .seconds(30)
            while application.monitor.current.targets.first?.state != .reachable, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(application.monitor.current.targets.first?.state == .reachable)
            #expect(Self.canConnect(port: port))
            trigger.triggerGracefulShutdown()
            try await running.value
            #expect(application.monitor.isClosed)
            #expect(!Self.canConnect(port: port), "the listening socket is closed")
            let probes = application.probes?.statistics
            try await Task.sleep(for: .milliseconds(50))
            #expect(application.probes?.statistics == probes, "the probe engine stopped")
        }
    }

    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    static func canConnect(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
