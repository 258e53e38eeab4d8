import CMnl

/// What the table keeps of an `RTM_NEWROUTE` for a default route (destination length 0).
/// Only default routes are kept: they alone feed `isDefaultRoute`; reachability itself comes
/// from the kernel's own lookup.
public struct RouteRecord: Sendable, Equatable {
    public var family: UInt8
    /// From `RTA_TABLE` when present (tables above 255 only fit there).
    public var table: UInt32
    /// `RTN_*`: unicast, unreachable, blackhole, prohibit, …
    public var type: UInt8
    public var destinationLength: UInt8
    public var priority: UInt32
    public var tos: UInt8
    /// `RTA_OIF`, or every next hop's interface of an `RTA_MULTIPATH` route.
    public var outputInterfaces: [Int32]
    /// `RTA_PREFSRC`: the source address the kernel would pick (what a lookup answer needs).
    public var preferredSource: IPAddress?

    /// The identity the kernel uses to replace or delete a default route.
    struct Key: Hashable {
        var family: UInt8
        var table: UInt32
        var priority: UInt32
        var tos: UInt8
    }

    var key: Key { Key(family: family, table: table, priority: priority, tos: tos) }

    public var isUnicastDefault: Bool { destinationLength == 0 && type == UInt8(RTN_UNICAST) }
}
