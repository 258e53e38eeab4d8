import Logging
import Probes
import Reachable
import ReachableServer
import ReachdClient

/// Every option of `reachd`, each declared once. Defaults come from the configuration types'
/// own defaults where there is one. To add an option: declare it here, add
/// `@Option(Settings.x) var x: T?` to `ServeOptions` (the server's) or `MonitoringOptions` (the
/// monitor's, probes' and log's, which `reachd wait` shares), and `try Settings.x.resolve(x)`
/// where the configuration is built.
///
/// Every interval and timeout is a positive number of seconds with an upper bound, and every
/// count (`--*-failures`, `--*-successes`) an integer of at least 1: `inf` or `1e300` seconds
/// would trap when made a `Duration`, and a value the engine cannot use is refused at start,
/// naming the option, rather than found later.
enum Settings {
    // MARK: Where to listen (and where the client commands ask)

    static let host = Setting<String>(
        "host",
        "Address to serve on, or of the reachd that status, watch and check ask: an IPv4 or IPv6 literal, or localhost (serves on 127.0.0.1; asks 127.0.0.1, then ::1)",
        default: ServerConfiguration().host,
        defaultText: "\(ServerConfiguration().host) to serve, \(ServerAddress.loopback) to ask",
        // A name is refused here, as a usage error: reachd resolves nothing to listen. An
        // address the host does not have is refused when binding, with the kernel's reason.
        invalid: "must be an IPv4 or IPv6 literal, or localhost", parse: hostAddress
    )

    static let port = Setting<Int>("port", "TCP port", default: ServerConfiguration().port, in: 0...65535)

    // MARK: Serving

    static let heartbeat = Setting<Double>(
        "heartbeat", "Seconds between SSE keep-alive comments",
        default: ServerConfiguration().heartbeat, seconds: 0.05...86_400
    )

    /// Whether each `target:NAME` names a target and `online` has a URL is checked against the
    /// probes' settings (`ServeOptions.serverConfiguration(probes:)`): only they know.
    static let readyWhen = Setting<[ReadinessCondition]>(
        "ready-when",
        "Comma-separated conditions that must all hold for /readyz to pass: reachable (the route-based state), always, online (connectivity full), dns (some nameserver answers), target:NAME (that target reachable; a targets file without it is not applied)",
        default: ServerConfiguration().readiness, invalid: "must be \(ReadinessCondition.syntax)",
        reasoning: { text throws(InvalidValue) in
            switch ReadinessCondition.parseList(text) {
            case .success(let conditions): return conditions
            case .failure(let refused): throw InvalidValue(description: refused.description)
            }
        },
        show: \.commaSeparated
    )

    static let maxConnections = Setting<Int>(
        "max-connections", "Open connections at most, SSE clients included",
        default: ServerConfiguration().maxConnections, in: 1...
    )

    static let maxConnectionsPerIP = Setting<Int>(
        "max-connections-per-ip", "Open connections per client address at most; 0 = no limit, right behind a proxy",
        default: ServerConfiguration().maxConnectionsPerIP, in: 0...
    )

    /// libmicrohttpd counts this timeout in whole seconds: a fraction counts as the next one.
    static let connectionTimeout = Setting<Int>(
        "connection-timeout",
        "Seconds before an idle non-streaming connection is closed (whole: a fraction counts as the next whole second, more than 86400 as 86400)",
        default: ServerConfiguration().connectionTimeout, invalid: "must be a positive number of seconds",
        parse: { text in
            Double(positiveSeconds: text).map { Int(min($0, 86_400).rounded(.up)) }
        }
    )

    static let connectionMemory = Setting<Int>(
        "connection-memory",
        "Bytes of memory per connection; bounds the request head (24576 admits 16 KiB in a few headers or the request line, or about 200 short headers), and each SSE stream holds part of it",
        default: ServerConfiguration().connectionMemoryLimit, in: 4096...1_048_576, unit: " bytes"
    )

    static let shutdownTimeout = Setting<Double>(
        "shutdown-timeout", "Seconds a graceful shutdown may take",
        default: ServerConfiguration().shutdownTimeout, seconds: 0.001...86_400
    )

