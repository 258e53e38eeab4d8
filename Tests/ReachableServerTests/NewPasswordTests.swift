import ReachableServer
import Testing

/// What `reachd hash-password` takes as the password, and what it refuses before hashing.
struct NewPasswordTests {
    @Test(arguments: [
        ("hunter2\n", "hunter2"), ("hunter2\r\n", "hunter2"), ("hunter2", "hunter2"),
        ("hunter2\nsecond line\n", "hunter2"), ("  spaced \t\n", "  spaced \t"), ("\n", ""),
        // A carriage return not before the line end is the password's.
        ("a\rb\n", "a\rb"), ("ends in CR\r", "ends in CR\r"),
    ])
    func theFirstLineWithoutItsEnd(input: String, password: String) {
        #expect(NewPassword.firstLine(Array(input.utf8)) == Array(password.utf8))
    }

    @Test func emptyIsRefused() {
        #expect(NewPassword.refusal([]) == "the password is empty")
    }

    /// bcrypt reads 72 bytes: 72 is taken, 73 refused (a multi-byte character counts its bytes).
    @Test func over72BytesIsRefused() {
        #expect(NewPassword.refusal(Array(repeating: UInt8(ascii: "x"), count: 72)) == nil)
        #expect(
            NewPassword.refusal(Array(repeating: UInt8(ascii: "x"), count: 73))
                == "the password is 73 bytes: bcrypt reads only the first 72")
        #expect(NewPassword.refusal(Array(String(repeating: "é", count: 37).utf8)) != nil)
    }

    @Test func aNULIsRefused() {
        #expect(NewPassword.refusal(Array("a\u{0}b".utf8)) == "the password holds a NUL byte")
    }

    @Test func twoThatDifferAreRefused() {
        #expect(
            NewPassword.refusal(Array("hunter2".utf8), repeated: Array("hunter3".utf8)) == "the two passwords differ")
        #expect(NewPassword.refusal(Array("hunter2".utf8), repeated: Array("hunter2".utf8)) == nil)
        // Empty twice: the first reason, not "differ".
        #expect(NewPassword.refusal([], repeated: []) == "the password is empty")
    }
}
