import Foundation
import Glibc
import Logging
import Probes
import Reachable
import Synchronization
import Testing

@testable import ReachdApp

/// The requests SIGTERM, SIGINT and SIGHUP become, fed to the application's group in-process.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ControlRequestsTests {
    /// Every message logged, with its metadata.
    final class Recorder: LogHandler, @unchecked Sendable {
        // Unchecked: `lines` is only touched under its own mutex.
        let lines = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.withLock { $0.append(("\(event.message)", event.metadata ?? [:])) }
        }

        func count(_ message: String) -> Int {
            lines.withLock { $0.count { $0.message == message } }
        }

        var logger: Logger { Logger(label: "test") { _ in self } }
    }

    @Test func aShutdownAskedForWhileStartingIsKeptAndAnsweredOnceTheGroupRuns() async throws {
        let recorder = Recorder()
        let application = try buildApplication(try ApplicationTests.configuration(), logger: recorder.logger)
        let requests = ControlRequests()
        requests.shutDown()
        try await application.run(logger: recorder.logger, shutdownTimeout: 3, requests: requests)
        #expect(application.monitor.isClosed)
        #expect(recorder.count("shutting down: readiness fails, new connections are refused") == 1)
        #expect(recorder.count("stopped") == 1, "the server drained and stopped")
    }

    @Test func eachReloadReadsTheTargetsFileAgainAndTheGroupRunsOnUntilAShutdown() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-targets-\(getpid())").path
        try "self=host://127.0.0.1\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        var configuration = AppConfiguration()
        configuration.server = nil
        let file = TargetsFile(path: path, flagTargets: [])
        configuration.probes.targets = try file.read()
        configuration.probes.targetsFile = file
        let recorder = Recorder()
        let application = try buildApplication(configuration, logger: recorder.logger)
        let requests = ControlRequests()
        let running = Task {
            try await application.run(logger: recorder.logger, shutdownTimeout: 3, requests: requests)
        }
        for reload in 1...3 {
            requests.reload()
            let deadline = ContinuousClock.now + .seconds(10)
            while recorder.count("targets file applied") < reload, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(recorder.count("targets file applied") == reload)
            #expect(!application.monitor.isClosed, "a reload never ends the group")
        }
        let causes = recorder.lines.withLock {
            $0.filter { $0.message == "targets file applied" }.map(\.metadata["cause"])
        }
        #expect(causes == Array(repeating: "signal", count: 3))
        requests.shutDown()
        try await running.value
        #expect(application.monitor.isClosed)
    }
}
