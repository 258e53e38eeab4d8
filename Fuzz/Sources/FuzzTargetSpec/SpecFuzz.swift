import FuzzSupport
import Reachable

@testable import Probes

/// The values of `--target` (and `REACHD_TARGETS`), `--connectivity-url` with
/// `--connectivity-response`, and `--ipv4-destination` / `--ipv6-destination`, through the
/// functions the options call: `TargetSpec.parse` / `parseList` / `splitEnvironment`,
/// `ConnectivitySpec.parse` and `IPAddress`. (`--allow-origin` and `--ready-when`
/// are parsed in FuzzRequestRouter, beside the router that uses them.)
///
/// Input: a selector byte, then the text (command-line and environment text holds no NUL, so
/// the text ends at one); for lists, items separated by a byte 0xFF.
enum SpecFuzz {
    static func run(_ input: inout FuzzInput) {
        switch input.byte() % 5 {
        case 0: target(String(decoding: Array(input.rest()).prefix { $0 != 0 }, as: UTF8.self))
        case 1: targetList(input.texts())
        case 2: environment(String(decoding: Array(input.rest()).prefix { $0 != 0 }, as: UTF8.self))
        case 3: connectivity(url: input.text(), response: input.text())
        default: address(String(decoding: Array(input.rest()).prefix { $0 != 0 }, as: UTF8.self))
        }
    }

    /// One `--target NAME=URL`: what is accepted has the shape the probes rely on, and reads
    /// back the same from the text the options rebuild it from.
    private static func target(_ text: String) {
        let spec: TargetSpec
        do {
            spec = try TargetSpec.parse(text)
        } catch {
            require(error.subject == .target && error.spec == text, "the error names \(error.spec), not the spec")
            require(error.description.contains("\"\(text)\""), "the message does not quote the spec")
            return
        }
        require(TargetSpec.isValidName(spec.name), "accepted name \(spec.name.debugDescription)")
        require(text == spec.text, "the spec's parts do not make \(text.debugDescription)")
        if let interface = spec.egress.interface {
            require(TargetSpec.isValidInterfaceName(interface), "accepted interface \(interface.debugDescription)")
        }
        check(spec.url, allowed: ProbeKinds.schemes)
        // ServeOptions rebuilds each flag's spec from its text before checking the list.
        require((try? TargetSpec.parse(spec.text)) == spec, "\(text) does not read back")
    }

    private static func targetList(_ specs: [String]) {
        guard let targets = try? TargetSpec.parseList(specs) else { return }
        require(targets.count == specs.count, "\(specs.count) specs, \(targets.count) targets")
        require(Set(targets.map(\.name)).count == targets.count, "a name twice")
        for spec in specs { target(spec) }
    }

    /// `REACHD_TARGETS`: specs separated by any whitespace.
    private static func environment(_ value: String) {
        let specs = TargetSpec.splitEnvironment(value)
        require(
            specs.allSatisfy { !$0.isEmpty && !$0.contains { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" } },
            "a spec with whitespace from \(value.debugDescription)")
        // Joined again, a spec that starts with a combining mark would join the space before it
        // into one character; such a spec is refused anyway (names are ASCII).
        if value.utf8.allSatisfy({ $0 < 0x80 }) {
            require(TargetSpec.splitEnvironment(specs.joined(separator: " ")) == specs, "splitting is not stable")
        }
        for spec in specs.prefix(8) { target(spec) }
    }

    private static func connectivity(url: String, response: String) {
        let spec: ConnectivitySpec
        do {
            spec = try ConnectivitySpec.parse(url: url, response: response)
        } catch {
            require(error.description.contains("\"\(error.spec)\""), "the message does not quote the value")
            return
        }
        check(spec.url, allowed: [.http, .https])
        require(
            spec.expectedResponse == (response.isEmpty ? nil : Array(response.utf8))
                && response.utf8.count <= ProbeLimits.maximumExpectedBody,
            "expected response \(response.debugDescription)")
    }

    /// `--ipv4-destination`, targets and nameservers all go through `IPAddress`: an address reads
    /// back from its own text and from its bytes.
    private static func address(_ text: String) {
        guard let address = IPAddress(text) else { return }
        require(address.bytes.count == 4 || address.bytes.count == 16, "\(address.bytes.count) bytes")
        require(IPAddress(address.description) == address, "\(address) does not read back")
        require(IPAddress(bytes: address.bytes) == address, "\(address) does not read back from its bytes")
        let host = TargetURL.parse("host://\(address.urlHost)", allowed: [.host])
        require((try? host.get())?.literal == address, "host://\(address.urlHost) is not the literal")
    }

    /// What the engine relies on for a URL it accepted.
    private static func check(_ url: TargetURL, allowed: Set<TargetURL.Scheme>) {
        require(allowed.contains(url.scheme), "scheme \(url.scheme)")
        require(!url.host.isEmpty && !url.host.contains("@"), "host \(url.host.debugDescription)")
        if let literal = url.literal {
            require(IPAddress(url.host) == literal, "the literal is not the host")
        } else {
            require(HostSyntax.isHostName(url.host[...]), "accepted host \(url.host.debugDescription)")
            require(url.host.utf8.allSatisfy { $0 < 0x80 }, "a host name that is not ASCII")
        }
        switch url.scheme {
        case .host, .icmp:
            require(
                url.port == nil && url.path.isEmpty && url.requestURL == nil, "host:// or icmp:// with a port or path")
        case .tcp:
            require(url.port != nil && url.path.isEmpty, "tcp:// without a port or with a path")
        case .http, .https:
            require(url.port != nil && url.path.hasPrefix("/"), "http(s):// without a port or path")
            require(HostSyntax.isSafePath(url.path), "path \(url.path.debugDescription)")
        case .dns:
            require(url.literal != nil && url.port != nil && url.requestURL == nil, "dns:// without a server or port")
            require((try? DNSTargetQuery.parse(url.path).get()) != nil, "dns:// query \(url.path.debugDescription)")
        default:
            require(false, "a scheme no probe kind registered: \(url.scheme.rawValue)")
        }
        if let requestURL = url.requestURL {
            require(
                requestURL.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F },
                "libcurl would be given \(requestURL.debugDescription)")
            let authority = requestURL.split(separator: "/", omittingEmptySubsequences: false)[2]
            require(!authority.contains("@"), "libcurl would be given credentials: \(requestURL)")
            require(
                authority == (url.literal?.urlHost ?? url.host) + ":\(url.port ?? 0)",
                "libcurl would connect to \(authority), not \(url.host)")
        }
    }
}
