import Glibc

/// Makes the pages of a large block that is about to be written whole resident in one call
/// (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14), instead of one page fault per 4 KiB as the writing
/// reaches them. A block of 128 KiB or more is mapped afresh for every allocation (`MemoryPolicy`'s
/// fixed mmap threshold), and a link-down at 10,000 targets writes two on its way to the event:
/// the judged entries (2.4 MB) and the frame (3.8 MB). A fault cost about 1.9 µs here; the frame's
/// encoding took 7.4 ms with them and 6.6 ms populated first (5.6 in memory already resident).
///
/// Only what the block will hold is populated: a page the writing never reaches stays unmapped,
/// as it would without this. On an older kernel the call fails and the pages fault as before.
package enum PopulatedMemory {
    /// Blocks smaller than this are left alone: they come from the allocator's arena, mostly
    /// resident already, and a system call would cost more than their faults.
    package static let threshold = 1 << 20

    /// Populates the whole pages of `count` bytes from `start`.
    package static func populate(_ start: UnsafeMutableRawPointer, count: Int) {
        guard count >= threshold else { return }
        let page = Int(getpagesize())
        let first = (Int(bitPattern: start) + page - 1) & ~(page - 1)
        let end = (Int(bitPattern: start) + count) & ~(page - 1)
        guard end > first, let aligned = UnsafeMutableRawPointer(bitPattern: first) else { return }
        _ = madvise(aligned, end - first, MADV_POPULATE_WRITE)
    }

    /// Gives back the whole pages of `count` bytes from `start` that will not be read again
    /// before they are written (`madvise(MADV_DONTNEED)`: they read as zeros then): room a block
    /// touched but does not hold (`JSONWriter.arrayInParts`' regions): a call per document, so
    /// worth it from 64 KiB.
    package static func release(_ start: UnsafeMutableRawPointer, count: Int) {
        guard count >= 64 << 10 else { return }
        let page = Int(getpagesize())
        let first = (Int(bitPattern: start) + page - 1) & ~(page - 1)
        let end = (Int(bitPattern: start) + count) & ~(page - 1)
        guard end > first, let aligned = UnsafeMutableRawPointer(bitPattern: first) else { return }
        _ = madvise(aligned, end - first, MADV_DONTNEED)
    }
}

extension Array {
    /// An empty array with room for `capacity` elements, populated when large
    /// (`PopulatedMemory`): for a list that is filled to `capacity` at once.
    package init(populatedCapacity capacity: Int) {
        self.init(unsafeUninitializedCapacity: capacity) { buffer, count in
            if let base = buffer.baseAddress {
                PopulatedMemory.populate(
                    UnsafeMutableRawPointer(base), count: buffer.count * MemoryLayout<Element>.stride)
            }
            count = 0
        }
    }
}
