import FoundationEssentials
import FuzzSupport
import Reachable
import ReachdClient

/// What `reachd status`, `check` and `watch` do with an answer, fed from the fuzzer instead of a
/// socket: the status line and headers, the body (by length, chunked, or to the end), the SSE
/// events of `/events`, the status document's JSON, and the lines printed from it.
///
/// Input: the command (1 byte: even `status`/`check`, odd `watch`), how many bytes each read
/// returns (1 byte, + 1), then the bytes of the answer as the server would send them.
enum ClientFuzz {
    static func run(_ input: inout FuzzInput) {
        let watches = input.bool()
        let piece = Int(input.byte()) + 1
        let answer = Array(input.rest())
        var offset = 0
        let reader = ResponseReader {
            defer { offset = min(answer.count, offset + piece) }
            return Array(answer[offset..<min(answer.count, offset + piece)])
        }
        do {
            let head = try reader.readHead()
            require(!head.headers.keys.contains { $0 != $0.lowercased() }, "a header name not lowercased")
            if watches {
                try watch(reader, piece: piece)
            } else if let body = try? reader.readBody(after: head), head.status == 200 {
                show(body)
            }
        } catch is LocalHTTPClient.Failure {
            // Refused with a message, as the commands report it.
        } catch {
            require(false, "a failure the commands do not expect: \(error)")
        }
    }

    /// `reachd watch`: every chunk into the SSE reader, one line per document. The events must
    /// not depend on where the chunks end, nor on where the stream would be cut in `piece`s.
    private static func watch(_ reader: ResponseReader, piece: Int) throws {
        var events = EventStreamReader()
        var found: [String] = []
        var stream: [UInt8] = []
        var diffs = WatchLines()
        diffs.streamOpened()
        var previous: [UInt8]?
        while let chunk = try reader.readChunk() {
            stream += chunk
            for data in events.feed(chunk) {
                found.append(data)
                show(Array(data.utf8))
                printDiff(Array(data.utf8), with: &diffs)
                if let previous { diffWithoutSharedEntries(previous, Array(data.utf8)) }
                previous = Array(data.utf8)
            }
        }
        var whole = EventStreamReader()
        let inOnePiece = whole.feed(stream)
        require(found == inOnePiece, "chunk boundaries changed the events: \(found) vs \(inOnePiece)")
        var cut = EventStreamReader()
        var inPieces: [String] = []
        for start in stride(from: 0, to: stream.count, by: piece) {
            inPieces += cut.feed(Array(stream[start..<min(stream.count, start + piece)]))
        }
        require(inPieces == inOnePiece, "pieces of \(piece) bytes changed the events: \(inPieces) vs \(inOnePiece)")
    }

    /// `reachd watch`'s diff lines: the document read as a JSON tree (the diff's own parser, which
    /// must refuse or read anything a server sends) and compared with the one before. A tree it
    /// read is written back and read again as the same tree.
    private static func printDiff(_ body: [UInt8], with diffs: inout WatchLines) {
        guard let document = try? JSONValue(parsing: body) else { return }
        let again = try? JSONValue(parsing: document.jsonText)
        require(again == document, "a JSON tree does not survive its own writer: \(document.jsonText)")
        guard let status = try? ReachabilityStatus(jsonBytes: body) else { return }
        for line in diffs.lines(for: status, document: document) {
            require(
                !line.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7F && $0.value < 0xA0) },
                "a diff line holds a control character: \(line.debugDescription)")
        }
    }

    /// `/changes` diffs two documents without the entries they share (`UnchangedEntries`):
    /// whatever the documents (any two that decode), that is the diff of the whole documents.
    private static func diffWithoutSharedEntries(_ old: [UInt8], _ new: [UInt8]) {
        guard let before = try? ReachabilityStatus(jsonBytes: old), let after = try? ReachabilityStatus(jsonBytes: new)
        else { return }
        let removed = UnchangedEntries.removed(from: before, after)
        func tree(_ status: ReachabilityStatus) -> Reachable.JSONValue? { try? JSONValue(parsing: status.jsonBytes()) }
        guard let wholeBefore = tree(before), let wholeAfter = tree(after), let prunedBefore = tree(removed.old),
            let prunedAfter = tree(removed.new)
        else { return require(false, "reachd's own encoding of a decoded document did not parse") }
        require(
            DocumentDiff.changes(from: prunedBefore, to: prunedAfter)
                == DocumentDiff.changes(from: wholeBefore, to: wholeAfter),
            "the diff without shared entries differs: \(wholeBefore.jsonText) → \(wholeAfter.jsonText)")
    }

    /// `reachd status` (or one line of `watch`): the document decoded and printed.
    private static func show(_ body: [UInt8]) {
        guard let status = try? ReachabilityStatus(jsonBytes: body) else { return }
        var lines = [StatusText.summary(status)]
        lines += status.path.interfaces.map(StatusText.line)
        lines += status.targets.map(StatusText.line)
        lines.append(StatusText.line(status.connectivity))
        lines.append(StatusText.line(status.dns))
        lines += status.dns.servers.map(StatusText.line)
        for line in lines {
            require(
                !line.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7F && $0.value < 0xA0) },
                "a printed line holds a control character: \(line.debugDescription)")
        }
        // What reachd itself would serve for it reads back as the same document. (Not the input
        // itself: the decoder also takes times that are not to the millisecond, say.)
        let served = status.jsonBytes()
        let again = try? ReachabilityStatus(jsonBytes: served)
        let servedAgain = again?.jsonBytes() ?? []
        require(
            servedAgain == served,
            "the document does not survive its own encoder: \(String(decoding: served, as: UTF8.self)) "
                + "then \(String(decoding: servedAgain, as: UTF8.self))")
    }
}
