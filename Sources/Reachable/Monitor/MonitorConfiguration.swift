/// How a monitor reads the network. The defaults are what reachd serves.
public struct MonitorConfiguration: Sendable {
    /// The outside address whose IPv4 route decides `ipv4`: public, outside every private and
    /// documentation range. Only the kernel's routing table is asked; no packet is sent.
    public var ipv4Destination: String = "8.8.8.8"
    /// The same for `ipv6`.
    public var ipv6Destination: String = "2001:4860:4860::8888"
    /// Interface name patterns (`fnmatch`, such as `wwan*`) whose traffic costs money.
    public var meteredInterfacePatterns: [String] = []
    /// The event socket's receive buffer. NetworkManager uses 8 MiB; a smaller one loses
    /// events in a burst sooner (reachd then dumps everything again).
    public var receiveBufferSize: Int = 8 * 1024 * 1024
    /// Where Wi-Fi and modem facts come from (sysfs unless a test says otherwise).
    public var interfaceFacts: any InterfaceFacts = SysfsInterfaceFacts()
    /// The first pause before reopening a broken kernel connection; it doubles after each
    /// failed attempt up to `recoveryPauseLimit`.
    public var recoveryPause: Duration = .milliseconds(100)
    public var recoveryPauseLimit: Duration = .seconds(10)
    /// Failed reopening attempts in a row before the monitor reports a failure for good
    /// (liveness fails). With the default pauses, about 6 s. It keeps trying afterwards.
    public var recoveryAttempts: Int = 6
    /// What the first document lists before any probe ran: the configured targets (`unknown`)
    /// and the connectivity check (`unknown`, or `disabled`). Their sources update them later.
    public var initialTargets: [TargetStatus] = []
    /// The first document's `targetsFile` (`nil` without `--targets-file`).
    public var initialTargetsFile: TargetsFileStatus?
    public var initialConnectivity: ConnectivityStatus?
    /// And DNS (`unknown` with its name, or `disabled`).
    public var initialDNS: DNSStatus?
    /// Find every uplink on each reading (`RoutingSnapshot.uplinks`): for `--per-uplink`. Off,
    /// no question beyond the two route lookups is asked.
    public var discoversUplinks = false
    /// The kernel seam: the real system calls, unless a test injects faults.
    package var netlinkSystemCalls: NetlinkSystemCalls = .live

    public init() {}

    /// This configuration without the first document's parts: what the netlink source keeps for
    /// its life. The first document is the monitor's to edit; a copy kept here is one more copy
    /// of every target that no one reads after start (docs/scale.md).
    var withoutFirstDocument: MonitorConfiguration {
        var kept = self
        kept.initialTargets = []
        kept.initialTargetsFile = nil
        kept.initialConnectivity = nil
        kept.initialDNS = nil
        return kept
    }
}
