import Glibc
import Reachable
import Synchronization
import Testing

@testable import Probes

/// The book's lock: every change is kept, and a thread waiting for it sleeps while the holder
/// works (a link-down holds it for milliseconds; a spinning waiter took the other core).
@Suite(.serialized) struct SharedBookTests {
    private static func threadCPU() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    @Test func twoThreadsCountingEachKeepEveryChange() throws {
        let book = SharedBook(0)
        let other = try DedicatedThread { for _ in 0..<100_000 { book.withLock { $0 += 1 } } }
        for _ in 0..<100_000 { book.withLock { $0 += 1 } }
        other.join()
        #expect(book.withLock { $0 } == 200_000)
    }

    /// The holder busy for 300 ms: the waiter's own CPU meanwhile stays below 0.5 ms. With Swift's
    /// `Mutex` the waiter spun in the kernel for 1–14 ms of it (11 runs; 0.04–0.11 ms now).
    @Test func aWaiterSleepsWhileTheHolderWorks() throws {
        let book = SharedBook(0)
        let held = Mutex(false)
        let waited = Mutex<Duration?>(nil)
        let holder = try DedicatedThread {
            book.withLock { value in
                held.withLock { $0 = true }
                let end = ContinuousClock.now + .milliseconds(300)
                while ContinuousClock.now < end { value &+= 1 }
            }
        }
        while !held.withLock({ $0 }) { usleep(100) }
        let waiter = try DedicatedThread {
            let before = Self.threadCPU()
            book.withLock { $0 &+= 1 }
            waited.withLock { $0 = Self.threadCPU() - before }
        }
        holder.join()
        waiter.join()
        let cpu = try #require(waited.withLock { $0 })
        #expect(cpu < .microseconds(500), "the waiter used \(cpu) of CPU while the holder held the book 300 ms")
    }
}
