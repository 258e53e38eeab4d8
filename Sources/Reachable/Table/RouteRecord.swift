/// One route as the kernel announces or answers it. The table keeps default routes only
/// (destination length 0): they alone feed `isDefaultRoute`; reachability itself comes from the
/// kernel's own lookup. Other routes matter only by their `entry` (`RemovedRoutes`).
public struct RouteRecord: Sendable, Equatable {
    public var family: UInt8
    /// From `RTA_TABLE` when present (tables above 255 only fit there).
    public var table: UInt32
    /// `RTN_*`: unicast, unreachable, blackhole, prohibit, …
    public var type: UInt8
    public var destinationLength: UInt8
    /// `RTA_DST`: the prefix's bytes (empty for a default route).
    public var destination: [UInt8] = []
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

    /// Which entry of the kernel's routing table this is, for any destination length: what an
    /// `RTM_DELROUTE` names and what a lookup with `RTM_F_FIB_MATCH` answers.
    public struct Entry: Hashable, Sendable {
        var family: UInt8
        var table: UInt32
        var destination: [UInt8]
        var destinationLength: UInt8
        var priority: UInt32
        var tos: UInt8
    }

    public var entry: Entry {
        Entry(
            family: family, table: table, destination: destination, destinationLength: destinationLength,
            priority: priority, tos: tos)
    }

    public var isUnicastDefault: Bool { destinationLength == 0 && type == KernelValue.unicastRoute }
}