    static let threads = Setting<Int>(
        "threads", "HTTP worker threads, and as many threads writing each change to the /events streams",
        default: ServerConfiguration().threads, in: 1...64
    )

    /// Each kept change is its diff, rendered: a few hundred bytes for an ordinary change.
    static let history = Setting<Int>(
        "history", "Changes of the status document that GET /changes keeps in memory (the oldest go first)",
        default: ServerConfiguration().history, in: 1...
    )

    /// Read at start (a bad file is refused, naming the key and line or the file), then again
    /// on SIGHUP and whenever it or a file it names changes (`WebSecurity`, `WebConfigReloader`).
    static let webConfigFile = Setting<String>(
        "web-config-file",
        "A Prometheus exporter-toolkit web config (YAML): tls_server_config (HTTPS only) and basic_auth_users (bcrypt); read again on SIGHUP and whenever it or a file it names changes",
        default: "", defaultText: "none", invalid: "must be a path", parse: { $0 }
    )

    // MARK: Observing the network

    static let allowOrigin = Setting<CrossOriginPolicy>(
        "allow-origin",
        "Other origins whose pages may read /status and /events (CORS): * or comma-separated origins such as https://dash.example:8443",
        default: ServerConfiguration().allowOrigin,
        invalid: "must be * or comma-separated http(s)://host[:port] origins",
        reasoning: { text throws(InvalidValue) in
            switch CrossOriginPolicy.parse(text) {
            case .success(let policy): return policy
            case .failure(let refused): throw InvalidValue(description: refused.description)
            }
        },
        show: \.description
    )

    /// The DNS rebinding check (`HostCheck` lists the names always allowed).
    static let allowedHosts = Setting<HostPolicy>(
        "allowed-hosts",
        "Host names reachd answers for besides IP addresses, localhost, names without a dot, *.localhost, *.svc, *.cluster.local and the machine's host name; others get 421 (against DNS rebinding): comma-separated names or *.example.org, or * to turn the check off",
        default: ServerConfiguration().allowedHosts, defaultText: "none",
        invalid: "must be * or comma-separated host names or *.domain patterns, without ports",
        reasoning: { text throws(InvalidValue) in
            switch HostPolicy.parse(text) {
            case .success(let policy): return policy
            case .failure(let refused): throw InvalidValue(description: refused.description)
            }
        },
        show: \.description
    )

    static let meteredInterfaces = Setting<[String]>(
        "metered-interfaces", "Comma-separated interface name patterns whose traffic is metered, e.g. 'wwan*,usb*'",
        default: MonitorConfiguration().meteredInterfacePatterns,
        invalid: "must be comma-separated patterns",
        parse: { $0.split(separator: ",").map(\.trimmed).filter { !$0.isEmpty } },
        show: { $0.joined(separator: ",") }
    )

    static let ipv4Destination = Setting<String>(
        "ipv4-destination", "Outside IPv4 address whose route decides ipv4; no packet is sent",
        default: MonitorConfiguration().ipv4Destination, invalid: "not an IP address", parse: ipAddress
    )

    static let ipv6Destination = Setting<String>(
        "ipv6-destination", "Outside IPv6 address whose route decides ipv6; no packet is sent",
        default: MonitorConfiguration().ipv6Destination, invalid: "not an IP address", parse: ipAddress
    )

    // MARK: Targets: per-host reachability (off unless given; nothing is sent anywhere by default)

    /// Each flag is one spec; the variable holds them all, separated by whitespace. Names
    /// used twice across several flags are refused when the configuration is built
    /// (`MonitoringOptions.probeConfiguration()`).
    static let targets = Setting<[TargetSpec]>(
        "target", environment: "REACHD_TARGETS",
        "A host whose reachability is probed and reported, as NAME=URL (or NAME@IFACE=URL, probed through that interface only) with URL host://HOST, tcp://HOST:PORT, http://HOST[:PORT]/PATH, https://HOST[:PORT]/PATH, icmp://HOST or dns://SERVER[:PORT]/NAME[?type=T][&expect=V]; repeatable; the variable takes the specs separated by spaces",
        default: ProbeConfiguration().targets, invalid: "must be NAME=URL",
        reasoning: { text throws(InvalidValue) in
            do {
                return try TargetSpec.parseList(TargetSpec.splitEnvironment(text))
            } catch {
                // Spaces, not commas as in the other lists: a URL may hold a comma.
                let separator = text.contains(",") ? " (the variable separates specs with spaces, not commas)" : ""
                throw InvalidValue(description: "\(error)\(separator)")
            }
        },
        // A flag is one spec, never split: `--target "bad name=…"` is refused for its name.
        eachFlag: { text throws(InvalidValue) in
            do {
                return [try TargetSpec.parse(text)]
            } catch {
                throw InvalidValue(description: "\(error)")
            }
        },
        show: { $0.map(\.text).joined(separator: " ") }
    )

