import Reachable
import Testing

@testable import Probes

/// The book's lock: every change of two threads is kept.
@Suite struct SharedBookTests {
    @Test func twoThreadsCountingEachKeepEveryChange() throws {
        let book = SharedBook(0)
        let other = try DedicatedThread { for _ in 0..<100_000 { book.withLock { $0 += 1 } } }
        for _ in 0..<100_000 { book.withLock { $0 += 1 } }
        other.join()
        #expect(book.withLock { $0 } == 200_000)
    }
}
