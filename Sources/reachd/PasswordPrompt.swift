import Glibc

/// Reads passwords typed at the terminal on stdin, without echo (termios), the prompts on stderr
/// so that stdout holds only the hash.
enum PasswordPrompt {
    /// Runs `body` with the terminal's echo, line editing and signal keys off (`PasswordTyping`
    /// does their work), and puts them back as they were — also when `body` throws.
    static func withQuietTerminal<Result>(_ body: () throws -> Result) throws -> Result {
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else {
            throw PasswordPromptFailure(
                description: "cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        withUnsafeMutableBytes(of: &quiet.c_cc) { keys in
            keys[Int(VMIN)] = 1
            keys[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0 else {
            throw PasswordPromptFailure(
                description: "cannot turn the terminal's echo off: \(String(cString: strerror(errno)))")
        }
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        return try body()
    }

    /// Says `prompt` and reads one password; `nil` when cancelled (Ctrl-C, Ctrl-D, the end of
    /// input). Call inside `withQuietTerminal`.
    static func read(_ prompt: String) -> [UInt8]? {
        Output.write(prompt, to: STDERR_FILENO)
        // The Enter the terminal did not echo.
        defer { Output.write("\n", to: STDERR_FILENO) }
        var typing = PasswordTyping()
        while true {
            var byte: UInt8 = 0
            let count = Glibc.read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return nil }
            switch typing.key(byte) {
            case .typing: continue
            case .entered(let password): return password
            case .cancelled: return nil
            }
        }
    }
}

/// The terminal could not be set up for a password.
struct PasswordPromptFailure: Error, CustomStringConvertible {
    let description: String
}
