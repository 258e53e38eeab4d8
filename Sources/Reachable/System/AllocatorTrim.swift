import CMalloc
import Synchronization

/// Gives the allocator's free pages back to the kernel: after a large document was published, and
/// once a round while a large fleet is probed.
///
/// A change of 10,000 targets allocates and frees tens of megabytes in small blocks (the diff's
/// parse tree for `/changes`, the log line, the judged entries). glibc keeps them in its arenas,
/// and the next change reuses only part of them: after ten link-downs reachd held 175 MB, of which
/// `malloc_trim` gave back 64 MB. Only after a document of at least `threshold` bytes (about 3,000
/// targets): a small one frees little, and a trim walks every free block of every arena.
package enum AllocatorTrim {
    package static let threshold = 1 << 20

    /// Trims when `documentSize` is at least `threshold`; says whether it did.
    @discardableResult
    package static func afterPublishing(documentSize: Int) -> Bool {
        guard documentSize >= threshold else { return false }
        _ = malloc_trim(0)
        return true
    }

    /// Trims at most once a `period`, whatever the number of targets.
    ///
    /// A fleet's probes free what they allocated (results, answers, the runs' records) among the
    /// books' long-lived blocks, and nothing is published while nothing changes: at 10,000
    /// `http://` targets every 10 s, glibc held 1.2–1.5 MB of such free pages at rest, 0.13 KiB a
    /// target (the fleet bench's RSS per target). Below 1,000 targets (this trimmed only from there) 999
    /// `tcp://` targets held 9.5 MB anonymous at rest against 5.6 MB at 1,000: the first round's
    /// free pages, never given back. A trim takes 0.3–0.4 ms at 10,000 targets (perf uprobes), less
    /// for a smaller heap, so it is done once a probe interval (at least `shortestPeriod`), by
    /// whichever probe finishes first: no wake-up of its own.
    package final class Periodic: Sendable {
        package static let shortestPeriod = Duration.seconds(10)

        private let period: Duration
        private let last: Mutex<ContinuousClock.Instant>

        package init(period: Duration) {
            self.period = max(period, Self.shortestPeriod)
            last = Mutex(.now)
        }

        /// Trims if a period passed since the last trim (or since this was made); says whether it
        /// did.
        @discardableResult
        package func afterProbe(now: ContinuousClock.Instant = .now) -> Bool {
            let due = last.withLock { last in
                guard now - last >= period else { return false }
                last = now
                return true
            }
            if due { _ = malloc_trim(0) }
            return due
        }
    }
}
