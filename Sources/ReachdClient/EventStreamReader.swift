/// Collects SSE `data:` lines into events (one status JSON per event).
///
/// Bytes are kept until their line is complete and only then read as UTF-8: a chunk (or a read)
/// may end inside a character, such as the `ü` of an interface name.
package struct EventStreamReader {
    private var pending: [UInt8] = []
    private var data: [String] = []

    package init() {}

    package mutating func feed(_ bytes: [UInt8]) -> [String] {
        pending += bytes
        var events: [String] = []
        var start = pending.startIndex
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var line = pending[start..<newline]
            start = newline + 1
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty {
                if !data.isEmpty { events.append(data.joined(separator: "\n")) }
                data = []
            } else if line.starts(with: "data:".utf8) {
                data.append(String(decoding: line.dropFirst(5).drop { $0 == UInt8(ascii: " ") }, as: UTF8.self))
            }
        }
        pending.removeSubrange(..<start)
        return events
    }
}
