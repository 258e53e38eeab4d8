import Glibc
import Reachable
import Synchronization
import Testing

@testable import ReachdApp

/// What a signal does once `ProcessSignals` reads it, each in a process of its own (a default
/// action ends it). The signals are blocked in one thread only, which reads them as reachd's main
/// thread does, and are sent to it alone: the runner's other threads do not block them.
@Suite(.timeLimit(.minutes(1)))
struct ProcessSignalsTests {
    /// The reading thread, once the signals are blocked in it.
    final class Reader: Sendable {
        let thread = Mutex<pthread_t?>(nil)
    }

    /// Starts the reading thread (never joined: it reads until the process ends); returns it once
    /// the signals are blocked in it.
    static func startReader() async throws -> pthread_t {
        let reader = Reader()
        _ = try DedicatedThread {
            do {
                let signals = try ProcessSignals()
                reader.thread.withLock { $0 = pthread_self() }
                signals.readForever()
            } catch {
                exit(90)
            }
        }
        while true {
            if let thread = reader.thread.withLock({ $0 }) { return thread }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test func whileTheCommandLineIsReadSignalsAreHeldNotActedOn() async {
        await #expect(processExitsWith: .success) {
            let reader = try await ProcessSignalsTests.startReader()
            for signal in [SIGINT, SIGTERM, SIGHUP] { pthread_kill(reader, signal) }
            try await Task.sleep(for: .milliseconds(300))
            exit(0)
        }
    }

    @Test func heldSIGINTLeftToItsDefaultActionEndsTheProcess() async {
        await #expect(processExitsWith: .signal(SIGINT)) {
            let reader = try await ProcessSignalsTests.startReader()
            pthread_kill(reader, SIGINT)
            try await Task.sleep(for: .milliseconds(100))
            ProcessSignals.leaveToDefaultActions()
            try await Task.sleep(for: .seconds(10))
            exit(3)
        }
    }

    @Test func afterTheDecisionSIGTERMTakesItsDefaultActionAndEndsTheProcess() async {
        await #expect(processExitsWith: .signal(SIGTERM)) {
            let reader = try await ProcessSignalsTests.startReader()
            ProcessSignals.leaveToDefaultActions()
            pthread_kill(reader, SIGTERM)
            try await Task.sleep(for: .seconds(10))
            exit(3)
        }
    }

    @Test func SIGHUPIgnoredFromTheStartStaysIgnored() async {
        await #expect(processExitsWith: .success) {
            signal(SIGHUP, SIG_IGN)
            let reader = try await ProcessSignalsTests.startReader()
            pthread_kill(reader, SIGHUP)
            ProcessSignals.leaveToDefaultActions()
            pthread_kill(reader, SIGHUP)
            try await Task.sleep(for: .milliseconds(300))
            exit(0)
        }
    }

    @Test func claimedSIGHUPIsAReloadEachTimeAndSIGTERMAndSIGINTShutdownsHeldOnesIncluded() async {
        await #expect(processExitsWith: .success) {
            let reader = try await ProcessSignalsTests.startReader()
            pthread_kill(reader, SIGTERM)
            try await Task.sleep(for: .milliseconds(100))
            let requests = ProcessSignals.claim()
            var shutdowns = requests.shutdowns.makeAsyncIterator()
            guard await shutdowns.next() != nil else { exit(4) }
            var reloads = requests.reloads.makeAsyncIterator()
            for _ in 0..<3 {
                pthread_kill(reader, SIGHUP)
                guard await reloads.next() != nil else { exit(5) }
            }
            for signal in [SIGTERM, SIGINT] {
                pthread_kill(reader, signal)
                guard await shutdowns.next() != nil else { exit(6) }
            }
            exit(ProcessSignals.claim() === requests ? 0 : 7)
        }
    }
}
