/// Where the host and the port lie in `HOST[:PORT]` or `[IPv6][:PORT]`: the one split of an
/// authority for every module — target URLs (`HostSyntax.split`) and the `Host` header
/// (`HostHeader`). Byte offsets over a buffer, no `String` and no generic code: the `Host` header
/// is read for every request (a profile under wrk). What the host and the port may hold is each caller's rule.
package struct AuthorityBounds: Equatable {
    /// The host, without its brackets.
    package var host: Range<Int>
    /// Whether the host was in brackets (where only an IPv6 literal belongs).
    package var isBracketed: Bool
    /// What follows the `:`, possibly empty; `nil` when there is no `:`.
    package var port: Range<Int>?

    /// The bounds within `bytes[start..<end]`; `nil` when a `[` has no `]`, something other than
    /// `:` follows the `]`, or an unbracketed authority has more than one `:` (an IPv6 literal
    /// without brackets).
    package init?(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
        if start < end, bytes[start] == UInt8(ascii: "[") {
            var close = start + 1
            while close < end, bytes[close] != UInt8(ascii: "]") { close += 1 }
            guard close < end else { return nil }
            host = (start + 1)..<close
            isBracketed = true
            guard close + 1 < end else {
                port = nil
                return
            }
            guard bytes[close + 1] == UInt8(ascii: ":") else { return nil }
            port = (close + 2)..<end
            return
        }
        var colon = start
        while colon < end, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
        host = start..<colon
        isBracketed = false
        guard colon < end else {
            port = nil
            return
        }
        for index in (colon + 1)..<end where bytes[index] == UInt8(ascii: ":") { return nil }
        port = (colon + 1)..<end
    }
}
