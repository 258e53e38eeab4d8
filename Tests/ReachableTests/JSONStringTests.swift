import FoundationEssentials
import Reachable
import Testing

/// The one JSON string escaper (status document and log lines alike).
struct JSONStringTests {
    @Test(arguments: [
        ("plain", #""plain""#), ("a\"b\\c", #""a\"b\\c""#), ("\n\r\t", #""\n\r\t""#),
        ("\u{0}\u{1f}", #""\u0000\u001f""#), ("\u{7f}", #""\u007f""#), ("\u{80}\u{9b}\u{9f}", #""\u0080\u009b\u009f""#),
        ("é ü 中 🙂 \u{a0}", "\"é ü 中 🙂 \u{a0}\""),
    ])
    func controlsAreEscapedAndEverythingElseIsKept(text: String, expected: String) {
        #expect(JSONString.quoted(text) == expected)
    }

    @Test func whatItWritesReadsBackAsTheSameText() throws {
        let text = "eth\u{7f}0 \u{9b}31m \"x\" \\ \u{1} end 🙂"
        let decoded = try JSONDecoder().decode([String].self, from: Data(("[" + JSONString.quoted(text) + "]").utf8))
        #expect(decoded == [text])
    }
}
