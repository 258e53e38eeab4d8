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
        #expect(document(900).jsonSurelyHeld(expectedSize: 350_000) == 350_000)
        // Targets written in parts fault their pages in as each part is written, on two threads.
        let inParts = SharedParts.parts(for: 10_000) > 1
        #expect(document(10_000).jsonSurelyHeld(expectedSize: 3_400_000) == (inParts ? 0 : 3_400_000))
        #expect(document(10).jsonSurelyHeld(expectedSize: 3_400_000) < PopulatedMemory.threshold)
        #expect(document(10).jsonSurelyHeld(expectedSize: nil) == 0)
    }

    /// Room touched but not held is given back, whole pages only; less than 64 KiB is kept.
    @Test func theWholePagesOfRoomNotHeldAreGivenBack() throws {
        let page = Int(getpagesize())
        let pages = (64 << 10) / page * 4
        try Self.withFreshPages(pages) { block in
            memset(block, 1, pages * page)
            // From the middle of the second page to the middle of the second-to-last one.
            PopulatedMemory.release(block + page + page / 2, count: (pages - 3) * page)
            #expect(Self.residentPages(block, pages: pages) == 4)
            PopulatedMemory.release(block, count: (64 << 10) - 1)
            #expect(Self.residentPages(block, pages: pages) == 4)
            // What it held is kept; what it gave back reads as zeros (read last: reading maps a page).
            #expect(block.load(fromByteOffset: page + page / 2 - 1, as: UInt8.self) == 1)
            #expect(block.load(fromByteOffset: 2 * page, as: UInt8.self) == 0)
        }
    }

    @Test func anArrayWithPopulatedCapacityIsEmptyWithThatRoom() {
        let list = [UInt64](populatedCapacity: 300_000)
        #expect(list.isEmpty && list.capacity >= 300_000)
        #expect([String](populatedCapacity: 0).isEmpty)
    }
}
