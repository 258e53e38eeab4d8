import Glibc
import Logging

/// One JSON object per line on stderr, for log collectors (`--log-format json`): `time`,
/// `level`, `label`, `message`, then the metadata by name, each value typed (`LogFields`).
struct JSONLogHandler: LogHandler {
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
        let fixed: [(String, Logger.MetadataValue)] = [
            ("time", .string(LogFields.timestamp())), ("level", .string(event.level.rawValue)),
            ("label", .string(label)), ("message", .string("\(event.message)")),
        ]
        // A metadata key named like a fixed field would make a second key: it is left out.
        let names = Set(fixed.map(\.0))
        let extra = metadata.merging(event.metadata ?? [:]) { $1 }
            .filter { !names.contains($0.key) }
            .sorted { $0.key < $1.key }
            .map { ($0.key, $0.value) }
        Output.write(LogFields.object(fixed + extra) + "\n", to: STDERR_FILENO)
    }
}
