import Reachable
import Testing

/// The generic JSON reader the diff stands on: order and number text kept, every refusal named.
struct JSONValueTests {
    @Test func membersKeepTheirOrderAndNumbersTheirText() throws {
        let value = try JSONValue(parsing: #" {"z": 18446744073709551615, "a": [true, false, null, -0.5e+3]} "#)
        #expect(
            value
                == .object([
                    .init("z", .number("18446744073709551615")),
                    .init("a", .array([.bool(true), .bool(false), .null, .number("-0.5e+3")])),
                ]))
        #expect(value.jsonText == #"{"z":18446744073709551615,"a":[true,false,null,-0.5e+3]}"#)
    }

    @Test func escapesAreRead() throws {
        let value = try JSONValue(parsing: #""a\"\\\/\b\f\n\r\t\u00fc\ud83d\ude00ü""#)
        #expect(value == .string("a\"\\/\u{08}\u{0C}\n\r\tü😀ü"))
        // Written back through the one escaping writer, then read again: the same value.
        #expect(try JSONValue(parsing: value.jsonText) == value)
    }

    @Test(arguments: [
        "", "   ", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "{1:2}", "tru", "nul", "01x", "-", "1.", "1e", "\"abc",
        "\"\\x\"", "\"\\u12\"", "\"\\u12zz\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "\"\\udc00\"", "\"a\u{01}\"", "1 2",
        "[1] x", "@",
    ])
    func malformedTextIsRefused(text: String) {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: [0x22, 0xFF, 0x22]) }
    }

    @Test func nestingIsBounded() throws {
        let depth = JSONValue.maximumDepth
        let deep = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: deep) }
        let fine = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        _ = try JSONValue(parsing: fine)
    }

    @Test func membersAndStringsAreLookedUp() throws {
        let value = try JSONValue(parsing: #"{"name":"db","n":1}"#)
        #expect(value["name"]?.stringValue == "db")
        #expect(value["n"]?.stringValue == nil)
        #expect(value["missing"] == nil)
        #expect(JSONValue.null["name"] == nil)
    }
}
