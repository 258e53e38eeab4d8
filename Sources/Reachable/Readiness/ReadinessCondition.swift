/// One condition of `--ready-when` (a comma-separated list; `/readyz` passes when all hold).
public enum ReadinessCondition: Sendable, Equatable, CustomStringConvertible {
    /// The network is reachable (the route-based `state`): the default.
    case reachable
    /// Whenever reachd serves: its own readiness, not the network's.
    case always
    /// Connectivity is `full`.
    case online
    /// That interface's own connectivity check is `full` (`--per-uplink`).
    case uplinkOnline(String)
    /// That target is `reachable`.
    case target(String)
    /// DNS is `ok` or `degraded`: some nameserver answers (needs `--dns-check`).
    case dns

    /// As written on the command line.
    public var description: String {
        switch self {
        case .reachable: "reachable"
        case .always: "always"
        case .online: "online"
        case .uplinkOnline(let interface): "online:\(interface)"
        case .target(let name): "target:\(name)"
        case .dns: "dns"
        }
    }
}

extension ReadinessCondition {
    /// What `--ready-when` accepts, for messages.
    public static let syntax = "reachable, always, online, online:IFACE, dns or target:NAME"

    /// One condition as written (`reachable`, `always`, `online`, `online:IFACE`, `dns`, `target:NAME`; case-sensitive,
    /// as target names are); `nil` for anything else. Whether NAME is a configured target is the
    /// caller's to check: only it knows the targets.
    public init?(_ text: String) {
        switch text {
        case "reachable": self = .reachable
        case "always": self = .always
        case "online": self = .online
        case "dns": self = .dns
        case let text where text.hasPrefix("online:") && text.count > "online:".count:
            self = .uplinkOnline(String(text.dropFirst("online:".count)))
        case let text where text.hasPrefix("target:") && text.count > "target:".count:
            self = .target(String(text.dropFirst("target:".count)))
        default: return nil
        }
    }

    /// Parses `--ready-when`: conditions separated by commas (spaces around them ignored, as is an
    /// empty item such as a trailing comma). A condition given twice counts once, where it first
    /// appears: the health document has one check per condition.
    ///
    /// - Returns: the conditions in the order given, or the first item that is not one (an empty
    ///   list is `.failure("")`).
    public static func parseList(_ text: String) -> Result<[ReadinessCondition], RefusedCondition> {
        var conditions: [ReadinessCondition] = []
        for item in text.split(separator: ",") {
            let word = item.trimmed
            if word.isEmpty { continue }
            guard let condition = ReadinessCondition(word) else { return .failure(RefusedCondition(text: word)) }
            if !conditions.contains(condition) { conditions.append(condition) }
        }
        return conditions.isEmpty ? .failure(RefusedCondition(text: "")) : .success(conditions)
    }

    /// An item of `--ready-when` that is no condition; `text` is empty when no condition was given.
    public struct RefusedCondition: Error, Sendable, Equatable, CustomStringConvertible {
        public let text: String

        public init(text: String) {
            self.text = text
        }

        public var description: String {
            text.isEmpty
                ? "no condition given: expected \(ReadinessCondition.syntax), separated by commas"
                : "unknown condition \"\(text)\": expected \(ReadinessCondition.syntax)"
        }
    }
}

extension [ReadinessCondition] {
    /// As `--ready-when` takes it: `reachable,target:db`.
    public var commaSeparated: String { map(\.description).joined(separator: ",") }
}