    /// Read at start (a bad file is refused like a bad `--target`), then again on SIGHUP and
    /// whenever it changes (`TargetsFile`, `TargetsReloader`).
    static let targetsFile = Setting<String>(
        "targets-file",
        "A file of more targets, one NAME=URL per line (blank lines and # comments ignored), after the targets given as flags; read again on SIGHUP and whenever it changes, applied without a restart",
        default: "", defaultText: "none", invalid: "must be a path", parse: { $0 }
    )

    static let targetInterval = Setting<Double>(
        "target-interval", "Seconds between probes of a target while nothing changes",
        default: ProbeConfiguration().targetInterval.inSeconds, seconds: 0.1...86_400
    )

    static let targetTimeout = Setting<Double>(
        "target-timeout", "Seconds a probe may take, name resolution included",
        default: ProbeConfiguration().targetTimeout.inSeconds, seconds: 0.01...86_400
    )

    static let icmpCount = Setting<Int>(
        "icmp-count", "Small echo requests per probe of an icmp:// target (100 ms apart, then one full-size echo)",
        default: ProbeConfiguration().icmpCount, in: 1...100
    )

    static let qualityWindow = Setting<Int>(
        "quality-window",
        "Probes per target family whose loss and median round trip are judged against max-loss and max-rtt",
        default: ProbeConfiguration().qualityWindow, in: 1...1000
    )

    static let maxLoss = Setting<Double>(
        "max-loss",
        "Loss of small echoes over the quality window above which an icmp:// target family is impaired (loss), a ratio",
        default: ProbeConfiguration().maxLoss, in: 0...1
    )

    /// `none`: latency is not judged. Out of range, as every interval, when written.
    static let maxRTT = Setting<Double>(
        "max-rtt",
        "Seconds of median round trip over the quality window above which a target family is impaired (latency)",
        default: 0, defaultText: "none", invalid: "must be a number of seconds from 0.0001 to 3600",
        parse: { text in Double(positiveSeconds: text).flatMap { (0.0001...3600).contains($0) ? $0 : nil } }
    )

    static let targetFailures = Setting<Int>(
        "target-failures", "Consecutive failed probes before a reachable target turns unreachable",
        default: ProbeConfiguration().targetFailures, in: 1...
    )

    static let targetSuccesses = Setting<Int>(
        "target-successes",
        "Consecutive successful probes before an unreachable target family turns reachable again (the first result after start decides at once)",
        default: ProbeConfiguration().targetSuccesses, in: 1...
    )

    // MARK: Connectivity: is this the internet or a captive portal? (off unless given)

    /// Empty means none. The response is checked together with it (`ConnectivitySpec.parse`).
    static let connectivityURL = Setting<String>(
        "connectivity-url",
        "http:// or https:// URL of the internet check, as NetworkManager's: a 204, or a 2xx starting with the expected response, is full",
        default: "", defaultText: "none", invalid: "must be an http:// or https:// URL",
        reasoning: { text throws(InvalidValue) in
            guard !text.isEmpty else { return text }
            do {
                _ = try ConnectivitySpec.parse(url: text)
                return text
            } catch {
                throw InvalidValue(description: "\(error)")
            }
        }
    )

    static let connectivityResponse = Setting<String>(
        "connectivity-response",
        "Expected start of the check's 2xx body (at most \(ProbeLimits.maximumExpectedBody) bytes); without it only 204 is full",
        default: "", invalid: "must be at most \(ProbeLimits.maximumExpectedBody) bytes",
        parse: { $0.utf8.count <= ProbeLimits.maximumExpectedBody ? $0 : nil }
    )

