/// One rtnetlink message, parsed and validated, in the terms the table and the source need.
public enum NetlinkMessage: Sendable, Equatable {
    case link(LinkRecord)
    case linkRemoved(index: Int32)
    case address(AddressRecord)
    case addressRemoved(AddressRecord)
    case route(RouteRecord)
    case routeRemoved(RouteRecord)
    /// A route with a destination, added or removed, from a parser that does not keep such
    /// routes: nothing of it is kept, but the kernel's routing answer may differ now.
    case specificRoute(removed: Bool)
    /// A rule or netconf change (or any other rtnetlink type reachd subscribes to): it changes
    /// nothing in the table, but the kernel's routing answer may differ now.
    case other(type: UInt16)
    /// The end of a dump.
    case done
    /// An `NLMSG_ERROR`: `code` 0 is an acknowledgement, otherwise a negative errno.
    case error(code: Int32)
}

/// A parsed message with the header fields a request needs to match its answer.
public struct NetlinkEnvelope: Sendable, Equatable {
    public var message: NetlinkMessage
    public var sequence: UInt32
    public var flags: UInt16
}
