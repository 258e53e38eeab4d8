import CThreads
import FoundationEssentials
import Glibc
import Reachable
import Synchronization
import Testing

/// Work in parts shared by the caller and a thread made for the call (`LargeDocuments.runInParts`), and the
/// JSON array written that way (`JSONWriter.arrayInParts`).
@Suite struct LargeDocumentsPartsTests {
    @Test func partsCoverTheItemsInOrderWithSizesWithinOne() {
        for (count, parts) in [(1_000, 4), (2_001, 8), (10_000, 16), (10_007, 16), (3, 3)] {
            let ranges = (0..<parts).map { LargeDocuments.range(of: $0, in: parts, count: count) }
            #expect(ranges.first?.lowerBound == 0)
            #expect(ranges.last?.upperBound == count)
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
            let sizes = ranges.map(\.count)
            #expect(sizes.max()! - sizes.min()! <= 1)
        }
    }

    static let cores = LargeDocuments.cores

    /// A job below `worthSharing` items stays in one part.
    @Test func aSmallJobIsOnePart() {
        #expect(LargeDocuments.parts(for: 0) == 1)
        #expect(LargeDocuments.parts(for: LargeDocuments.worthSharing - 1) == 1)
    }

    /// From `worthSharing` items, with more than one core, a job is cut in parts of at least
    /// `smallestPart` items, 16 at most.
    @Test(.enabled(if: cores > 1, "needs two cores")) func howManyPartsAJobIsCutInto() {
        #expect(
            LargeDocuments.parts(for: LargeDocuments.worthSharing) == LargeDocuments.worthSharing
                / LargeDocuments.smallestPart)
        #expect(LargeDocuments.parts(for: 10_000) == 16)
        #expect(LargeDocuments.parts(for: 1_000_000) == 16)
    }

    /// With one core every job is one part, run on the caller (run as `taskset -c 0 swift test`).
    @Test(.enabled(if: cores == 1, "only on one core")) func oneCoreNeverShares() {
        #expect(LargeDocuments.parts(for: 1_000_000) == 1)
    }

    /// The cores counted are those the process may run on (`sched_getaffinity`, never more), the
    /// same from a thread held to one core. (Under `taskset -c 0 swift test` the count is 1 and
    /// `oneCoreNeverShares` runs.)
    @Test func theCoresCountedAreTheProcesssWhicheverThreadCounts() throws {
        let counted = LargeDocuments.countCores()
        #expect(counted >= 1)
        #expect(counted <= Int(reachd_process_core_count()))
        #expect(LargeDocuments.cores == counted)
        let onOneCore = Mutex<(held: Int32, counted: Int)?>(nil)
        let thread = try DedicatedThread {
            let held = reachd_thread_hold_to_this_core()
            onOneCore.withLock { $0 = (held, LargeDocuments.countCores()) }
        }
        thread.join()
        let seen = try #require(onOneCore.withLock { $0 })
        try #require(seen.held >= 0, "the thread could not be held to one core")
        #expect(seen.counted == counted)
    }

    /// Every part runs exactly once, each thread's in increasing order; while the caller is held
    /// up in its first part, the other thread takes every part left (the point of parts: fixed
    /// halves left that thread idle). The other thread's first part waits until the caller has
    /// taken one: under ThreadSanitizer the made thread could otherwise take all 16 tiny parts
    /// before the caller takes any (CI, stop 45).
    @Test func aThreadHeldUpLeavesEveryPartLeftToTheOther() {
        let parts = 16
        let done = Mutex<[(part: Int, onCaller: Bool)]>([])
        let callerTookAPart = Atomic<Bool>(false)
        let caller = pthread_self()
        // Each is read and set by one thread only: the caller's, and the other's.
        var callerHeldUp = false
        var otherHeldUp = false
        LargeDocuments.runInParts(parts) { part in
            let onCaller = pthread_equal(pthread_self(), caller) != 0
            if onCaller && !callerHeldUp {
                callerHeldUp = true
                callerTookAPart.store(true, ordering: .releasing)
                // The caller's first part waits (60 s at most) until the others are all done.
                for _ in 0..<60_000 where done.withLock({ $0.count }) < parts - 1 { usleep(1_000) }
            } else if !onCaller && !otherHeldUp {
                otherHeldUp = true
                for _ in 0..<60_000 where !callerTookAPart.load(ordering: .acquiring) { usleep(1_000) }
            }
            done.withLock { $0.append((part, onCaller)) }
        }
        let all = done.withLock { $0 }
        #expect(all.map(\.part).sorted() == Array(0..<parts))
        let callers = all.filter(\.onCaller).map(\.part)
        let others = all.filter { !$0.onCaller }.map(\.part)
        #expect(callers == callers.sorted() && others == others.sorted())
        #expect(callers.count == 1, "the caller held up took only its first part: \(callers)")
        #expect(others.count == parts - 1)
    }

    @Test func oneOrNoPartRunsOnTheCaller() {
        for parts in [0, 1] {
            let done = Mutex<[(Int, Bool)]>([])
            let caller = pthread_self()
            LargeDocuments.runInParts(parts) { part in
                done.withLock { $0.append((part, pthread_equal(pthread_self(), caller) != 0)) }
            }
            #expect(done.withLock { $0.map(\.0) } == Array(0..<parts))
            #expect(done.withLock { $0.allSatisfy(\.1) })
        }
    }

    /// The array written in parts is byte for byte the one written element by element, whichever
    /// thread is held up where: the caller's first parts in place and the rest copied in, or the
    /// other thread's first part before the caller's, with the room reserved and with too little.
    @Test(arguments: [nil, 0, 1, 4, 7], [16, 1 << 20])
    func anArrayWrittenInPartsIsTheArrayWrittenAtOnce(slowPart: Int?, capacity: Int) {
        let elements = (0..<(2 * LargeDocuments.worthSharing + 1)).map { $0 % 97 == 0 ? "quote\"\($0)" : "t\($0)" }
        let parts = LargeDocuments.parts(for: elements.count)
        // With one core the job is one part: a slow part past it is none.
        let slow = slowPart.flatMap {
            $0 < parts ? LargeDocuments.range(of: $0, in: parts, count: elements.count).lowerBound : nil
        }
        let atOnce = JSONWriter.bytes(capacity: capacity) { json in
            json.object { json.field("list") { json.array(elements) { json.string($0) } } }
        }
        let inParts = JSONWriter.bytes(capacity: capacity) { json in
            json.object {
                json.field("list") {
                    json.arrayInParts(elements) { writer, element in
                        if element == slow.map({ elements[$0] }) { usleep(20_000) }
                        writer.string(element)
                    }
                }
            }
        }
        #expect(String(decoding: inParts, as: UTF8.self) == String(decoding: atOnce, as: UTF8.self))
    }

    /// One part's entries far longer than the rest outgrow its region of the room reserved (the
    /// others fit theirs): the array is still the one written element by element.
    @Test func aPartThatOutgrowsItsRegionStillComesInItsPlace() {
        let count = 2 * LargeDocuments.worthSharing + 1
        let parts = LargeDocuments.parts(for: count)
        let long = LargeDocuments.range(of: parts / 2, in: parts, count: count)
        let elements = (0..<count).map { long.contains($0) ? String(repeating: "x", count: 200) + "\($0)" : "t\($0)" }
        let atOnce = JSONWriter.bytes(capacity: 64) { json in json.array(elements) { json.string($0) } }
        let inParts = JSONWriter.bytes(capacity: atOnce.count * 5 / 4) { json in
            json.arrayInParts(elements) { writer, element in writer.string(element) }
        }
        #expect(String(decoding: inParts, as: UTF8.self) == String(decoding: atOnce, as: UTF8.self))
    }
}
