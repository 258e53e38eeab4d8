import Reachable

/// `--allow-origin`: which other origins' pages may read `/status` and `/events` (CORS), for a
/// team's dashboard served from another host. Off by default: a browser then refuses to hand
/// reachd's answers to another origin's script.
public enum CrossOriginPolicy: Sendable, Equatable, CustomStringConvertible {
    case none
    /// `*`: any origin (no credentials are ever involved).
    case any
    /// Exact origins (`https://dash.example:8443`), compared as sent in `Origin`.
    case origins([String])

    /// `*`, or origins separated by commas; each `http://` or `https://` with a host, an
    /// optional port, and nothing after it.
    public static func parse(_ text: String) -> Result<CrossOriginPolicy, InvalidOrigin> {
        let items = text.split(separator: ",").map(\.trimmed).filter { !$0.isEmpty }
        if items == ["*"] { return .success(.any) }
        guard !items.isEmpty else { return .failure(InvalidOrigin(text: text, why: "is empty")) }
        for item in items {
            if let why = Self.problem(with: item) { return .failure(InvalidOrigin(text: item, why: why)) }
        }
        return .success(.origins(items))
    }

    public struct InvalidOrigin: Error, Sendable, CustomStringConvertible {
        public var text: String
        public var why: String
        public var description: String { "origin \"\(text)\" \(why)" }
    }

    private static func problem(with origin: String) -> String? {
        if origin == "*" { return "cannot be combined with others (`*` alone allows every origin)" }
        let rest: Substring
        if origin.hasPrefix("http://") {
            rest = origin.dropFirst("http://".count)
        } else if origin.hasPrefix("https://") {
            rest = origin.dropFirst("https://".count)
        } else {
            return "needs http:// or https://"
        }
        guard !rest.isEmpty else { return "has no host" }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("@") else {
            return "must be scheme://host[:port] with nothing after it (an origin, not a URL)"
        }
        guard rest.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            return "has characters an origin cannot have"
        }
        return nil
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .any: "*"
        case .origins(let origins): origins.joined(separator: ",")
        }
    }
}
