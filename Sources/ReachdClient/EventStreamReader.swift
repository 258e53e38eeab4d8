/// Collects SSE `data:` lines into events (one status JSON per event), and keeps what a client
/// needs to reconnect: the last event's `id:` and the server's `retry:`.
///
/// Bytes are kept until their line is complete and only then read as UTF-8: a chunk (or a read)
/// may end inside a character, such as the `ü` of an interface name.
package struct EventStreamReader {
    private var pending: [UInt8] = []
    private var data: [String] = []
    private var eventID: String?

    /// The `id:` of the last event dispatched, sent back as `Last-Event-ID` on reconnecting.
    package private(set) var lastEventID: String?
    /// The server's reconnection delay (`retry:`), in milliseconds, if it gave one.
    package private(set) var retry: Int?

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
                // As the HTML standard dispatches: the id counts even for an event without data.
                if let eventID { lastEventID = eventID }
                if !data.isEmpty { events.append(data.joined(separator: "\n")) }
                data = []
            } else if line.starts(with: "data:".utf8) {
                data.append(Self.value(line.dropFirst(5)))
            } else if line.starts(with: "id:".utf8) {
                let id = Self.value(line.dropFirst(3))
                if !id.contains("\0") { eventID = id }
            } else if line.starts(with: "retry:".utf8) {
                let digits = Self.value(line.dropFirst(6))
                // Digits only, as the HTML standard reads it; one too large for an Int is ignored.
                if digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                    let milliseconds = Int(digits)
                {
                    retry = milliseconds
                }
            }
        }
        pending.removeSubrange(..<start)
        return events
    }

    /// A field's value: after the colon, without the one space that may follow it.
    private static func value(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.first == UInt8(ascii: " ") ? bytes.dropFirst() : bytes, as: UTF8.self)
    }
}
