import Foundation
import Probes
import Reachable
import TestSupport
import Testing

/// `--targets-file`: what a line may be, and every way a file is refused, with its line.
@Suite struct TargetsFileTests {
    static let flags = try! TargetSpec.parseList(["db=tcp://db.internal:5432"])

    func read(_ text: String, required: [String] = []) throws(TargetsFileError) -> [TargetSpec] {
        var file = TargetsFile(path: "/etc/reachd/targets", flagTargets: Self.flags)
        file.requiredNames = required
        return try file.targets(in: Array(text.utf8))
    }

    func refusal(_ text: String, required: [String] = []) -> TargetsFileError? {
        do {
            _ = try read(text, required: required)
            return nil
        } catch {
            return error
        }
    }

    @Test func blankLinesCommentsAndSpacesAreIgnoredAndTheFlagsComeFirst() throws {
        let text = [
            "# the app beside us", "web=http://127.0.0.1:8080/healthz", "", "  \t", "dns=host://example.internal\r",
            "  # indented comment", "  cache=tcp://[2001:db8::1]:6379  ", "api=tcp://api.test:443\t# after a tab",
            "page=https://page.test/#top   # a fragment has no space before its #",
        ].joined(separator: "\n")
        let targets = try read(text)
        #expect(targets.map(\.name) == ["db", "web", "dns", "cache", "api", "page"])
        #expect(targets[4].url.text == "tcp://api.test:443", "a comment after the spec")
        #expect(targets[5].url.text == "https://page.test/#top")
        #expect(targets[1].url.text == "http://127.0.0.1:8080/healthz")
        #expect(
            targets[2].url.text == "host://example.internal", "the carriage return of a Windows line is not part of it")
        #expect(targets[3].url.text == "tcp://[2001:db8::1]:6379")
    }

    @Test func aLineMayPinItsTargetToAnInterface() throws {
        let targets = try read("backup@wwan0=tcp://api.test:443\nlan@eth1=host://[2001:db8::1]\n")
        #expect(targets.map(\.name) == ["db", "backup", "lan"])
        #expect(targets.map(\.egress) == [.kernelChoice, .pinned(to: "wwan0"), .pinned(to: "eth1")])
        #expect(refusal("db@eth1=tcp://db.internal:5432") != nil, "a flag's name, whatever the interface")
        #expect(refusal("x@a/b=tcp://x:1") != nil)
    }

    @Test func anEmptyFileLeavesTheFlagsAlone() throws {
        #expect(try read("").map(\.name) == ["db"])
        #expect(try read("\n# nothing yet\n").map(\.name) == ["db"])
    }

    @Test func aBadLineIsRefusedWithItsNumberAndItsSpec() throws {
        let error = try #require(refusal("web=http://127.0.0.1/\n\n# ok so far\nbad name=tcp://x.test:1\n"))
        #expect(error.line == 4)
        guard case .invalidSpec(let spec) = error.problem else {
            Issue.record("want an invalid spec, got \(error.problem)")
            return
        }
        #expect(spec.problem == .invalidName)
        #expect("\(error)".contains("/etc/reachd/targets, line 4"))
        #expect("\(error)".contains("bad name=tcp://x.test:1"))
    }

    @Test(arguments: ["nosign", "a=ftp://x.test/", "a=tcp://x.test", "=host://x.test", "a="])
    func everyKindOfBadSpecIsRefused(line: String) throws {
        let error = try #require(refusal("ok=host://x.test\n\(line)\n"))
        #expect(error.line == 2, "\(error)")
    }

    @Test func aNameOfAFlagOrOfAnEarlierLineIsRefused() throws {
        let ofFlag = try #require(refusal("web=host://a.test\ndb=host://b.test\n"))
        #expect(ofFlag.line == 2)
        #expect(ofFlag.problem == .nameOfAFlag("db"))
        #expect("\(ofFlag)".contains("--target"))

        let twice = try #require(refusal("web=host://a.test\n\nweb=host://b.test\n"))
        #expect(twice.line == 3)
        #expect(twice.problem == .nameOfAnotherLine("web", line: 1))
        #expect("\(twice)".contains("line 1"))
    }

    @Test func aFileWithoutATargetThatReadinessNeedsIsRefused() throws {
        #expect(try read("web=host://a.test\n", required: ["web", "db"]).count == 2, "db is a flag: always there")
        let error = try #require(refusal("api=host://a.test\n", required: ["web"]))
        #expect(error.line == nil)
        #expect(error.problem == .requiredTargetMissing("web"))
        #expect("\(error)".contains("--ready-when target:web"))
    }

    @Test func aMissingFileSaysWhy() throws {
        let file = TargetsFile(path: "/nonexistent/reachd-targets", flagTargets: [])
        #expect {
            try file.read()
        } throws: { error in
            guard let error = error as? TargetsFileError, case .unreadable(let reason) = error.problem else {
                return false
            }
            return reason.contains("No such file or directory")
        }
    }

    @Test func aFileIsReadThroughSymlinksAndSizeIsBounded() throws {
        let directory = try TemporaryDirectory()
        try "web=host://127.0.0.1\n".write(toFile: directory.file("real"), atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory.file("targets"), withDestinationPath: "real")
        let file = TargetsFile(path: directory.file("targets"), flagTargets: [])
        #expect(try file.read().map(\.name) == ["web"])

        let huge = String(repeating: "# padding\n", count: TargetsFile.maximumSize / 10 + 1)
        try huge.write(toFile: directory.file("real"), atomically: false, encoding: .utf8)
        #expect(throws: TargetsFileError(path: directory.file("targets"), problem: .tooLarge)) { try file.read() }
    }
}
