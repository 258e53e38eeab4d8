/// Why a `--target`, `--connectivity-url` or `--connectivity-response` value was refused.
///
/// A value rather than a string so tests (and `reachd`'s option validation) can tell the problems
/// apart; `description` is the message for the operator and always quotes the refused spec, because
/// with several `--target` options (or `REACHD_TARGETS`) "invalid URL" alone does not say which one.
public struct SpecError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Subject: Sendable, Equatable {
        case target
        case connectivityURL
        case connectivityResponse
    }

    public enum Problem: Error, Sendable, Equatable {
        /// `NAME=URL` without the `=`.
        case missingEquals
        /// The name is empty, longer than 63 characters, or has a character outside letters,
        /// digits, `_`, `-`, `.`.
        case invalidName
        /// Another target already has this name.
        case duplicateName
        /// `NAME@IFACE=`: not an interface name the kernel would take.
        case invalidInterface
        /// No `scheme://`, or one this option does not take.
        case unsupportedScheme
        /// Nothing between `://` and the port or path.
        case missingHost
        /// Neither a host name nor an IP literal (IPv6 literals go in brackets).
        case invalidHost
        /// `tcp://` needs a port.
        case missingPort
        /// Not a number in 1…65535.
        case invalidPort
        /// `host://` takes no port.
        case unexpectedPort
        /// `host://` and `tcp://` take no path.
        case unexpectedPath
        /// `user:password@` would be published in `/status`; refused rather than leaked.
        case credentials
        /// A path with spaces or control characters, or one libcurl would not accept.
        case invalidPath
        /// The expected response is longer than the engine keeps of a body.
        case responseTooLong
        /// A kind's own rule about the rest of its URL (`dns://`: SERVER, NAME, `type`,
        /// `expect`), in the kind's words.
        case kindRule(String)
    }

    public var subject: Subject
    /// The refused text, exactly as given (for a target, the whole `NAME=URL`).
    public var spec: String
    public var problem: Problem

    public init(_ subject: Subject, spec: String, problem: Problem) {
        self.subject = subject
        self.spec = spec
        self.problem = problem
    }

    public var description: String {
        let what: String
        switch subject {
        case .target: what = "target"
        case .connectivityURL: what = "connectivity URL"
        case .connectivityResponse: what = "connectivity response"
        }
        return "invalid \(what) \"\(spec)\": \(explanation)"
    }

    private var explanation: String {
        switch problem {
        case .missingEquals: "expected NAME=URL"
        case .invalidName: "the name must be 1 to 63 letters, digits, '_', '-' or '.'"
        case .duplicateName: "another target has the same name"
        case .invalidInterface: "the interface after '@' must be 1 to 15 characters, without '/' or spaces"
        case .unsupportedScheme:
            subject == .target
                ? "the URL must start with \(ProbeKinds.schemeList)"
                : "the URL must start with http:// or https://"
        case .missingHost: "the URL has no host"
        case .invalidHost: "the host is neither a name nor an IP address (IPv6 goes in brackets: [2001:db8::1])"
        case .missingPort: "tcp:// needs a port (tcp://HOST:PORT)"
        case .invalidPort: "the port must be a number from 1 to 65535"
        case .unexpectedPort: "host:// and icmp:// take no port (use tcp://HOST:PORT to check one)"
        case .unexpectedPath: "host://, icmp:// and tcp:// take no path"
        case .credentials: "credentials in the URL would be published in /status"
        case .invalidPath: "the path has spaces or control characters, or is not a valid URL path"
        case .responseTooLong: "longer than \(ProbeLimits.maximumExpectedBody) bytes"
        case .kindRule(let words): words
        }
    }
}
