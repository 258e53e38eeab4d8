import Glibc
import Logging

/// Process-wide settings a server with thousands of sockets needs.
enum ProcessLimits {
    /// Raises the open-file limit to what the connection limit needs (up to the hard limit), and
    /// ignores SIGPIPE so a client that vanished mid-write is an error code, not a dead process.
    static func prepare(forConnections connections: Int, logger: Logger) {
        signal(SIGPIPE, SIG_IGN)
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(connections + 64)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = min(wanted, limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        if limit.rlim_cur < wanted {
            logger.warning("open-file limit \(limit.rlim_cur) is below --max-connections \(connections)")
        }
    }
}
