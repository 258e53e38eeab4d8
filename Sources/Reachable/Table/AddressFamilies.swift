/// Some of the two address families, in one byte: what a status entry keeps of its last
/// resolution beside its families (a `Set<AddressFamily>` is an allocation of its own, one per
/// target, made anew with every entry).
public struct AddressFamilies: Sendable, Hashable, ExpressibleByArrayLiteral {
    private var bits: UInt8 = 0

    public init() {}

    public init(_ families: some Sequence<AddressFamily>) {
        for family in families { insert(family) }
    }

    public init(arrayLiteral families: AddressFamily...) {
        self.init(families)
    }

    public var isEmpty: Bool { bits == 0 }

    public func contains(_ family: AddressFamily) -> Bool {
        bits & Self.bit(family) != 0
    }

    public mutating func insert(_ family: AddressFamily) {
        bits |= Self.bit(family)
    }

    public mutating func remove(_ family: AddressFamily) {
        bits &= ~Self.bit(family)
    }

    public func subtracting(_ other: AddressFamilies) -> AddressFamilies {
        var result = self
        result.bits &= ~other.bits
        return result
    }

    public func intersection(_ other: AddressFamilies) -> AddressFamilies {
        var result = self
        result.bits &= other.bits
        return result
    }

    private static func bit(_ family: AddressFamily) -> UInt8 {
        family == .ipv4 ? 1 : 2
    }
}
