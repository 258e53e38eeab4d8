/// What the network looks like, as derived from the kernel: everything in the status document
/// except its bookkeeping (`sequence`, `changedAt`).
///
/// Two paths are equal exactly when a subscriber would see no difference, so the monitor
/// publishes a new status only when the derived path is not equal to the last one.
public struct NetworkPath: Sendable, Equatable {
    /// Whether the network can reach the outside world.
    public enum State: String, Sendable, Decodable {
        /// No full reading of the kernel's state yet: never a guessed `false`.
        case unknown
        case reachable
        case unreachable
    }

    public var state: State
    public var ipv4: Bool
    public var ipv6: Bool
    public var transport: TransportSet
    public var isDataMetered: Bool
    public var interfaces: [InterfaceStatus]
    /// Why a family has no way out, for the cause; not on the wire.
    public var facts: PathFacts

    public var isReachable: Bool { state == .reachable }

    public init(
        state: State,
        ipv4: Bool = false,
        ipv6: Bool = false,
        transport: TransportSet = TransportSet(),
        isDataMetered: Bool = false,
        interfaces: [InterfaceStatus] = [],
        facts: PathFacts = PathFacts()
    ) {
        self.state = state
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.transport = transport
        self.isDataMetered = isDataMetered
        self.interfaces = interfaces
        self.facts = facts
    }

    /// The path before the first full reading.
    public static let unknown = NetworkPath(state: .unknown)
}
