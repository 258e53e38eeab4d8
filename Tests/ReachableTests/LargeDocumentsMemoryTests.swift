import Foundation
import Glibc
import Testing

@testable import Reachable

/// After a large document, the allocator's free pages go back to the kernel; after a small one
/// nothing is done. Probes trim once a probe interval.
@Suite(.serialized) struct LargeDocumentsMemoryTests {
    /// Under a sanitizer its own allocator serves `malloc`, and glibc's trim has nothing to give.
    static let glibcAllocates = ["__asan_init", "__tsan_init"].allSatisfy { name in
        name.withCString { dlsym(nil, $0) } == nil
    }

    private static func residentKiB() -> Int {
        let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    @Test func onlyALargeDocumentTrims() {
        #expect(!LargeDocuments.trimAfterPublishing(documentSize: LargeDocuments.trimThreshold - 1))
        #expect(LargeDocuments.trimAfterPublishing(documentSize: LargeDocuments.trimThreshold))
    }

    @Test(.enabled(if: glibcAllocates)) func freedSmallBlocksGoBackToTheKernel() throws {
        // 64 MB in small blocks, as a change of 10,000 targets allocates them; one block after
        // them keeps them from being the heap's top (which glibc would give back by itself).
        let blocks = (0..<65_536).map { _ in malloc(1000)! }
        for block in blocks { memset(block, 1, 1000) }
        let after = malloc(1000)
        defer { free(after) }
        for block in blocks { free(block) }
        let freed = Self.residentKiB()
        LargeDocuments.trimAfterPublishing(documentSize: LargeDocuments.trimThreshold)
        let trimmed = Self.residentKiB()
        #expect(freed - trimmed > 32_000, "resident \(freed) KiB freed, \(trimmed) KiB trimmed")
    }

    // Probes trim once a probe interval (at least 10 s), however few the targets. In this
    // serialized suite: a trim while `freedSmallBlocksGoBackToTheKernel` measures would fail it.
    @Test func probesTrimOnceAPeriod() {
        let trim = LargeDocuments.PeriodicTrim(period: .seconds(30))
        let start = ContinuousClock.now  // after the trim was made: its period counts from before
        #expect(!trim.afterProbe(now: start + .seconds(29)), "not a period yet")
        #expect(trim.afterProbe(now: start + .seconds(31)))
        #expect(!trim.afterProbe(now: start + .seconds(60)), "a period from the last trim")
        #expect(trim.afterProbe(now: start + .seconds(62)))
    }

    @Test func aShortIntervalStillTrimsAtMostEveryTenSeconds() {
        let trim = LargeDocuments.PeriodicTrim(period: .seconds(1))
        let start = ContinuousClock.now
        #expect(!trim.afterProbe(now: start + .seconds(9)))
        #expect(trim.afterProbe(now: start + .seconds(10)))
    }
}
