/// Collects SSE `data:` lines into events (one status JSON per event).
package struct EventStreamReader {
    private var pending = ""
    private var data: [String] = []

    package init() {}

    package mutating func feed(_ bytes: [UInt8]) -> [String] {
        pending += String(decoding: bytes, as: UTF8.self)
        var events: [String] = []
        while let newline = pending.firstIndex(of: "\n") {
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.isEmpty {
                if !data.isEmpty { events.append(data.joined(separator: "\n")) }
                data = []
            } else if line.hasPrefix("data:") {
                data.append(String(line.dropFirst(5).drop { $0 == " " }))
            }
        }
        return events
    }
}
