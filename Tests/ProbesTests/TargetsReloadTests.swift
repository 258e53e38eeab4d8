import Foundation
import Probes
import Reachable
import Synchronization
import TestSupport
import Testing

/// `--targets-file` read again while running, in-process with a real monitor, the real engine and
/// its inotify watch, and servers on loopback: the set is replaced in place, in one document, or
/// not at all.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TargetsReloadTests {
    /// Every reload reported, and the document as it stood when each was reported (on the engine
    /// thread, right after the reload's own update: before any new probe could record).
    final class Reports: Sendable {
        private let state = Mutex<[(TargetsReload, ReachabilityStatus)]>([])

        func add(_ reload: TargetsReload, _ document: ReachabilityStatus) {
            state.withLock { $0.append((reload, document)) }
        }

        var all: [(reload: TargetsReload, document: ReachabilityStatus)] { state.withLock { $0 } }

        /// Waits until there are more than `count`; returns the newest.
        func wait(after count: Int) async throws -> (reload: TargetsReload, document: ReachabilityStatus) {
            try await ProbeSourcesTests.waitUntil("a reload report") { all.count > count }
            return try #require(all.last)
        }
    }

    struct Running {
        let monitor: NetworkMonitor
        let service: ProbeSources
        let reports: Reports

        func stop() {
            service.stop()
            monitor.close()
        }

        /// Waits until the engine has set up the file's watch and read the file once, by a SIGHUP's
        /// report (the engine works in order). The targets start before the reloader and a literal's
        /// host:// probe needs no engine work: "reachable" does not say so (CI under
        /// AddressSanitizer once read a file the test had only begun to write).
        func watchIsSet() async throws {
            let before = reports.all.count
            #expect(service.reloadTargets())
            _ = try await reports.wait(after: before)
        }
    }

    static func start(file path: String, flags: [String] = [], required: [String] = []) throws -> Running {
        var probes = try ProbeSourcesTests.configuration(flags)
        var file = TargetsFile(path: path, flagTargets: probes.targets)
        file.requiredNames = required
        probes.targets = try file.read()
        probes.targetsFile = file
        let monitor = try ProbeSourcesTests.monitor(listing: probes)
        let reports = Reports()
        let service = try #require(
            try ProbeSources.make(probes, monitor: monitor, targetsReloaded: { reports.add($0, monitor.current) }))
        service.start()
        return Running(monitor: monitor, service: service, reports: reports)
    }

    static func names(_ status: ReachabilityStatus) -> [String] { status.targets.map(\.name) }

    static func target(_ status: ReachabilityStatus, _ name: String) -> TargetStatus? {
        status.targets.first { $0.name == name }
    }

    @Test func aRewrittenFileIsAppliedInPlaceInOneDocument() async throws {
        let web = try TestHTTPServer(.respond("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"))
        let directory = try TemporaryDirectory()
        try directory.replace(
            "targets",
            with: """
                kept=tcp://127.0.0.1:\(web.port)
                gone=tcp://127.0.0.1:\(web.port)
                moved=http://127.0.0.1:\(web.port)/a

                """)
        let running = try Self.start(file: directory.file("targets"), flags: ["flag=host://127.0.0.1"])
        defer { running.stop() }
        let settled = try await ProbeSourcesTests.waitFor(running.monitor, "all reachable") {
            $0.count == 4 && $0.allSatisfy { $0.state == .reachable }
        }
        #expect(Self.names(settled) == ["flag", "kept", "gone", "moved"])

        try directory.replace(
            "targets",
            with: """
                # moved now answers elsewhere; new is added before it
                new=host://127.0.0.1
                moved=http://127.0.0.1:\(web.port)/b
                kept=tcp://127.0.0.1:\(web.port)

                """)
        let (reload, applied) = try await running.reports.wait(after: 0)
        #expect(reload.cause == .fileChanged)
        let change = try reload.outcome.get()
        #expect(change.added == ["new"])
        #expect(change.removed == ["gone"])
        #expect(change.changed == ["moved"])
        #expect(change.kept == ["flag", "kept"])

        // The document the reload made: the whole new list, in the new order, at once.
        #expect(applied.sequence == settled.sequence + 1, "one document for the whole reload")
        #expect(Self.names(applied) == ["flag", "new", "moved", "kept"], "flags first, then the file's order")
        #expect(Self.target(applied, "new")?.state == .unknown)
        #expect(Self.target(applied, "moved")?.state == .unknown, "a changed URL starts again")
        #expect(Self.target(applied, "moved")?.url == "http://127.0.0.1:\(web.port)/b")
        for name in ["flag", "kept"] {
            #expect(Self.target(applied, name) == Self.target(settled, name), "\(name) keeps its state and since")
        }

        // The new and the changed are probed at once.
        let after = try await ProbeSourcesTests.waitFor(running.monitor, "the new set settled") {
            $0.count == 4 && $0.allSatisfy { $0.state == .reachable }
        }
        #expect(Self.target(after, "kept")?.since == Self.target(settled, "kept")?.since)
        #expect(running.reports.all.count == 1, "one change of the file, one reload")
    }

    @Test func aBadFileIsNotAppliedAndTheNextGoodOneIs() async throws {
        let directory = try TemporaryDirectory()
        try directory.replace("targets", with: "self=host://127.0.0.1\n")
        let running = try Self.start(file: directory.file("targets"), required: ["self"])
        defer { running.stop() }
        let settled = try await ProbeSourcesTests.waitFor(running.monitor, "reachable") {
            $0.first?.state == .reachable
        }

        try directory.replace("targets", with: "self=host://127.0.0.1\n\nnot a spec\n")
        let bad = try await running.reports.wait(after: 0)
        guard case .failure(let error) = bad.reload.outcome else {
            Issue.record("a bad line was applied")
            return
        }
        #expect(error.line == 3)
        #expect(bad.document.sequence == settled.sequence, "the previous set stays: no new document")

        // A file that drops a target --ready-when needs parses, and is still not applied.
        try directory.replace("targets", with: "other=host://127.0.0.1\n")
        let unready = try await running.reports.wait(after: 1)
        guard case .failure(let missing) = unready.reload.outcome else {
            Issue.record("a file without a required target was applied")
            return
        }
        #expect(missing.problem == .requiredTargetMissing("self"))
        #expect(Self.names(running.monitor.current) == ["self"])

        try directory.replace("targets", with: "self=host://127.0.0.1\nother=host://127.0.0.1\n")
        let good = try await running.reports.wait(after: 2)
        #expect(try good.reload.outcome.get().added == ["other"])
        #expect(Self.target(good.document, "self") == Self.target(settled, "self"))
    }

    @Test func aSymlinkSwapLikeAConfigMapUpdateIsNoticed() async throws {
        // kubelet's layout: targets → ..data/targets, ..data → ..<timestamp>; an update writes a
        // new timestamped directory, renames a new ..data over the old, removes the old directory.
        let directory = try TemporaryDirectory()
        let files = FileManager.default
        try files.createDirectory(atPath: directory.file("..2026_11_25_06_00_00.1"), withIntermediateDirectories: false)
        try "self=host://127.0.0.1\n".write(
            toFile: directory.file("..2026_11_25_06_00_00.1/targets"), atomically: false, encoding: .utf8)
        try files.createSymbolicLink(atPath: directory.file("..data"), withDestinationPath: "..2026_11_25_06_00_00.1")
        try files.createSymbolicLink(atPath: directory.file("targets"), withDestinationPath: "..data/targets")
        let running = try Self.start(file: directory.file("targets"))
        defer { running.stop() }
        _ = try await ProbeSourcesTests.waitFor(running.monitor, "reachable") { $0.first?.state == .reachable }
        try await running.watchIsSet()

        try files.createDirectory(atPath: directory.file("..2026_11_25_06_05_00.2"), withIntermediateDirectories: false)
        try "self=host://127.0.0.1\nlocal=host://127.0.0.2\n".write(
            toFile: directory.file("..2026_11_25_06_05_00.2/targets"), atomically: false, encoding: .utf8)
        try files.createSymbolicLink(
            atPath: directory.file("..data_tmp"), withDestinationPath: "..2026_11_25_06_05_00.2")
        #expect(rename(directory.file("..data_tmp"), directory.file("..data")) == 0)
        // Noticed from the rename of ..data alone (the old file is still there, untouched).
        let swapped = try await running.reports.wait(after: 1)
        #expect(try swapped.reload.outcome.get().added == ["local"])

        try files.removeItem(atPath: directory.file("..2026_11_25_06_00_00.1"))
        let wakeUps = running.service.statistics.wakeUps
        // Removing the old directory is one more event for the same content: nothing more. Two
        // turns of the engine's loop: one whole turn polled after the removal, and drained it.
        try await ProbeSourcesTests.waitUntil("the removal seen") {
            running.service.statistics.wakeUps >= wakeUps + 2
        }
        #expect(running.reports.all.count == 2)
    }

    @Test func reloadingOnRequestReadsTheFileEvenUnchanged() async throws {
        let directory = try TemporaryDirectory()
        try directory.replace("targets", with: "self=host://127.0.0.1\n")
        let running = try Self.start(file: directory.file("targets"))
        defer { running.stop() }
        let settled = try await ProbeSourcesTests.waitFor(running.monitor, "reachable") {
            $0.first?.state == .reachable
        }
        #expect(running.service.reloadTargets())
        let reload = try await running.reports.wait(after: 0)
        #expect(reload.reload.cause == .signal)
        #expect(try reload.reload.outcome.get().kept == ["self"])
        #expect(reload.document.sequence == settled.sequence, "nothing changed: no event")
    }

    @Test func withoutATargetsFileThereIsNothingToReload() throws {
        let probes = try ProbeSourcesTests.configuration(["self=host://127.0.0.1"])
        let monitor = try ProbeSourcesTests.monitor(listing: probes)
        defer { monitor.close() }
        let service = try #require(try ProbeSources.make(probes, monitor: monitor))
        defer { service.stop() }
        #expect(!service.reloadTargets())
    }

    @Test func anEmptyFileStartsTheProbesAndAFirstTargetIsAdded() async throws {
        let directory = try TemporaryDirectory()
        try directory.replace("targets", with: "# nothing yet\n")
        let running = try Self.start(file: directory.file("targets"))
        defer { running.stop() }
        #expect(running.monitor.current.targets.isEmpty)
        try directory.replace("targets", with: "self=host://127.0.0.1\n")
        let status = try await ProbeSourcesTests.waitFor(running.monitor, "the added target probed") {
            $0.first?.state == .reachable
        }
        #expect(Self.names(status) == ["self"])
    }

    @Test func aFileWrittenInPlaceIsReadOnceItIsClosed() async throws {
        let directory = try TemporaryDirectory()
        try directory.replace("targets", with: "self=host://127.0.0.1\n")
        let running = try Self.start(file: directory.file("targets"))
        defer { running.stop() }
        _ = try await ProbeSourcesTests.waitFor(running.monitor, "reachable") { $0.first?.state == .reachable }
        try await running.watchIsSet()

        // Half a line written, then a pause, then the rest: no reload may see the half.
        let handle = try #require(FileHandle(forWritingAtPath: directory.file("targets")))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Array("self=host://127.0.0.1\nlocal=ho".utf8))
        try await Task.sleep(for: .milliseconds(300))
        try handle.write(contentsOf: Array("st://[::1]\n".utf8))
        try handle.close()
        let reload = try await running.reports.wait(after: 1)
        #expect(try reload.reload.outcome.get().added == ["local"])
        #expect(running.reports.all.count == 2, "\(running.reports.all.map(\.reload.outcome))")
    }
}
