import Glibc
import Reachable

/// `--targets-file PATH`: one `NAME=URL` per line (blank lines and `#` comments, whole lines or
/// after a spec, ignored), in addition to the `--target` flags, which stay first in the document. Read at start
/// and again on SIGHUP or when the file changes; the same rules decide both times, so a file that
/// would be refused at start is never applied later either.
public struct TargetsFile: Sendable, Equatable {
    /// A file larger than this is refused: a targets file is a few lines, never a log.
    public static let maximumSize = 1 << 20

    public let path: String
    /// The `--target` specs (or `REACHD_TARGETS`): fixed for the process, first in the document.
    public let flagTargets: [TargetSpec]
    /// Names `--ready-when target:NAME` needs: the readiness list is fixed for the process, so a
    /// file without one of them is not applied (at start, `--ready-when` itself is refused).
    public var requiredNames: [String] = []

    public init(path: String, flagTargets: [TargetSpec]) {
        self.path = path
        self.flagTargets = flagTargets
    }

    /// Reads the file: every target, the flags' first, then the file's in file order.
    public func read() throws(TargetsFileError) -> [TargetSpec] {
        try targets(in: try contents())
    }

    /// The file's bytes, as `read` takes them (the reloader compares them with the last read).
    public func contents() throws(TargetsFileError) -> [UInt8] {
        do {
            return try Self.readAll(path)
        } catch let error as SystemError {
            throw TargetsFileError(path: path, problem: .unreadable(error.description))
        } catch {
            throw TargetsFileError(path: path, problem: .tooLarge)
        }
    }

    /// Every target of `text` after the flags', or the first problem with its line.
    public func targets(in bytes: [UInt8]) throws(TargetsFileError) -> [TargetSpec] {
        var targets = flagTargets
        var lineOfName: [String: Int] = [:]
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = Self.withoutComment(String(decoding: raw, as: UTF8.self)).trimmed
            if line.isEmpty { continue }
            let spec: TargetSpec
            do {
                spec = try TargetSpec.parse(line)
            } catch {
                throw TargetsFileError(path: path, line: number, problem: .invalidSpec(error))
            }
            if flagTargets.contains(where: { $0.name == spec.name }) {
                throw TargetsFileError(path: path, line: number, problem: .nameOfAFlag(spec.name))
            }
            if let earlier = lineOfName[spec.name] {
                throw TargetsFileError(path: path, line: number, problem: .nameOfAnotherLine(spec.name, line: earlier))
            }
            lineOfName[spec.name] = number
            targets.append(spec)
        }
        for name in requiredNames where !targets.contains(where: { $0.name == name }) {
            throw TargetsFileError(path: path, problem: .requiredTargetMissing(name))
        }
        // The configuration keeps this list: without the room doubling left (up to twice the
        // targets: docs/scale.md). Not reserved from the line count: comment lines would count.
        guard targets.capacity > targets.count + targets.count / 8 else { return targets }
        return [TargetSpec](unsafeUninitializedCapacity: targets.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: targets)
        }
    }

    /// The line up to a `#` that starts it or follows a space or tab (`db=tcp://db:5432  # the
    /// database`); a `#` inside a spec (a URL's fragment) has no space before it and stays.
    static func withoutComment(_ line: String) -> Substring {
        var previous: Character = " "
        for index in line.indices {
            if line[index] == "#", previous == " " || previous == "\t" { return line[..<index] }
            previous = line[index]
        }
        return line[...]
    }

    /// Reads the whole file (following symlinks: a ConfigMap's file is one), at most `maximumSize`.
    private static func readAll(_ path: String) throws -> [UInt8] {
        let descriptor = OwnedDescriptor(
            taking: try systemCall("open \(path)") { open(path, O_RDONLY | O_CLOEXEC) })
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = try systemCall("read \(path)") { Glibc.read(descriptor.rawValue, &chunk, chunk.count) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > maximumSize { throw TooLarge() }
        }
    }

    private struct TooLarge: Error {}
}

/// Why a targets file was refused (at start) or not applied (on a reload). The message names the
/// file and, for a line's problem, the line.
public struct TargetsFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        /// It could not be opened or read (the system's reason).
        case unreadable(String)
        /// Larger than `TargetsFile.maximumSize`.
        case tooLarge
        /// A line is not a valid `NAME=URL`.
        case invalidSpec(SpecError)
        /// A `--target` flag already has this name.
        case nameOfAFlag(String)
        /// An earlier line has this name.
        case nameOfAnotherLine(String, line: Int)
        /// A `--ready-when target:NAME` names a target the file no longer has.
        case requiredTargetMissing(String)
    }

    public var path: String
    /// 1-based; `nil` when the problem is the whole file's.
    public var line: Int?
    public var problem: Problem

    public init(path: String, line: Int? = nil, problem: Problem) {
        self.path = path
        self.line = line
        self.problem = problem
    }

    public var description: String {
        let place = line.map { "\(path), line \($0)" } ?? path
        return "targets file \(place): \(explanation)"
    }

    /// Without the path, for the document's `targetsFile.error` (the path is beside it there).
    public var summary: String {
        line.map { "line \($0): \(explanation)" } ?? explanation
    }

    private var explanation: String {
        switch problem {
        case .unreadable(let reason): "cannot be read: \(reason)"
        case .tooLarge: "larger than \(TargetsFile.maximumSize) bytes"
        case .invalidSpec(let error): error.description
        case .nameOfAFlag(let name): "the name \"\(name)\" is already given by --target"
        case .nameOfAnotherLine(let name, let earlier): "the name \"\(name)\" is already on line \(earlier)"
        case .requiredTargetMissing(let name):
            "it has no target \"\(name)\", which --ready-when target:\(name) needs"
        }
    }
}
