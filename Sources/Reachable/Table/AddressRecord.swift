/// What the table keeps of an `RTM_NEWADDR`.
public struct AddressRecord: Sendable, Equatable, Hashable {
    public var interfaceIndex: Int32
    public var prefixLength: UInt8
    /// `IFA_F_*`, from `IFA_FLAGS` when present (it carries the bits above 8).
    public var flags: UInt32
    /// `RT_SCOPE_*`.
    public var scope: UInt8
    public var address: IPAddress

    /// The identity the kernel uses: the same address with other flags replaces the old record.
    struct Key: Hashable {
        var interfaceIndex: Int32
        var prefixLength: UInt8
        var address: IPAddress
    }

    var key: Key { Key(interfaceIndex: interfaceIndex, prefixLength: prefixLength, address: address) }

    /// `AF_INET` or `AF_INET6`: the address's own.
    public var family: UInt8 { UInt8(address.family) }

    /// Usable (ARCHITECTURE.md, "How Linux state becomes a status"): global scope, not tentative (optimistic ones still are), not DAD-failed.
    public var isUsable: Bool {
        scope == KernelValue.universeScope
            && flags & KernelValue.tentativeAddress == 0
            && flags & KernelValue.optimisticAddress == 0
            && flags & KernelValue.duplicateAddress == 0
    }

    /// An IPv4 address added to a subnet that already had one (`IFA_F_SECONDARY`): never the
    /// interface's preferred source.
    var isSecondary: Bool { flags & KernelValue.secondaryAddress != 0 }

    /// `198.18.0.2/24`, `fe80::1/64`.
    public var description: String { "\(address)/\(prefixLength)" }
}
