import Glibc
import Logging

/// One line per event on stderr (`--log-format text`):
/// `2026-11-25T13:53:50.405Z info reachd: status changed sequence=7 state=reachable`. The time
/// as in the JSON format and the document (RFC 3339, UTC, milliseconds); then `key=value`
/// pairs by name, a value with spaces quoted (`LogFields.text`), so the line stays one record.
struct TextLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = "\(LogFields.timestamp()) \(event.level.rawValue) \(label): \(event.message)"
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }).sorted(by: {
            $0.key < $1.key
        }) {
            line += " \(key)=\(LogFields.text(value))"
        }
        Output.write(line + "\n", to: STDERR_FILENO)
    }
}
