import CMalloc
import Glibc

/// How glibc's allocator keeps memory for `reachd serve`: what a long-running service with a few
/// busy threads and multi-megabyte documents wants, not glibc's defaults for a short program.
///
/// - At most two arenas: glibc makes up to 8 per core, one per thread that meets contention, and
///   each keeps what its thread freed. reachd's threads (engine, netlink, HTTP, publishing) pass
///   documents between each other, so memory freed in one arena is rarely reused by its thread.
/// - A fixed mmap threshold (128 KiB, glibc's initial one): a block that large is mapped on its
///   own and given back when freed. glibc otherwise raises the threshold to the largest block freed
///   so far — a fleet's document is megabytes — and then keeps up to twice that per arena.
///
/// An operator's own `MALLOC_*` or `GLIBC_TUNABLES` setting wins: nothing is changed then.
enum MemoryPolicy {
    static func apply() {
        let environment = ProcessInfoEnvironment.names
        guard !environment.contains(where: { $0.hasPrefix("MALLOC_") || $0 == "GLIBC_TUNABLES" }) else { return }
        _ = mallopt(M_ARENA_MAX, 2)
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    }
}

/// The names in the process's environment (`environ`), without Foundation.
private enum ProcessInfoEnvironment {
    static var names: [String] {
        var names: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            names.append(String(text.prefix { $0 != "=" }))
            entry += 1
        }
        return names
    }
}
