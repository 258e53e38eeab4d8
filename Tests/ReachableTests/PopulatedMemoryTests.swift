import FoundationEssentials
import Glibc
import Testing

@testable import Reachable

/// A large block about to be written whole is made resident in one call; a small one is left alone.
struct PopulatedMemoryTests {
    /// How many of the `pages` pages from `start` are resident (`mincore`).
    private static func residentPages(_ start: UnsafeMutableRawPointer, pages: Int) -> Int {
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(start, pages * Int(getpagesize()), &vector) == 0 else { return -1 }
        return vector.count { $0 & 1 != 0 }
    }

    /// Fresh anonymous pages, none resident yet; unmapped when `body` returns.
    private static func withFreshPages(_ pages: Int, _ body: (UnsafeMutableRawPointer) -> Void) throws {
        let length = pages * Int(getpagesize())
        let block = try #require(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(block != MAP_FAILED)
        defer { munmap(block, length) }
        #expect(residentPages(block, pages: pages) == 0)
        body(block)
    }

    @Test func aLargeBlockIsResidentAfterwardsUpToWhatItWillHold() throws {
        let page = Int(getpagesize())
        let pages = PopulatedMemory.threshold / page * 2
        try Self.withFreshPages(pages) { block in
            // Three quarters of it: the last quarter is never written, so never populated.
            PopulatedMemory.populate(block, count: pages * page * 3 / 4)
            #expect(Self.residentPages(block, pages: pages) == pages * 3 / 4)
        }
    }

    @Test func aSmallBlockIsLeftToFaultAsItIsWritten() throws {
        let pages = PopulatedMemory.threshold / Int(getpagesize()) / 2
        try Self.withFreshPages(pages) { block in
            PopulatedMemory.populate(block, count: pages * Int(getpagesize()))
            #expect(Self.residentPages(block, pages: pages) == 0)
        }
    }

    /// A document is populated up to the last one's size, unless its entries say it is smaller
    /// now: a targets file cut from 10,000 targets to 10 leaves no megabytes resident unwritten.
    @Test func aDocumentThatShrankIsNotPopulatedToTheLastOnesSize() {
        let now = Date()
        func document(_ count: Int) -> ReachabilityStatus {
            ReachabilityStatus(
                path: .unknown,
                targets: (0..<count).map { TargetStatus(name: "t\($0)", url: "tcp://[::1]:1", since: now) },
                sequence: 1, changedAt: now)
        }
        #expect(document(10_000).jsonSurelyHeld(expectedSize: 3_400_000) == 3_400_000)
        #expect(document(10).jsonSurelyHeld(expectedSize: 3_400_000) < PopulatedMemory.threshold)
        #expect(document(10).jsonSurelyHeld(expectedSize: nil) == 0)
    }

    @Test func anArrayWithPopulatedCapacityIsEmptyWithThatRoom() {
        let list = [UInt64](populatedCapacity: 300_000)
        #expect(list.isEmpty && list.capacity >= 300_000)
        #expect([String](populatedCapacity: 0).isEmpty)
    }
}
