import ArgumentParser
import Glibc
import ReachableServer

/// `reachd hash-password`: the bcrypt hash of a password for the web config's
/// `basic_auth_users`, so that no other tool (`htpasswd`, Python's bcrypt) is needed — what
/// `caddy hash-password` does for Caddy.
struct HashPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password",
        abstract: "Print the bcrypt hash of a password, for basic_auth_users in --web-config-file.",
        discussion: """
            From a terminal the password is asked twice, without echo; otherwise the first line of \
            stdin is read, its line end (LF or CRLF) removed. An empty password, one over 72 bytes \
            (bcrypt ignores the rest) or two that differ are refused: exit 64.
            """
    )

    @Option(help: "bcrypt's cost, 10 to 14: each step doubles the time every verification takes.")
    var cost: Int = BcryptHashMaking.defaultCost

    /// At most this much of stdin is read for a line: far beyond 72 bytes, so a longer line is
    /// still refused as too long, and a stream without a line end is not read for ever.
    private static let longestLine = 1024

    func validate() throws {
        let costs = BcryptHashMaking.costs
        guard costs.contains(cost) else {
            throw ValidationError("--cost must be \(costs.lowerBound)...\(costs.upperBound)")
        }
    }

    func run() throws {
        let password: [UInt8]
        if isatty(STDIN_FILENO) == 1 {
            let typed = try PasswordPrompt.withQuietTerminal { () -> ([UInt8], [UInt8])? in
                guard let first = PasswordPrompt.read("Password: "), let again = PasswordPrompt.read("Again: ")
                else { return nil }
                return (first, again)
            }
            guard let (first, again) = typed else {
                Output.write("cancelled\n", to: STDERR_FILENO)
                throw ExitCode(130)
            }
            try Self.refuse(NewPassword.refusal(first, repeated: again))
            password = first
        } else {
            password = NewPassword.firstLine(Self.readLine())
            try Self.refuse(NewPassword.refusal(password))
        }
        guard let hash = BcryptHashMaking.hash(password, cost: cost) else {
            Output.write("Error: libxcrypt made no bcrypt hash\n", to: STDERR_FILENO)
            throw ExitCode(1)
        }
        Output.write(hash + "\n")
    }

    /// A refused password: said once, without the usage text (the command was used right), exit 64.
    private static func refuse(_ reason: String?) throws {
        guard let reason else { return }
        Output.write("Error: \(reason)\n", to: STDERR_FILENO)
        throw ExitCode.validationFailure
    }

    /// Stdin up to its first line end (kept, for `NewPassword.firstLine`), its end, or
    /// `longestLine` bytes.
    private static func readLine() -> [UInt8] {
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while input.count <= longestLine, !input.contains(UInt8(ascii: "\n")) {
            let count = Glibc.read(STDIN_FILENO, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            input += chunk[0..<count]
        }
        return input
    }
}
