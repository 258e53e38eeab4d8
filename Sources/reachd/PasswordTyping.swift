/// A password typed at a terminal whose echo and line editing are off (`PasswordPrompt`): the
/// keys a line editor would have handled, handled here — so Ctrl-C ends the prompt at once
/// instead of waiting for Enter, as it would with only the echo off.
struct PasswordTyping {
    enum Step: Equatable {
        /// More keys to come.
        case typing
        /// Enter: the password.
        case entered([UInt8])
        /// Ctrl-C, or Ctrl-D on an empty line.
        case cancelled
    }

    private var typed: [UInt8] = []

    mutating func key(_ byte: UInt8) -> Step {
        switch byte {
        case UInt8(ascii: "\r"), UInt8(ascii: "\n"): return .entered(typed)
        case 0x03: return .cancelled  // Ctrl-C
        case 0x04: return typed.isEmpty ? .cancelled : .typing  // Ctrl-D
        case 0x15: typed = []  // Ctrl-U: the line so far
        case 0x7F, 0x08:  // Backspace: the last character, all its UTF-8 bytes
            while let last = typed.popLast(), last & 0xC0 == 0x80 {}
        default: typed.append(byte)
        }
        return .typing
    }
}
