public import Glibc

/// An IPv4 or IPv6 address: read from the kernel, resolved, or written in a URL or an option.
/// The one address type of every module, and the one place that calls `inet_pton`/`inet_ntop` and
/// turns an address into a `sockaddr` or back.
///
/// Its own small type rather than text: the order of a target's `addresses` is numeric (IPv4 before
/// IPv6, then by value), so `9.0.0.1` sorts before `10.0.0.1`, and the text is always the C library's
/// canonical form (the same compression as `ip`), whatever the user or the DNS server wrote.
public struct IPAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The network-order bytes as two big-endian words (IPv4's four in the top of `high`), held
    /// inline rather than as an array of their own: an address is then compared, hashed and
    /// copied without the heap (a link-down hashes every target's addresses several times on its
    /// way to the document), and costs no allocation of 48 bytes.
    package let high: UInt64
    package let low: UInt64
    public let isIPv6: Bool

    /// Network-order bytes: 4 for IPv4, 16 for IPv6.
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// An address from its bytes; `nil` unless there are 4 or 16.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self = bytes.withUnsafeBytes { IPAddress(raw: $0) }
    }

    /// From 4 or 16 network-order bytes (checked by the caller).
    private init(raw: UnsafeRawBufferPointer) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in raw.enumerated() {
            if index < 8 {
                high |= UInt64(byte) << UInt64(56 - 8 * index)
            } else {
                low |= UInt64(byte) << UInt64(56 - 8 * (index - 8))
            }
        }
        self.high = high
        self.low = low
        isIPv6 = raw.count == 16
    }

    /// `body` with the network-order bytes (4 or 16), from the stack: what a netlink attribute
    /// or a `sockaddr` takes, without making `bytes`' array.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var words = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: &words) { body(UnsafeRawBufferPointer(rebasing: $0.prefix(isIPv6 ? 16 : 4))) }
    }

    /// Parses a literal (`198.18.0.1`, `2001:db8::1`; no brackets, no zone). Strict `inet_pton`: a
    /// shorthand such as `127.1`, which `inet_aton` would accept, is not an address here.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = withUnsafeBytes(of: &v4) { IPAddress(raw: $0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = withUnsafeBytes(of: &v6) { IPAddress(raw: $0) }
            return
        }
        return nil
    }

    /// Whether `text` (UTF-8 bytes, no terminator) is a literal of `family` by the same strict
    /// rule as `init?(_:)`, without making a `String` or an address: the `Host` check asks this of
    /// every request. Copied into a small terminated buffer on the stack.
    package static func isLiteral(_ text: UnsafeBufferPointer<UInt8>, family: AddressFamily) -> Bool {
        // INET6_ADDRSTRLEN is 46 with the terminator; nothing longer is an address.
        guard !text.isEmpty, text.count < 46 else { return false }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { terminated in
            for offset in 0..<text.count { terminated[offset] = CChar(bitPattern: text[offset]) }
            terminated[text.count] = 0
            var address = in6_addr()  // large enough for either family
            return inet_pton(family == .ipv6 ? AF_INET6 : AF_INET, terminated.baseAddress, &address) == 1
        }
    }

    /// The address in a `sockaddr_in` or `sockaddr_in6` (what getaddrinfo and c-ares hand back).
    public init?(socketAddress: UnsafePointer<sockaddr>?) {
        guard let socketAddress else { return nil }
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            self = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin_addr) { IPAddress(raw: $0) }
            }
        case AF_INET6:
            self = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin6_addr) { IPAddress(raw: $0) }
            }
        default:
            return nil
        }
    }

    /// Calls `body` with this address and `port` as a `sockaddr` and its length, for `bind`,
    /// `connect` and `sendto`.
    @discardableResult
    public func withSocketAddress<Result, Failure: Error>(
        port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withBytes { source in withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyMemory(from: source) } }
            return try Self.call(body, with: &address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        withBytes { source in withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyMemory(from: source) } }
        return try Self.call(body, with: &address)
    }

    private static func call<Address, Result, Failure: Error>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Failure) -> Result, with address: inout Address
    ) throws(Failure) -> Result {
        let length = socklen_t(MemoryLayout<Address>.size)
        return try withUnsafePointer(to: &address) { (pointer) throws(Failure) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (socketAddress) throws(Failure) in
                try body(socketAddress, length)
            }
        }
    }

    /// Which family, as the document names it.
    public var addressFamily: AddressFamily { isIPv6 ? .ipv6 : .ipv4 }

    /// The address family (`AF_INET` or `AF_INET6`), for sockets and route lookups.
    public var family: Int32 { isIPv6 ? AF_INET6 : AF_INET }

    /// Canonical text (`inet_ntop`), without brackets.
    public var description: String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { text in
            let ok = withBytes { raw in
                inet_ntop(family, raw.baseAddress, text.baseAddress, socklen_t(text.count)) != nil
            }
            return ok ? String(cString: text.baseAddress!) : "?"
        }
    }

    /// The form a URL's authority needs: IPv6 in brackets.
    public var urlHost: String { isIPv6 ? "[\(description)]" : description }

    /// IPv4 before IPv6, then by value (the words are big-endian: numeric order is byte order).
    public static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        if lhs.isIPv6 != rhs.isIPv6 { return !lhs.isIPv6 }
        return (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
