public import FoundationEssentials

/// One configured target (`--target NAME=URL`) as the document shows it: per-host reachability,
/// as `SCNetworkReachabilityCreateWithName` and Nexum report it, decided by real probes — for
/// each address family on its own, and overall as a happy-eyeballs client (RFC 8305) would see it.
///
/// Only what changes the answer is here — durations and probe times change on every probe and
/// would make each one an event; they belong in metrics.
public struct TargetStatus: Sendable, Equatable, Decodable {
    public enum State: String, Sendable, Hashable, CaseIterable, Decodable {
        /// Not evaluated yet.
        case unknown
        case reachable
        case unreachable
    }

    public var name: String
    public var url: String
    /// The interface a pinned target (`NAME@IFACE=URL`) is probed through; `nil` when it goes
    /// wherever the kernel routes it.
    public var via: String?
    /// The proxy the target is probed through, without credentials, with its port
    /// (`http://198.18.0.1:3128`); `nil` when it is probed directly. Its addresses, families and
    /// interface are then the proxy's.
    public var proxy: String?
    /// `reachable` when any family is; `unreachable` when every family with addresses is (or the
    /// name does not resolve).
    public var state: State
    /// Why it is unreachable; `nil` otherwise.
    public var reason: ProbeFailureReason?
    /// The last failure in words (`HTTP 404`, `ECONNREFUSED: connection refused`): that of the
    /// family that decides `reason`; `nil` unless unreachable.
    public var detail: String?
    /// What the name resolved to, sorted (for an IP literal, the literal).
    public var addresses: [String]
    /// The output interface of the family that decides `state` (IPv6 when both are reachable).
    public var interface: String?
    /// When `state` last changed.
    public var since: Date
    /// Each family's own verdict; `nil` while `addresses` hold none of that family.
    public var ipv4: TargetFamilyStatus?
    public var ipv6: TargetFamilyStatus?
    /// Reachable, while a family with addresses is unreachable: the dead family shows without
    /// changing what `state` means.
    public var degraded: Bool
    /// The families of the last successful resolution that show no verdict because the name does
    /// not resolve now (every family `nil`, reason `dns`); empty while it resolves. Not on the
    /// wire, where such a family is `null` like one the name never had: `/metrics` keeps a
    /// family's series while it is one of these, since a failure never removes a series.
    public var unresolvedFamilies: AddressFamilies = []

    public init(
        name: String, url: String, via: String? = nil, proxy: String? = nil, state: State = .unknown,
        reason: ProbeFailureReason? = nil,
        detail: String? = nil, addresses: [String] = [], interface: String? = nil, since: Date,
        ipv4: TargetFamilyStatus? = nil,
        ipv6: TargetFamilyStatus? = nil, degraded: Bool = false, unresolvedFamilies: AddressFamilies = []
    ) {
        self.name = name
        self.url = url
        self.via = via
        self.proxy = proxy
        self.state = state
        self.reason = reason
        self.detail = detail
        self.addresses = addresses
        self.interface = interface
        self.since = since
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.degraded = degraded
        self.unresolvedFamilies = unresolvedFamilies
    }

    /// The wire's fields: `unresolvedFamilies` is reachd's own.
    private enum CodingKeys: String, CodingKey {
        case name, url, via, proxy, state, reason, detail, addresses, interface, since, ipv4, ipv6, degraded
    }

    public subscript(family: AddressFamily) -> TargetFamilyStatus? {
        get { family == .ipv4 ? ipv4 : ipv6 }
        set { if family == .ipv4 { ipv4 = newValue } else { ipv6 = newValue } }
    }

