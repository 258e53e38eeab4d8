import Glibc
import TestSupport
import Testing

/// The test servers' and commands' process handle: what `waitForExit` says is what a test
/// asserts on (`promtool check metrics` exiting 0, `openssl req` succeeding), so a crash must
/// never read as success.
struct ChildProcessTests {
    func run(_ script: String) throws -> (code: Int32?, log: String) {
        let log = "/tmp/reachd-childprocess-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { unlink(log) }
        let child = try ChildProcess("/bin/sh", ["-c", script], logPath: log)
        return (child.waitForExit(timeout: .seconds(10)), child.log)
    }

    @Test func anExitCodeIsItsOwn() throws {
        #expect(try run("exit 0").code == 0)
        #expect(try run("exit 3").code == 3)
    }

    @Test func aProcessEndedByASignalIsNeverZero() throws {
        #expect(try run("kill -SEGV $$").code == 128 + SIGSEGV)
        #expect(try run("kill -KILL $$").code == 128 + SIGKILL)
    }

    @Test func itsOutputIsReadBackEvenWhenEmpty() throws {
        #expect(try run("echo said; echo also >&2").log == "said\nalso\n")
        #expect(try run("true").log == "")
    }
}
