import Foundation

/// Runs commands (`ip`, mostly) without blocking a thread of Swift's concurrency pool.
enum Shell {
    /// `ip` lives in /usr/sbin, /sbin or /bin depending on the distribution.
    static let ip: String =
        ["/usr/sbin/ip", "/sbin/ip", "/bin/ip", "/usr/bin/ip"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/sbin/ip"

    struct Output: Sendable {
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

    /// Runs `ip ARGUMENTS…`; throws unless it exits 0.
    @discardableResult
    static func ip(_ arguments: String...) async throws -> Output {
        try await run(ip, arguments)
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String], check: Bool = true) async throws -> Output {
        let output = try await withCheckedThrowingContinuation { continuation in
            // A thread outside the concurrency pool waits for the process.
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(executable, arguments) })
            }
        }
        if check, output.status != 0 { throw Failure(command: [executable] + arguments, output: output) }
        return output
    }

    /// For cleanup paths that cannot await (deinit): blocks the calling thread.
    static func runBlocking(_ executable: String, _ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()  // read first: a full pipe would block it
        process.waitUntilExit()
        let returnedAt = ContinuousClock.now
        return Output(
            status: process.terminationStatus, text: String(decoding: data, as: UTF8.self), returnedAt: returnedAt)
    }
}
