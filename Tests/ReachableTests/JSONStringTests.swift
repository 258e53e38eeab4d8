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

    /// The document's writer scans eight bytes at a time for what needs escaping (short strings as
    /// one padded word, the tail as an overlapping word): a character that needs it is found at
    /// every place of every length, and what needs none is copied as it is.
    @Test(arguments: ["\"", "\\", "\n", "\u{1}", "\u{1f}", "\u{7f}", "\u{80}", "\u{9f}"])
    func theWriterFindsWhatNeedsEscapingAtEveryPlace(special: String) {
        for length in 1...20 {
            for place in 0..<length {
                let text =
                    String(repeating: "a", count: place) + special + String(repeating: "b", count: length - place - 1)
                let written = String(decoding: JSONWriter.bytes(capacity: 8) { $0.string(text) }, as: UTF8.self)
                #expect(
                    written == JSONString.quoted(text),
                    "\(special.unicodeScalars.map(\.value)) at \(place) of \(length)")
            }
        }
    }

    @Test func theWriterCopiesPlainTextAsItIs() {
        for text in [
            "", "a", "abcdefg", "abcdefgh", "abcdefghi", "é ü 中 🙂 \u{a0}", "~ } | { `",
            String(repeating: "x", count: 1000),
        ] {
            let written = String(decoding: JSONWriter.bytes(capacity: 8) { $0.string(text) }, as: UTF8.self)
            #expect(written == "\"\(text)\"")
        }
    }

    /// A `/changes` field path written from its parts is the parts joined and escaped as one
    /// string, whether or not a part needs escaping.
    @Test func aPathIsWrittenAsItsPartsJoined() {
        for parts in [
            ["targets", "db", "state"], ["dns", "servers", "198.18.0.1", "state"], [], [""], ["eth\"0", "x"],
            ["a\nb", "é", "\u{85}"],
        ] {
            let written = String(
                decoding: JSONWriter.bytes(capacity: 8) { $0.string(joining: parts, separator: ".") }, as: UTF8.self)
            #expect(written == JSONString.quoted(parts.joined(separator: ".")), "\(parts)")
        }
    }

    /// A result larger than the capacity asked for is whole (the writer moves to a buffer of its
    /// own and the array is made from it); one that fits is the same bytes.
    @Test func aResultLargerThanItsCapacityIsWhole() {
        let texts = (0..<500).map { "name-\($0)" }
        let small = JSONWriter.bytes(capacity: 16) { json in json.array(texts) { json.string($0) } }
        let large = JSONWriter.bytes(capacity: 1 << 16) { json in json.array(texts) { json.string($0) } }
        let expected = "[" + texts.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        #expect(String(decoding: small, as: UTF8.self) == expected)
        #expect(small == large)
    }
}
