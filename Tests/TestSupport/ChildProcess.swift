import Foundation
package import Glibc

/// A process a test starts (dnsmasq, openssl, promtool) and always ends: `posix_spawn`, then `kill` and
/// `waitpid`. Not `Foundation.Process`: on Linux its wait for a child's end can hang when
/// processes start concurrently (swift-corelibs-foundation issue 4795).
package final class ChildProcess: @unchecked Sendable {
    package let pid: pid_t
    package let executable: String
    /// stdout and stderr together, for failure messages.
    package let logPath: String
    private let lock = NSLock()
    private var exitStatus: Int32?

    package struct SpawnError: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// Starts `executable ARGUMENTS…` with stdin from `inputPath` (or /dev/null) and output into
    /// `logPath`.
    package init(_ executable: String, _ arguments: [String], logPath: String, inputPath: String = "/dev/null") throws {
        self.executable = executable
        self.logPath = logPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Default signal handling and an empty mask, whatever the test runner's threads have.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child = pid_t()
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        guard status == 0 else {
            throw SpawnError(description: "posix_spawn \(executable): \(String(cString: strerror(status)))")
        }
        pid = child
    }

    deinit {
        terminate()
    }

    /// Whether it has exited (reaps it if so).
    package var hasExited: Bool {
        lock.withLock {
            if exitStatus != nil { return true }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status }
            return exitStatus != nil
        }
    }

    /// Waits for it to exit on its own (a command such as `openssl req`).
    ///
    /// - Returns: the exit code, 128 + the signal that ended it (as a shell says: never 0 for a
    ///   crash), or `nil` if it did not exit within `timeout` (it is then killed).
    package func waitForExit(timeout: Duration = .seconds(30)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if hasExited { return lock.withLock { exitStatus.map(Self.exitCode) } }
            usleep(10_000)
        }
        terminate()
        return nil
    }

    /// The code of a `waitpid` status: the exit code, or 128 + the terminating signal.
    private static func exitCode(_ status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// SIGTERM, up to 2 s of grace, then SIGKILL; always reaped. Idempotent.
    package func terminate() {
        if hasExited { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            if hasExited { return }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        lock.withLock {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            exitStatus = status
        }
    }

    /// What it printed so far. Read with `read(2)`: Foundation's reading of an empty file leaks
    /// its buffer, which LeakSanitizer reports.
    package var log: String {
        let file = open(logPath, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return "" }
        defer { close(file) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            if count <= 0 { return String(decoding: text, as: UTF8.self) }
            text += chunk[..<count]
        }
    }
}
