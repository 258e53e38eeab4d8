public import Probes
public import Reachable
public import ReachableServer

/// Everything reachd runs, from the command line (or a test): what the monitor reads, what is
/// probed, and how the HTTP server serves — or no server at all (`reachd wait`).
public struct AppConfiguration: Sendable {
    public var monitor = MonitorConfiguration()
    public var probes = ProbeConfiguration()
    /// `nil`: no HTTP server, no port bound (`reachd wait`).
    public var server: ServerConfiguration? = ServerConfiguration()
    /// A PEM bundle that HTTPS probes trust instead of the system's CAs (tests); `nil` in production.
    public var trustedCertificates: String?

    public init() {}
}
