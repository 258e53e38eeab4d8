import Foundation

/// A directory for one test's files (resolv.conf, keys, logs), removed when the test ends.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init() throws {
        var template = Array("/tmp/reachd-probes-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ChildProcess.SpawnError(description: "mkdtemp failed") }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Replaces a file the way editors and resolvconf do: write a new one, rename it over the old.
    public func replace(_ name: String, with text: String) throws {
        let temporary = file(".\(name).new")
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, file(name)) == 0 else {
            throw ChildProcess.SpawnError(description: "rename: \(String(cString: strerror(errno)))")
        }
    }
}
