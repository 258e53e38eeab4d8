import Glibc
import Reachable
import Synchronization

/// The defence against DNS rebinding: a page that rebinds its own name to reachd's address sends
/// that name in `Host`, and is answered `421` unless the name is one reachd is known by.
///
/// Always allowed: IP literals; `localhost`; a name without a dot (a Service in the same
/// namespace, a short host name — no one can register one in public DNS); names under
/// `.localhost`, `.svc` and `.cluster.local` (Kubernetes); the machine's host name. Anything else
/// only through `--allowed-hosts`. A request without `Host` (HTTP/1.0) passes: a browser always
/// sends one.
struct HostCheck: Sendable {
    let policy: HostPolicy
    /// The machine's host name, normalised (`HostHeader.normalisedName`), read once at start.
    let hostName: String?
    /// The last `Host` value allowed: clients send the same one on every request (a keep-alive
    /// connection always does), and parsing it (an IP literal through `IPAddress`) was about 7 %
    /// of a keep-alive `/status` request's instructions beside libmicrohttpd's own (callgrind).
    /// Only allowed values are kept; the policy never changes while reachd runs.
    private let lastAllowed = LastAllowed()

    private final class LastAllowed: Sendable {
        let value = Mutex<String?>(nil)
    }

    static let alwaysAllowedSuffixes = [".localhost", ".svc", ".cluster.local"]

    init(policy: HostPolicy = .builtIn, hostName: String? = nil) {
        self.policy = policy
        self.hostName = hostName
    }

    /// Whether every `Host` field of `request` is allowed (a request has one; with two, both
    /// must be, so a second cannot smuggle a name past the first).
    func allows(_ request: HTTPRequest) -> Bool {
        guard case .names(let patterns) = policy else { return true }
        return request.headers.allSatisfy { field in
            !Self.isHostField(field.name) || allows(field.value, patterns: patterns)
        }
    }

    /// Whether a field's name is `Host`, in any case, without making a lowercased copy of every
    /// name of every request.
    static func isHostField(_ name: String) -> Bool {
        var utf8 = name.utf8.makeIterator()
        for expected in "host".utf8 {
            guard let byte = utf8.next(), byte | 0x20 == expected else { return false }
        }
        return utf8.next() == nil
    }

    /// Whether one `Host` value is allowed.
    func allows(host value: String) -> Bool {
        guard case .names(let patterns) = policy else { return true }
        return allows(value, patterns: patterns)
    }

    private func allows(_ value: String, patterns: [HostPattern]) -> Bool {
        if lastAllowed.value.withLock({ $0 == value }) { return true }
        guard allows(HostHeader(value), patterns: patterns) else { return false }
        lastAllowed.value.withLock { $0 = value }
        return true
    }

    private func allows(_ host: HostHeader, patterns: [HostPattern]) -> Bool {
        switch host {
        case .empty, .ipLiteral: true
        case .malformed: false
        case .name(let name):
            name == "localhost" || !name.utf8.contains(UInt8(ascii: "."))
                || Self.alwaysAllowedSuffixes.contains { name.hasSuffix($0) }
                || name == hostName || patterns.contains { $0.matches(name) }
        }
    }

    /// `gethostname`, normalised; `nil` when it fails or is no DNS name.
    static func machineHostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard (try? systemCall("gethostname", { gethostname(&buffer, buffer.count - 1) })) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return HostHeader.normalisedName(Substring(text))
    }
}
