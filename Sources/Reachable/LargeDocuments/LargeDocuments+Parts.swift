import CThreads
import FoundationEssentials
import Synchronization

/// Work in numbered parts shared by two threads at the same time: the caller and a thread made
/// for the call (joined before it returns) each take the next part nobody has taken, until none
/// is left.
///
/// For the few jobs of a large fleet's link-down that take milliseconds of one core each —
/// judging every target, writing the document — on the way to the one event. Numbered parts, not
/// fixed halves: the thread that is free takes what is left, so a thread held up by another of
/// reachd's threads delays at most one part. A thread made and joined costs tens of
/// microseconds, so it pays only above `worthSharing` items; with one core every part runs on the
/// caller, in order. The parts must touch disjoint memory: nothing here guards what they share.
extension LargeDocuments {
    /// Below this many items a job stays on one thread.
    package static let worthSharing = 1_000

    /// Items in a part at least: each part costs an atomic operation, and a part of the JSON a
    /// move and the byte of room it leaves (`JSONWriter.arrayInParts`).
    package static let smallestPart = 250

    /// How many parts a job of `count` items is cut into: 1 (not shared) below `worthSharing`
    /// items or with one core; else 16, fewer when parts would fall below `smallestPart`.
    package static func parts(for count: Int) -> Int {
        guard count >= worthSharing, cores > 1 else { return 1 }
        return min(16, count / smallestPart)
    }

    /// The items of part `part` of `parts` in a job of `count`: consecutive, in order, sizes
    /// differing by one at most.
    package static func range(of part: Int, in parts: Int, count: Int) -> Range<Int> {
        (part * count / parts)..<((part + 1) * count / parts)
    }

    /// `body` for every part in `0..<parts`, each exactly once, on the calling thread and on a
    /// thread of its own (on another core), at the same time; returns when every part is done.
    /// Each thread takes its parts in increasing order. Every part on the caller, in order, when
    /// `parts` is 1 or a thread cannot be made.
    package static func runInParts(_ parts: Int, _ body: (_ part: Int) -> Void) {
        guard parts > 1 else {
            for part in 0..<parts { body(part) }
            return
        }
        let next = Counter()
        withoutActuallyEscaping(body) { body in
            let lent = Lent(body: body, next: next, parts: parts)
            // pthread_create and pthread_join, not a dispatch queue: what the thread wrote is then
            // ordered before the caller reads it in a way ThreadSanitizer sees too.
            let thread = try? DedicatedThread(elsewhere: true, { lent.takeParts() })
            lent.takeParts()
            thread?.join()
        }
    }

    /// Cores this process may run on, counted once.
    package static let cores = countCores()

    /// The fewer of the process's CPU affinity (`taskset`, a container's cpuset) and the online
    /// cores or, in a container, its CPU quota (`ProcessInfo`, which does not read the affinity:
    /// under `taskset -c 0` it said 2 here). The process's affinity, not the calling thread's:
    /// whichever thread counts first, the count is the same.
    package static func countCores() -> Int {
        let affinity = Int(reachd_process_core_count())
        return min(ProcessInfo.processInfo.activeProcessorCount, affinity > 0 ? affinity : .max)
    }

    /// The next part nobody has taken.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// The job handed to the thread: it runs before `runInParts` returns, so the closure outlives
    /// neither the call nor what it captures.
    private struct Lent: @unchecked Sendable {
        let body: (Int) -> Void
        let next: Counter
        let parts: Int

        func takeParts() {
            while true {
                // Relaxed: the parts' memory is disjoint, and the join orders the thread's
                // writes before the caller reads them.
                let part = next.value.wrappingAdd(1, ordering: .relaxed).oldValue
                guard part < parts else { return }
                body(part)
            }
        }
    }
}