    /// Sets `state`, `reason`, `interface` and `degraded` from the families, by the contract's
    /// rules; `since` moves only when `state` changes.
    ///
    /// - Parameter unresolved: why there is no family at all (the name did not resolve, and that
    ///   failure in words), else `nil`.
    public mutating func deriveOverall(unresolved: (reason: ProbeFailureReason, detail: String?)?, at now: Date) {
        // IPv6 first: it decides ties. Two optionals, not an array of them: a link-down derives
        // every target's (docs/scale.md).
        let first = ipv6 ?? ipv4
        let second = ipv6 == nil ? nil : ipv4
        let next: State
        if let reachable = first?.state == .reachable ? first : second?.state == .reachable ? second : nil {
            next = .reachable
            reason = nil
            detail = nil
            interface = reachable.interface
        } else if let first {
            if first.state == .unreachable && second?.state ?? .unreachable == .unreachable {
                next = .unreachable
                let probed = first.address != nil ? first : second?.address != nil ? second : nil
                reason = probed?.reason ?? .noRoute
                detail = probed?.detail ?? first.detail
                interface = probed?.interface
            } else {
                next = .unknown
                reason = nil
                detail = nil
                interface = nil
            }
        } else {
            next = unresolved == nil ? .unknown : .unreachable
            reason = unresolved?.reason
            detail = unresolved?.detail
            interface = nil
        }
        func impairs(_ family: TargetFamilyStatus?) -> Bool {
            guard let family else { return false }
            return family.state == .unreachable || (family.state == .reachable && !family.impairments.isEmpty)
        }
        degraded = next == .reachable && (impairs(first) || impairs(second))
        if next != state { since = now }
        state = next
    }
}

/// One address family of a target: probed on its first routable address, judged on its own.
public struct TargetFamilyStatus: Sendable, Equatable, Decodable {
    public var state: TargetStatus.State
    /// Why it is unreachable; `nil` otherwise.
    public var reason: ProbeFailureReason?
    /// The last failure in words; `nil` unless unreachable.
    public var detail: String?
    /// The address probed; `nil` when none of this family is routable.
    public var address: String?
    /// The kernel's output interface for `address`.
    public var interface: String?
    /// What holds of the path's quality over the last probes (`loss`, `latency`, `mtu`, in that
    /// order); empty when none does or the family is not reachable.
    public var impairments: [Impairment]

    public init(
        state: TargetStatus.State = .unknown, reason: ProbeFailureReason? = nil, detail: String? = nil,
        address: String? = nil, interface: String? = nil, impairments: [Impairment] = []
    ) {
        self.state = state
        self.reason = reason
        self.detail = detail
        self.address = address
        self.interface = interface
        self.impairments = impairments
    }

    private enum CodingKeys: String, CodingKey {
        case state, reason, detail, address, interface, impairments
    }

    /// A document of a reachd before `impairments` existed reads as none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(TargetStatus.State.self, forKey: .state)
        reason = try container.decodeIfPresent(ProbeFailureReason.self, forKey: .reason)
        detail = try container.decodeIfPresent(String.self, forKey: .detail)
        address = try container.decodeIfPresent(String.self, forKey: .address)
        interface = try container.decodeIfPresent(String.self, forKey: .interface)
        impairments = try container.decodeIfPresent([Impairment].self, forKey: .impairments) ?? []
    }

    /// What a missing route makes of a family at once.
    public static let noRoute = TargetFamilyStatus(state: .unreachable, reason: .noRoute, detail: noRouteDetail)

    /// The words for `no-route`: the kernel's own answer, the same every time.
    public static let noRouteDetail = "no route to the address"
}

/// A reachable path that is not well (`--max-loss`, `--max-rtt`, a path-MTU blackhole).
public enum Impairment: String, Sendable, Hashable, CaseIterable, Decodable {
    /// The window's loss is above `--max-loss`.
    case loss
    /// The window's median round trip is above `--max-rtt`.
    case latency
    /// Full-size packets vanish while small ones pass, and no ICMP error says why.
    case mtu
}

/// Why a target is unreachable or the connectivity check could not get through.
public enum ProbeFailureReason: String, Sendable, Hashable, CaseIterable, Decodable {
    /// The name did not resolve (NXDOMAIN, no A/AAAA data, a refusing or failing server).
    case dns
    /// The kernel has no usable route to any address.
    case noRoute = "no-route"
    /// No answer within the timeout (DNS, connect, TLS or HTTP).
    case timeout
    /// The destination itself said no: a TCP reset, an ICMP "port unreachable".
    case refused
    /// A router past the first hop said the destination cannot be reached (an ICMP destination
    /// unreachable other than "port"): never `refused`, which sends people looking for a closed
    /// port on the target.
    case hostUnreachable = "host-unreachable"
    /// An HTTP answer outside 200–399.
    case httpStatus = "http-status"
    /// The TLS handshake or the certificate check failed.
    case tls
    /// The proxy answered but would not carry the check: a `407`, or a `CONNECT` answered with
    /// anything but 2xx.
    case proxy
    /// Anything else.
    case error
}
