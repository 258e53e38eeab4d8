import Glibc
import Reachable
import Synchronization
import Testing

@testable import ReachdApp

/// The signalfd, in-process: a thread blocks the signals in itself only and they are sent to that
/// thread alone (`pthread_kill`), so the runner's own threads and signals are left as they are.
@Suite(.timeLimit(.minutes(1)))
struct SignalReaderTests {
    /// What the reading thread shares with the test.
    final class Reading: Sendable {
        let thread = Mutex<pthread_t?>(nil)
        let mayRead = Atomic<Bool>(false)
        let read = Mutex<[Int32]>([])

        func waitFor(_ what: Comment, _ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    Issue.record("not in 10 s: \(what)")
                    return
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    @Test func eachSignalIsReadAsDataIncludingOneSentBeforeTheDescriptorWasMade() async throws {
        let reading = Reading()
        let thread = try DedicatedThread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGUSR1)
            sigaddset(&blocked, SIGUSR2)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            reading.thread.withLock { $0 = pthread_self() }
            while !reading.mayRead.load(ordering: .acquiring) { usleep(1000) }
            guard let reader = try? SignalReader([SIGUSR1, SIGUSR2]) else { return }
            while let signal = try? reader.next() {
                reading.read.withLock { $0.append(signal) }
                if signal == SIGUSR2 { return }
            }
        }
        defer { thread.join() }
        try await reading.waitFor("the thread blocks the signals") { reading.thread.withLock { $0 } != nil }
        let target = try #require(reading.thread.withLock { $0 })

        // Pending while nothing reads (blocked, so no default action): the first read takes it.
        #expect(pthread_kill(target, SIGUSR1) == 0)
        reading.mayRead.store(true, ordering: .releasing)
        try await reading.waitFor("the first SIGUSR1 read") { reading.read.withLock { $0.count } == 1 }
        #expect(pthread_kill(target, SIGUSR1) == 0)
        try await reading.waitFor("the second SIGUSR1 read") { reading.read.withLock { $0.count } == 2 }
        #expect(pthread_kill(target, SIGUSR2) == 0)
        try await reading.waitFor("SIGUSR2 read") { reading.read.withLock { $0.count } == 3 }
        #expect(reading.read.withLock { $0 } == [SIGUSR1, SIGUSR1, SIGUSR2])
    }
}
