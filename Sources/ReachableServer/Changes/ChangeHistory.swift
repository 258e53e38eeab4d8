import Reachable
import Synchronization

/// The last `--history` changes of the document, for `GET /changes` (within a byte budget:
/// `KeptChanges`). Each is diffed once, when the server publishes it (`record`), against the
/// document published before. The answer is rendered by the first request after a change and
/// shared by the requests after it: a change nobody asks for costs no second copy of every kept
/// change (a fleet's first change alone is megabytes).
///
/// The document the server starts with is the baseline, not a change: it has nothing before it
/// to differ from (the monitor's `unknown` before the first reading was never served). Every
/// document published after it is a change, even one whose diff is empty (only bookkeeping such
/// as a `since` moved): its sequence was served, and `/changes` leaves none out. A document the
/// server's loop skipped (the monitor keeps only the newest for a slow reader) is folded into the
/// next change's diff.
///
/// Each change is computed from the values (`UnchangedEntries` takes out the entries both
/// documents share unchanged; the rest are built as trees by the document's one encoder and
/// compared by `DocumentDiff`) and worded once (`ChangeText`): the page shows those lines, and no
/// JSON is parsed here.
final class ChangeHistory: Sendable {
    private struct State {
        /// The last document recorded: what the next one is compared with.
        var previous: ReachabilityStatus
        /// Each change's JSON object, rendered once (and compressed when large).
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
    ///   - baseline: the document the server starts with.
    init(capacity: Int, byteBudget: Int = KeptChanges.defaultByteBudget, baseline: ReachabilityStatus) {
        let changes = KeptChanges(capacity: capacity, byteBudget: byteBudget)
        state = Mutex(State(previous: baseline, changes: changes, response: nil))
    }

    /// Records the document just published; returns how many changes are kept.
    @discardableResult
    func record(_ status: ReachabilityStatus) -> Int {
        // Diffed and rendered before the lock: publishing is the only writer, and a request
        // waits for nothing but the swap.
        let previous = state.withLock { $0.previous }
        let (before, after) = UnchangedEntries.removed(from: previous, status)
        let document = after.jsonValue
        let diff = DocumentDiff.changes(from: before.jsonValue, to: document)
        let entry = KeptChange(Self.entry(for: status, diff: diff, lines: ChangeText.lines(diff, in: document)))
        let (released, kept) = state.withLock { state in
            let replaced = state.previous
            state.previous = status
            state.changes.append(entry)
            state.recorded += 1
            let released = state.response
            state.response = nil
            return ((replaced, released), state.changes.count)
        }
        // The replaced document (often the last reference to its entries) and response (with the
        // daemon's form of it) are released out of the lock.
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

    /// How many changes are kept (`record` returns it for `reachd_changes_kept`).
    var count: Int { state.withLock { $0.changes.count } }

    /// `{"sequence": 17, "changedAt": "…", "diff": [{"field": …, "from": …, "to": …}, …],
    /// "lines": ["target db: reachable → unreachable (refused: …)", …]}`.
    private static func entry(for status: ReachabilityStatus, diff: [FieldChange], lines: [String]) -> [UInt8] {
        // Written where it is kept (a fleet's link-down is a change of megabytes, which a writer
        // grown by doubling copies a dozen times): room for about 96 bytes a field and 80 a line.
        let written = JSONWriter.bytes(capacity: 128 + 96 * diff.count + 80 * lines.count) { json in
            json.object {
                json.field("sequence") { json.raw(String(status.sequence)) }
                json.field("changedAt") { json.timestamp(status.changedAt, ReachabilityStatus.timestampStyle) }
                json.field("diff") { json.array(diff) { $0.write(to: json) } }
                json.field("lines") { json.array(lines) { json.string($0) } }
            }
        }
        // Kept for as long as the change is: without much room unused.
        guard written.capacity - written.count > written.count / 8 else { return written }
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
            change.append(to: &body)
        }
        body += Array("]}".utf8)
        return SharedResponse(headers: headers, body: body)
    }
}
