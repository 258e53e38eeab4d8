import Reachable
import Synchronization

/// The last `--history` changes of the document, for `GET /changes` (within a byte budget:
/// `KeptChanges`). Each is diffed once, when the server publishes it (`record`), against the
/// document published before. The answer is rendered by the first request after a change and
/// shared by the requests after it: a change nobody asks for costs no second copy of every kept
/// change (at 10,000 targets the first change alone is about 5 MB).
///
/// The document the server starts with is the baseline, not a change: it has nothing before it
/// to differ from (the monitor's `unknown` before the first reading was never served). Every
/// document published after it is a change, even one whose diff is empty (only bookkeeping such
/// as a `since` moved): its sequence was served, and `/changes` leaves none out. A document the
/// server's loop skipped (the monitor keeps only the newest for a slow reader) is folded into the
/// next change's diff.
///
/// The last document is kept as its text (the snapshot's slice of its SSE frame: not a copy),
/// not parsed: each diff parses only what is not the same in both texts (`UnchangedEntries`) — at
/// 10,000 targets a kept tree was 2.6 KB a target, and parsing each document whole 150–250 ms.
/// The scan takes arrays: the two texts are copied for it while it runs (about 1 ms each at
/// 10,000 targets, after the frame is handed to the streams), not kept.
final class ChangeHistory: Sendable {
    private struct State {
        /// The last document recorded: what the next one is compared with.
        var previous: ArraySlice<UInt8>
        /// Each change's JSON object, rendered once.
        var changes: KeptChanges
        /// The answer for `changes`, once a request has asked for it.
        var response: SharedResponse?
        /// How many changes were recorded: tells a rendered answer from a later change.
        var recorded = 0
    }

    static let headers = [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-cache")]

    private let state: Mutex<State>

    /// - Parameters:
    ///   - capacity: how many changes are kept (`--history`, at least 1).
    ///   - byteBudget: how many bytes of changes are kept at most (the newest always is).
    ///   - baseline: the encoded document the server starts with.
    init(capacity: Int, byteBudget: Int = KeptChanges.defaultByteBudget, baseline: ArraySlice<UInt8>) {
        let changes = KeptChanges(capacity: capacity, byteBudget: byteBudget)
        state = Mutex(State(previous: baseline, changes: changes, response: nil))
    }

    /// Records the document just published (its encoded form); returns how many changes are kept.
    /// A text that is not JSON (reachd's own encoder wrote it: a defect) is left out, and the next
    /// change is compared with the last one recorded; a baseline that is not JSON counts as `null`.
    @discardableResult
    func record(_ json: ArraySlice<UInt8>) -> Int {
        // Diffed and rendered before the lock: publishing is the only writer, and a request
        // waits for nothing but the swap.
        let previousText = Array(state.withLock { $0.previous })
        let text = Array(json)
        var (before, after) = UnchangedEntries.removed(from: previousText, text) ?? (previousText, text)
        let previous = try? JSONValue(parsing: before)
        // A baseline that is not JSON shares nothing: the whole document is the change.
        if previous == nil { after = text }
        guard let document = try? JSONValue(parsing: after) else { return count }
        let entry = Self.entry(for: document, diff: DocumentDiff.changes(from: previous ?? .null, to: document))
        let (released, kept) = state.withLock { state in
            state.previous = json
            state.changes.append(entry)
            state.recorded += 1
            let released = state.response
            state.response = nil
            return (released, state.changes.count)
        }
        // The replaced response (and the daemon's form of it) is released out of the lock.
        _ = released
        return kept
    }

    /// The `/changes` answer as of the last change: rendered by the first request after it,
    /// outside the lock (two first requests at once may both render; both serve the one stored).
    var response: SharedResponse {
        let (rendered, changes, recorded) = state.withLock { ($0.response, $0.changes, $0.recorded) }
        if let rendered { return rendered }
        let made = Self.response(changes)
        return state.withLock { state in
            // A change recorded meanwhile is not in `made`: serve it, but do not keep it.
            guard state.recorded == recorded else { return made }
            if let stored = state.response { return stored }
            state.response = made
            return made
        }
    }

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
        // Kept for as long as the change is: without the room the writer grew into (up to half).
        let written = json.bytes
        return [UInt8](unsafeUninitializedCapacity: written.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: written)
        }
    }

    /// `{"changes": [oldest, …, newest]}`.
    private static func response(_ changes: KeptChanges) -> SharedResponse {
        var body = Array(#"{"changes":["#.utf8)
        body.reserveCapacity(changes.bytes + changes.count + 16)
        for (index, change) in changes.elements.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += change
        }
        body += Array("]}".utf8)
        return SharedResponse(headers: headers, body: body)
    }
}
