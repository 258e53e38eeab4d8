/// A password given to `reachd hash-password` for `basic_auth_users`: what is taken as it, and
/// what is refused before any hash is made — so no hash is printed that would not verify as the
/// person meant.
package enum NewPassword {
    /// The most bcrypt reads; it ignores every byte after, so a longer password would verify
    /// with any ending.
    package static let maximumBytes = 72

    /// The first line of `input`, its line end (LF or CRLF) removed: a password piped from a
    /// file, `echo` or a Windows editor ends with one that is not part of it.
    package static func firstLine(_ input: [UInt8]) -> [UInt8] {
        var line = input.firstIndex(of: UInt8(ascii: "\n")).map { Array(input[..<$0]) } ?? input
        if input.contains(UInt8(ascii: "\n")), line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    /// Why `password` cannot be hashed, or `nil` when it can.
    package static func refusal(_ password: [UInt8]) -> String? {
        if password.isEmpty { return "the password is empty" }
        if password.count > maximumBytes {
            return "the password is \(password.count) bytes: bcrypt reads only the first \(maximumBytes)"
        }
        // libxcrypt reads a password up to its first NUL: the rest would not count.
        if password.contains(0) { return "the password holds a NUL byte" }
        return nil
    }

    /// Why the password typed twice cannot be hashed, or `nil` when it can.
    package static func refusal(_ password: [UInt8], repeated: [UInt8]) -> String? {
        refusal(password) ?? (password == repeated ? nil : "the two passwords differ")
    }
}
