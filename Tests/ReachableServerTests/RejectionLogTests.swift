import Logging
import Synchronization
import Testing

@testable import ReachableServer

struct RejectionLogTests {
    /// Collects what was logged, for assertions.
    final class Recorder: LogHandler, @unchecked Sendable {
        // Unchecked: `lines` is only touched under its own mutex.
        let lines = Mutex<[(Logger.Level, Logger.Metadata)]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.withLock { $0.append((event.level, event.metadata ?? [:])) }
        }
    }

    @Test func aFloodOfBadRequestsLogsOneWarningAndCountsTheRest() throws {
        let recorder = Recorder()
        let log = RejectionLog(logger: Logger(label: "test") { _ in recorder }, interval: .seconds(3600))
        for _ in 0..<1000 {
            log.rejected(HTTPRequest(method: "POST", path: "/status", version: "HTTP/1.1"), status: 405)
        }
        let lines = recorder.lines.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.0 == .warning)
        #expect(lines.first?.1["status"] == .stringConvertible(405), "a number, typed in JSON logs")
    }

    @Test func theNextWarningAfterTheIntervalSaysHowManyWereQuiet() throws {
        let recorder = Recorder()
        let log = RejectionLog(logger: Logger(label: "test") { _ in recorder }, interval: .zero)
        log.rejected(HTTPRequest(method: "FOO", path: "/", version: "HTTP/1.1"), status: 405)
        log.rejected(HTTPRequest(method: "FOO", path: "/", version: "HTTP/1.1"), status: 405)
        let lines = recorder.lines.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines.last?.1["alsoRejectedSinceLastWarning"] == "0")
    }

    @Test func whatAClientSentIsMadePrintableAndShort() {
        #expect(RejectionLog.printable("G\u{0}T\n\u{1b}[31m") == "G?T??[31m")
        #expect(RejectionLog.printable("/é") == "/?")
        let long = String(repeating: "a", count: 100)
        #expect(RejectionLog.printable(long) == String(repeating: "a", count: 64) + "…")
    }
}