    /// Needs `--connectivity-url` (`ServeOptions.probeConfiguration()` refuses it without).
    static let perUplink = Setting<Bool>(
        switch: "per-uplink",
        "Run the connectivity check through every uplink on its own too, pinned to it (interfaces[].connectivity); needs --connectivity-url"
    )

    static let connectivityInterval = Setting<Double>(
        "connectivity-interval",
        "Seconds between checks while connectivity is full; otherwise from 1 s, doubling up to this",
        default: ProbeConfiguration().connectivityInterval.inSeconds, seconds: 0.1...86_400
    )

    static let connectivityTimeout = Setting<Double>(
        "connectivity-timeout", "Seconds a connectivity check may take",
        default: ProbeConfiguration().connectivityTimeout.inSeconds, seconds: 0.01...86_400
    )

    // MARK: Through a proxy (the environment's, as curl reads it, unless given)

    /// Taken as text and checked where the configuration is built (`ProxyChoice.resolve`): a
    /// refusal here would quote the value, and a proxy URL may hold a password.
    static let proxy = Setting<String>(
        "proxy",
        "The HTTP proxy every http:// and https:// check goes through, as http://[USER:PASSWORD@]HOST[:PORT] (port 1080 when not given; no_proxy ignored), or none to ignore http_proxy, https_proxy, all_proxy and no_proxy, which apply otherwise; never for the per-uplink checks or targets pinned to an interface",
        default: "", defaultText: "the environment's", invalid: "must be none or http://[USER:PASSWORD@]HOST[:PORT]",
        parse: { $0 }
    )

    // MARK: DNS: each nameserver of resolv.conf asked on its own (off unless given)

    /// Empty means none, as for `--connectivity-url`: `--dns-check ""` overrides the variable.
    static let dnsCheck = Setting<String>(
        "dns-check",
        "A name, such as kubernetes.default.svc.cluster.local., that each nameserver of /etc/resolv.conf is asked for separately (its A record, exactly as given: no search list)",
        default: "", defaultText: "none", invalid: HostName.rule,
        // An empty variable is unset, as for every option; an empty flag is a name that is not one.
        reasoning: { text throws(InvalidValue) in
            guard text.isEmpty || HostName.isValid(text) else { throw InvalidValue(description: HostName.rule) }
            return text
        },
        eachFlag: { text throws(InvalidValue) in
            guard HostName.isValid(text) else { throw InvalidValue(description: HostName.rule) }
            return text
        }
    )

    static let dnsInterval = Setting<Double>(
        "dns-interval", "Seconds between queries to each nameserver while nothing changes",
        default: ProbeConfiguration().dnsInterval.inSeconds, seconds: 0.1...86_400
    )

    static let dnsTimeout = Setting<Double>(
        "dns-timeout", "Seconds a nameserver has to answer",
        default: ProbeConfiguration().dnsTimeout.inSeconds, seconds: 0.01...86_400
    )

    static let dnsFailures = Setting<Int>(
        "dns-failures", "Consecutive failed queries before an answering nameserver turns failing",
        default: ProbeConfiguration().dnsFailures, in: 1...
    )

    // MARK: Logging

    static let logLevel = Setting<Logger.Level>(
        "log-level", "Log level", default: .info, parse: { Logger.Level(rawValue: $0.lowercased()) }
    )

    static let logFormat = Setting<LogFormat>("log-format", "Log format", default: .text)

    @Sendable private static func ipAddress(_ text: String) -> String? {
        IPAddress(text) == nil ? nil : text
    }

    /// An IP literal, or `localhost` in any case (as `localhost`).
    @Sendable private static func hostAddress(_ text: String) -> String? {
        text.lowercased() == "localhost" ? "localhost" : ipAddress(text)
    }
}

/// How log lines are written to stderr.
enum LogFormat: String, CaseIterable, Sendable {
    /// swift-log's own line format.
    case text
    /// One JSON object per line, for log collectors (`LineLogHandler`).
    case json
}
