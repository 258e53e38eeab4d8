import Reachable
import Synchronization

/// The last `--history` changes of the document, for `GET /changes`. Each is diffed once, when
/// the server publishes it (`record`), against the document published before; the answer is
/// rendered then too, so a request copies nothing and computes nothing.
///
/// The document the server starts with is the baseline, not a change: it has nothing before it
/// to differ from (the monitor's `unknown` before the first reading was never served). Every
/// document published after it is a change, even one whose diff is empty (only bookkeeping such
/// as a `since` moved): its sequence was served, and `/changes` leaves none out. A document the
/// server's loop skipped (the monitor keeps only the newest for a slow reader) is folded into the
/// next change's diff.
///
/// The last document is kept as its text (shared with the snapshot that serves it), not parsed:
/// each diff parses only what is not the same in both texts (`UnchangedEntries`) — at 10,000
/// targets a kept tree was 2.6 KB a target, and parsing each document whole 150–250 ms.
final class ChangeHistory: Sendable {
    private struct State {
        /// The last document recorded: what the next one is compared with.
        var previous: [UInt8]
        /// Each change's JSON object, rendered once.
        var changes: RingBuffer<[UInt8]>
        var response: SharedResponse
    }

    static let headers = [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-cache")]

    private let state: Mutex<State>

    /// - Parameters:
    ///   - capacity: how many changes are kept (`--history`, at least 1).
    ///   - baseline: the encoded document the server starts with.
    init(capacity: Int, baseline: [UInt8]) {
        let changes = RingBuffer<[UInt8]>(capacity: capacity)
        state = Mutex(
            State(
                previous: baseline, changes: changes,
                response: Self.response(changes)))
    }

    /// Records the document just published (its encoded form); returns how many changes are kept.
    /// A text that is not JSON (reachd's own encoder wrote it: a defect) is left out, and the next
    /// change is compared with the last one recorded; a baseline that is not JSON counts as `null`.
    @discardableResult
    func record(_ json: [UInt8]) -> Int {
        // Diffed and rendered before the lock: publishing is the only writer, and a request
        // waits for nothing but the swap.
        let previousText = state.withLock { $0.previous }
        var (before, after) = UnchangedEntries.removed(from: previousText, json) ?? (previousText, json)
        let previous = try? JSONValue(parsing: before)
        // A baseline that is not JSON shares nothing: the whole document is the change.
        if previous == nil { after = json }
        guard let document = try? JSONValue(parsing: after) else { return count }
        let entry = Self.entry(for: document, diff: DocumentDiff.changes(from: previous ?? .null, to: document))
        let (released, kept) = state.withLock { state in
            state.previous = json
            state.changes.append(entry)
            let released = state.response
            state.response = Self.response(state.changes)
            return (released, state.changes.count)
        }
        // The replaced response (and the daemon's form of it) is released out of the lock.
        _ = released
        return kept
    }

    /// The `/changes` answer as of the last change.
    var response: SharedResponse { state.withLock { $0.response } }

    /// How many changes are kept (`reachd_changes_kept`).
    var count: Int { state.withLock { $0.changes.count } }

    /// `{"sequence": 17, "changedAt": "…", "diff": [{"field": …, "from": …, "to": …}, …]}`.
    private static func entry(for document: JSONValue, diff: [FieldChange]) -> [UInt8] {
        let json = JSONWriter()
        json.object {
            json.field("sequence") { (document["sequence"] ?? .null).write(to: json) }
            json.field("changedAt") { (document["changedAt"] ?? .null).write(to: json) }
            json.field("diff") { json.array(diff) { $0.write(to: json) } }
        }
        return json.bytes
    }

    /// `{"changes": [oldest, …, newest]}`.
    private static func response(_ changes: RingBuffer<[UInt8]>) -> SharedResponse {
        var body = Array(#"{"changes":["#.utf8)
        for (index, change) in changes.elements.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += change
        }
        body += Array("]}".utf8)
        return SharedResponse(headers: headers, body: body)
    }
}
