import Dispatch
import Glibc

/// Runs commands (`ip`, mostly) from tests: `posix_spawn` and `waitpid` on the child's own pid.
///
/// Not `Foundation.Process`: on Linux it learns that a child ended through a socket the child
/// inherits, so a second process started at the same moment from another thread inherits it
/// too, and the first child's end can go unnoticed for ever (swift-corelibs-foundation issue
/// 4795 — it hung this suite once). Here the only descriptor a child gets is its own output
/// socket (created close-on-exec, duplicated onto 1 and 2 for that child alone), and the wait
/// names the pid. A command that outlives its deadline is killed, so no test waits for ever.
enum Shell {
    /// `ip` lives in /usr/sbin, /sbin or /bin depending on the distribution.
    static let ip: String =
        ["/usr/sbin/ip", "/sbin/ip", "/bin/ip", "/usr/bin/ip"]
        .first { access($0, X_OK) == 0 } ?? "/sbin/ip"

    struct Output: Sendable {
        /// The exit status, or 128 + the signal that ended the command.
        var status: Int32
        var text: String
        /// When the command had exited and its output was read.
        var returnedAt: ContinuousClock.Instant
    }

    struct Failure: Error, CustomStringConvertible {
        var command: [String]
        var output: Output
        var description: String { "`\(command.joined(separator: " "))` exited \(output.status): \(output.text)" }
    }

    /// The command could not be started, or had to be killed at its deadline.
    struct SpawnFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `ip ARGUMENTS…`; throws unless it exits 0.
    @discardableResult
    static func ip(_ arguments: String...) async throws -> Output {
        try await run(ip, arguments)
    }

    @discardableResult
    static func run(
        _ executable: String, _ arguments: [String], check: Bool = true, timeout: Duration = .seconds(60)
    ) async throws -> Output {
        let output = try await withCheckedThrowingContinuation { continuation in
            // A thread outside Swift's cooperative pool blocks in poll and waitpid.
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(executable, arguments, timeout: timeout) })
            }
        }
        if check, output.status != 0 { throw Failure(command: [executable] + arguments, output: output) }
        return output
    }

    /// Blocks the calling thread until the command ends (for cleanup paths that cannot await).
    static func runBlocking(
        _ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)
    ) throws -> Output {
        // A socket pair rather than pipe(2): it is created close-on-exec in one call (pipe2 needs
        // _GNU_SOURCE, which Swift's Glibc module does not define), so no child spawned by another
        // thread at the same instant can inherit it.
        var pipeEnds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pipeEnds) == 0
        else { throw SpawnFailure(description: "socketpair: errno \(errno)") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        defer { close(readEnd) }

        let pid: pid_t
        do {
            defer { close(writeEnd) }  // the parent keeps only the read end
            pid = try spawn(executable, arguments, output: writeEnd)
        }
        let (text, timedOut) = readAll(readEnd, deadline: .now + timeout, killing: pid)
        let status = waitForExit(pid)
        if timedOut {
            throw SpawnFailure(
                description: "`\(executable) \(arguments.joined(separator: " "))` killed after \(timeout)")
        }
        return Output(status: status, text: text, returnedAt: .now)
    }

    private static func spawn(_ executable: String, _ arguments: [String], output: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else {
            throw SpawnFailure(description: "posix_spawn \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Everything the child writes, until it closes its end; kills it at the deadline.
    private static func readAll(
        _ descriptor: Int32, deadline: ContinuousClock.Instant, killing pid: pid_t
    ) -> (String, timedOut: Bool) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else {
                kill(pid, SIGKILL)
                return (String(decoding: bytes, as: UTF8.self), true)
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + 1)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return (String(decoding: bytes, as: UTF8.self), false) }
            bytes += chunk[0..<count]
        }
    }

    /// The child's exit status (128 + signal when a signal ended it).
    private static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
