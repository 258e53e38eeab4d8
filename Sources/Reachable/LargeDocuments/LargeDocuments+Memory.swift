import CMalloc
import Glibc
import Synchronization

/// Memory kept the way a long-running service with multi-megabyte documents wants it: glibc's
/// allocator told so at start, and its free pages given back to the kernel after a large
/// document was published and once a round while a large fleet is probed.
extension LargeDocuments {
    /// A document at least this large is followed by a trim.
    package static let trimThreshold = 1 << 20

    /// Gives the free pages back when `documentSize` is at least `trimThreshold`; says whether it
    /// did. A large document's change allocates and frees megabytes in small blocks (the diff's
    /// trees for `/changes`, the log line, the judged entries); glibc keeps them in its arenas and
    /// the next change reuses only part of them. A small one frees little, and a trim walks every
    /// free block of every arena.
    @discardableResult
    package static func trimAfterPublishing(documentSize: Int) -> Bool {
        guard documentSize >= trimThreshold else { return false }
        _ = malloc_trim(0)
        return true
    }

    /// How glibc's allocator keeps memory for `reachd serve`, not its defaults for a short program:
    ///
    /// - At most two arenas: glibc makes up to 8 per core, one per thread that meets contention,
    ///   and each keeps what its thread freed. reachd's threads (engine, netlink, HTTP, publishing)
    ///   pass documents between each other, so memory freed in one arena is rarely reused by its
    ///   thread.
    /// - A fixed mmap threshold (128 KiB, glibc's initial one): a block that large is mapped on its
    ///   own and given back when freed. glibc otherwise raises the threshold to the largest block
    ///   freed so far — a fleet's document is megabytes — and then keeps up to twice that per arena.
    ///
    /// An operator's own `MALLOC_*` or `GLIBC_TUNABLES` setting wins: nothing is changed then.
    package static func applyAllocatorPolicy() {
        var entry = environ
        while let pointer = entry.pointee {
            let name = String(cString: pointer).prefix { $0 != "=" }
            if name.hasPrefix("MALLOC_") || name == "GLIBC_TUNABLES" { return }
            entry += 1
        }
        _ = mallopt(M_ARENA_MAX, 2)
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    }

    /// Trims at most once a `period`, whatever the number of targets.
    ///
    /// A fleet's probes free what they allocated (results, answers, the runs' records) among the
    /// books' long-lived blocks, and nothing is published while nothing changes: those free pages
    /// would stay resident. A trim costs a fraction of a millisecond, so it is done
    /// once a probe interval (at least `shortestPeriod`), by whichever probe finishes first: no
    /// wake-up of its own.
    package final class PeriodicTrim: Sendable {
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
