import Foundation
import TestSupport
import Testing

@testable import Reachable

/// `FileWatch` with real inotify in a temporary directory: every way a file is changed counts —
/// a symlink swapped anywhere along the path above all — and what leaves it as it was does not.
/// The kernel queues an event before the call that caused it returns, so each drain is exact.
@Suite struct FileWatchTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    func write(_ name: String, _ text: String) throws {
        let path = directory.file(name)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Points `link` at `target` the way deploy tools do: a new symlink renamed over the old one.
    func swap(_ link: String, to target: String) throws {
        let temporary = directory.file("\(link).tmp")
        try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: target)
        try #require(rename(temporary, directory.file(link)) == 0)
    }

    /// `root/current -> v1`, the file two levels below it: `root/current/app/conf`.
    func deployLayout() throws -> FileWatch {
        try write("root/v1/app/conf", "one")
        try write("root/v2/app/conf", "two")
        try swap("root/current", to: "v1")
        return try FileWatch(path: directory.file("root/current/app/conf"), completedWritesOnly: true)
    }

    @Test func aSymlinkedDirectoryTwoLevelsUpSwappedIsAChange() throws {
        let watch = try deployLayout()
        #expect(!watch.drain())
        try swap("root/current", to: "v2")
        #expect(watch.drain(), "current -> v2, v1 left in place")
        // Followed: v2's file is watched now, v1's no longer.
        try write("root/v1/app/conf", "one again")
        #expect(!watch.drain())
        try write("root/v2/app/conf", "two again")
        #expect(watch.drain())
        try swap("root/current", to: "v1")
        #expect(watch.drain())
    }

    @Test func aSwapToTheSameTargetOrANameBesideIsNoChange() throws {
        let watch = try deployLayout()
        try swap("root/current", to: "v1")
        #expect(!watch.drain())
        try write("root/v3/app/conf", "three")
        try write("root/current/app/other", "beside")
        #expect(!watch.drain())
    }

    @Test func aDirectoryOnTheWayRenamedAndReplacedIsAChange() throws {
        try write("etc/conf.d/targets", "one")
        let watch = try FileWatch(path: directory.file("etc/conf.d/targets"))
        try #require(rename(directory.file("etc/conf.d"), directory.file("etc/conf.old")) == 0)
        #expect(watch.drain(), "gone with its directory")
        try write("etc/conf.d/targets", "two")
        #expect(watch.drain(), "a new directory, a new file")
        try write("etc/conf.d/targets", "three")
        #expect(watch.drain(), "and the new file is watched")
    }

    @Test func kubernetesDataSwapThroughTheFileOrTheDataDirectory() throws {
        try write("s/..2026_12_07_v1/tls.crt", "one")
        try write("s/..2026_12_07_v2/tls.crt", "two")
        try swap("s/..data", to: "..2026_12_07_v1")
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("s/tls.crt"), withDestinationPath: "..data/tls.crt")
        let throughFile = try FileWatch(path: directory.file("s/tls.crt"), completedWritesOnly: true)
        let throughData = try FileWatch(path: directory.file("s/..data/tls.crt"), completedWritesOnly: true)
        try swap("s/..data", to: "..2026_12_07_v2")
        #expect(throughFile.drain())
        #expect(throughData.drain())
        try FileManager.default.removeItem(atPath: directory.file("s/..2026_12_07_v1"))
        #expect(!throughFile.drain(), "the old version removed after the swap")
        #expect(!throughData.drain())
    }

    @Test func writtenInPlaceRenamedOverAndCreatedLater() throws {
        let watch = try FileWatch(path: directory.file("resolv.conf"), completedWritesOnly: true)
        #expect(!watch.drain())
        try write("resolv.conf", "nameserver 127.0.0.1\n")
        #expect(watch.drain(), "created")
        try write("resolv.conf", "nameserver 127.0.0.2\n")
        #expect(watch.drain(), "written in place")
        try directory.replace("resolv.conf", with: "nameserver 127.0.0.3\n")
        #expect(watch.drain(), "renamed over")
        try write("resolv.conf", "nameserver 127.0.0.4\n")
        #expect(watch.drain(), "the renamed file is watched")
    }

    /// Something happening beside the path while the file is being written is no reason to read it
    /// half written: the write counts when the writer closes the file.
    @Test func aNameBesideDoesNotCountAFileHalfWritten() throws {
        try write("etc/targets", "one")
        let watch = try FileWatch(path: directory.file("etc/targets"), completedWritesOnly: true)
        let handle = try #require(FileHandle(forWritingAtPath: directory.file("etc/targets")))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Array("half".utf8))
        try write("etc/other", "beside")
        try write("unrelated/file", "further up")
        #expect(!watch.drain())
        try handle.close()
        #expect(watch.drain())
    }

    /// A directory created later on the way, then the file in it: both seen from the parent up.
    @Test func aMissingDirectoryCreatedLater() throws {
        let watch = try FileWatch(path: directory.file("later/current/conf"))
        try FileManager.default.createDirectory(atPath: directory.file("later/v1"), withIntermediateDirectories: true)
        try swap("later/current", to: "v1")
        #expect(!watch.drain(), "no file yet")
        try write("later/v1/conf", "one")
        #expect(watch.drain())
    }
}
