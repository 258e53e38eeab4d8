import CMalloc
import Synchronization

/// Gives the allocator's free pages back to the kernel: after a large document was published, and
/// once a round while a large fleet is probed.
///
/// A large document's change allocates and frees megabytes in small blocks (the diff's trees for
/// `/changes`, the log line, the judged entries); glibc keeps them in its arenas and the next
/// change reuses only part of them (docs/scale.md). Only after a document of at least `threshold`
/// bytes: a small one frees little, and a trim walks every free block of every arena.
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
    /// books' long-lived blocks, and nothing is published while nothing changes: those free pages
    /// would stay resident (docs/scale.md). A trim costs a fraction of a millisecond, so it is done
    /// once a probe interval (at least `shortestPeriod`), by whichever probe finishes first: no
    /// wake-up of its own.
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
