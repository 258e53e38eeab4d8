import Glibc
import Logging

/// One line per event on stderr, in the `--log-format` asked for; the time in both as in the
/// document (RFC 3339, UTC, milliseconds), the metadata by name with typed values (`LogFields`).
///
/// - `text`: `2026-11-25T13:53:50.405Z info reachd: status changed sequence=7 state=reachable`,
///   a value with spaces quoted (`LogFields.text`), so the line stays one record.
/// - `json`: one object for log collectors: `time`, `level`, `label`, `message`, then the metadata.
struct LineLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, format: LogFormat) {
        self.label = label
        self.format = format
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }
        let line: String
        switch format {
        case .text:
            line =
                "\(LogFields.timestamp()) \(event.level.rawValue) \(label): \(event.message)"
                + fields.map { " \($0.key)=\(LogFields.text($0.value))" }.joined()
        case .json:
            let fixed: [(String, Logger.MetadataValue)] = [
                ("time", .string(LogFields.timestamp())), ("level", .string(event.level.rawValue)),
                ("label", .string(label)), ("message", .string("\(event.message)")),
            ]
            // A metadata key named like a fixed field would make a second key: it is left out.
            let names = Set(fixed.map(\.0))
            line = LogFields.object(fixed + fields.filter { !names.contains($0.key) }.map { ($0.key, $0.value) })
        }
        Output.write(line + "\n", to: STDERR_FILENO)
    }
}
