package import Reachable

/// What `reachd watch` prints for each document it receives: a line saying so when the stream
/// came back (`reconnected`) or the server started again (`restarted`: its sequence went
/// backwards), the document's summary (time, `#sequence`, state: `StatusText.summary`), and the
/// diff from the document seen before, in words, each line indented by two spaces.
///
/// The diff is computed here, from the two documents' JSON, by the same `DocumentDiff` as the
/// server's `/changes`; across a reconnection it spans every change missed meanwhile.
package struct WatchLines {
    /// The last document printed, and its sequence.
    private var last: (sequence: UInt64, document: JSONValue)?
    /// Whether a stream was opened again since the last document.
    private var reopened = false

    package init() {}

    /// A new stream answered: the next document is the first after a reconnection (unless no
    /// document was seen yet).
    package mutating func streamOpened() {
        reopened = last != nil
    }

    /// The lines for one received document.
    ///
    /// - Parameters:
    ///   - status: the document, decoded (for its summary).
    ///   - document: the same document as JSON (for the diff).
    package mutating func lines(for status: ReachabilityStatus, document: JSONValue) -> [String] {
        var lines: [String] = []
        if let last {
            if status.sequence < last.sequence {
                lines.append("reachd restarted: its sequence went back from #\(last.sequence) to #\(status.sequence)")
            } else if reopened {
                let missed = status.sequence - last.sequence
                lines.append(
                    "reconnected at #\(status.sequence) (last seen #\(last.sequence)"
                        + (missed > 0 ? ", \(missed) change\(missed == 1 ? "" : "s") since)" : ", nothing missed)"))
            }
        }
        lines.append(StatusText.summary(status))
        if let last {
            lines += ChangeText.lines(DocumentDiff.changes(from: last.document, to: document), in: document).map {
                "  " + StatusText.visible($0)
            }
        }
        last = (status.sequence, document)
        reopened = false
        return lines
    }
}
