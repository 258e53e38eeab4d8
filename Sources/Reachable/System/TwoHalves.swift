import FoundationEssentials

/// Work split in two and done at the same time: the caller does one half, a thread made for the
/// call (joined before it returns) the other.
///
/// For the few jobs of a link-down at 10,000 targets that take milliseconds of one core each —
/// judging every target, writing the 3.8 MB document — on the way to the one event (issue 28:
/// ≤ 20 ms). A thread made and joined costs tens of microseconds, so it pays only above
/// `worthSplitting` items; with one core both halves run on the caller, one after the other.
/// The halves must touch disjoint memory: nothing here guards what they share.
package enum TwoHalves {
    /// Below this many items a job stays on one thread.
    package static let worthSplitting = 1_000

    /// Whether a job of `count` items is split.
    package static func splits(_ count: Int) -> Bool {
        count >= worthSplitting && cores > 1
    }

    /// `first` on the calling thread and `second` on a thread of its own, on another core, at the
    /// same time; returns when both have. Both on the caller, `first` then `second`, when a thread
    /// cannot be made.
    package static func together(_ first: () -> Void, _ second: () -> Void) {
        withoutActuallyEscaping(second) { second in
            let lent = Lent(run: second)
            // pthread_create and pthread_join, not a dispatch queue: what the thread wrote is then
            // ordered before the caller reads it in a way ThreadSanitizer sees too.
            guard let thread = try? DedicatedThread(elsewhere: true, { lent.run() }) else {
                first()
                second()
                return
            }
            first()
            thread.join()
        }
    }

    /// Cores this process may run on (its CPU affinity and, in a container, its CPU quota).
    private static let cores = ProcessInfo.processInfo.activeProcessorCount

    /// The second half's closure, handed to the thread: it runs before `together` returns, so
    /// the closure outlives neither the call nor what it captures.
    private struct Lent: @unchecked Sendable {
        let run: () -> Void
    }
}
