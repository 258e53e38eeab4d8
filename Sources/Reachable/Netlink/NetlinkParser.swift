import CMnl

/// Turns the bytes of one netlink datagram into validated messages, with libmnl doing the
/// bounds checks. A truncated or malformed message is counted and skipped, never trusted.
public struct NetlinkParser: Sendable {
    /// Messages skipped because a header, payload or attribute did not fit or had the wrong size.
    public private(set) var malformedCount = 0
    /// Messages of a type reachd does not read.
    public private(set) var unknownCount = 0
    /// Whether a route with a destination is parsed in full (`.route`) or only noted
    /// (`.specificRoute`). The table keeps default routes only; on a host fed 100,000 routes by
    /// BGP, parsing each one's attributes would be most of the cost of a dump.
    public let keepsSpecificRoutes: Bool

    public init(keepsSpecificRoutes: Bool = true) {
        self.keepsSpecificRoutes = keepsSpecificRoutes
    }

    public mutating func parse(_ datagram: UnsafeRawBufferPointer) -> [NetlinkEnvelope] {
        var result: [NetlinkEnvelope] = []
        let framed = Self.forEachMessage(in: datagram) { header in
            if let message = parseOne(header) {
                result.append(
                    NetlinkEnvelope(
                        message: message, sequence: header.pointee.nlmsg_seq, flags: header.pointee.nlmsg_flags)
                )
            }
        }
        if !framed { malformedCount += 1 }
        return result
    }

    /// Calls `body` with each message of one datagram whose length fits; returns false when a
    /// header claims more than the datagram holds (the rest cannot be framed and is skipped).
    static func forEachMessage(
        in datagram: UnsafeRawBufferPointer, _ body: (UnsafeMutablePointer<nlmsghdr>) -> Void
    ) -> Bool {
        guard let base = datagram.baseAddress, !datagram.isEmpty else { return true }
        var remaining = Int32(clamping: datagram.count)
        var header = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: nlmsghdr.self))
        while remaining > 0 {
            // mnl_nlmsg_ok compares (int)nlmsg_len <= len, so a length of 2 GiB or more passes it;
            // and libmnl walks attributes up to the *aligned* length: that must fit as well.
            let headerSize = Int(MemoryLayout<nlmsghdr>.size)
            let length = Int(remaining) >= headerSize ? Int(header.pointee.nlmsg_len) : 0
            guard length >= headerSize, (length + 3) & ~3 <= Int(remaining), mnl_nlmsg_ok(header, remaining) else {
                return false
            }
            body(header)
            header = mnl_nlmsg_next(header, &remaining)
        }
        return true
    }

    public mutating func parse(_ bytes: [UInt8]) -> [NetlinkEnvelope] {
        bytes.withUnsafeBytes { parse($0) }
    }

    private mutating func parseOne(_ header: UnsafeMutablePointer<nlmsghdr>) -> NetlinkMessage? {
        let type = Int32(header.pointee.nlmsg_type)
        let parsed: NetlinkMessage?
        switch type {
        case NLMSG_NOOP:
            return nil
        case NLMSG_DONE:
            return .done
        case NLMSG_ERROR:
            parsed = parseError(header)
        case Int32(RTM_NEWLINK), Int32(RTM_DELLINK):
            parsed = parseLink(header).map { type == Int32(RTM_NEWLINK) ? .link($0) : .linkRemoved(index: $0.index) }
        case Int32(RTM_NEWADDR), Int32(RTM_DELADDR):
            parsed = parseAddress(header).map { type == Int32(RTM_NEWADDR) ? .address($0) : .addressRemoved($0) }
        case Int32(RTM_NEWROUTE), Int32(RTM_DELROUTE):
            if !keepsSpecificRoutes, let info = payload(header, as: rtmsg.self), info.pointee.rtm_dst_len != 0 {
                return .specificRoute(removed: type == Int32(RTM_DELROUTE))
            }
            parsed = parseRoute(header).map { type == Int32(RTM_NEWROUTE) ? .route($0) : .routeRemoved($0) }
        case Int32(RTM_NEWRULE), Int32(RTM_DELRULE), Int32(RTM_NEWNETCONF), Int32(RTM_DELNETCONF):
            return .other(type: UInt16(type))
        default:
            unknownCount += 1
            return nil
        }
        if parsed == nil { malformedCount += 1 }
        return parsed
    }

    private func payload<T>(_ header: UnsafeMutablePointer<nlmsghdr>, as: T.Type) -> UnsafePointer<T>? {
        guard mnl_nlmsg_get_payload_len(header) >= MemoryLayout<T>.size else { return nil }
        return UnsafePointer(mnl_nlmsg_get_payload(header).assumingMemoryBound(to: T.self))
    }

    private func parseError(_ header: UnsafeMutablePointer<nlmsghdr>) -> NetlinkMessage? {
        guard let error = payload(header, as: nlmsgerr.self) else { return nil }
        return .error(code: error.pointee.error)
    }

    private func parseLink(_ header: UnsafeMutablePointer<nlmsghdr>) -> LinkRecord? {
        guard let info = payload(header, as: ifinfomsg.self),
            let attributes = AttributeTable(header, offset: MemoryLayout<ifinfomsg>.size)
        else { return nil }
        guard let name = attributes.string(Int(IFLA_IFNAME)) else { return nil }
        var operState = UInt8(IF_OPER_UNKNOWN)
        if let attribute = attributes[Int(IFLA_OPERSTATE)] {
            guard mnl_attr_validate(attribute, MNL_TYPE_U8) >= 0 else { return nil }
            operState = mnl_attr_get_u8(attribute)
        }
        var kind: String?
        if let linkInfo = attributes[Int(IFLA_LINKINFO)] {
            guard let nested = AttributeTable(nested: linkInfo) else { return nil }
            kind = nested.string(Int(IFLA_INFO_KIND))
        }
        return LinkRecord(
            index: info.pointee.ifi_index, name: name, flags: info.pointee.ifi_flags,
            hardwareType: info.pointee.ifi_type, operState: operState, kind: kind
        )
    }

    private func parseAddress(_ header: UnsafeMutablePointer<nlmsghdr>) -> AddressRecord? {
        guard let info = payload(header, as: ifaddrmsg.self),
            let attributes = AttributeTable(header, offset: MemoryLayout<ifaddrmsg>.size)
        else { return nil }
        let family = info.pointee.ifa_family
        let size = Int32(family) == AF_INET ? 4 : (Int32(family) == AF_INET6 ? 16 : 0)
        guard size > 0 else { return nil }
        // IFA_LOCAL is this host's address; on point-to-point links IFA_ADDRESS is the peer's.
        // Both must have the family's size when present, even the one not used.
        var candidates: [[UInt8]] = []
        for type in [Int(IFA_LOCAL), Int(IFA_ADDRESS)] {
            guard let attribute = attributes[type] else { continue }
            guard let bytes = attributes.bytes(of: attribute, count: size) else { return nil }
            candidates.append(bytes)
        }
        guard let bytes = candidates.first, let address = IPAddress(bytes: bytes) else { return nil }
        var flags = UInt32(info.pointee.ifa_flags)
        if let extended = attributes[Int(IFA_FLAGS)] {
            guard mnl_attr_validate(extended, MNL_TYPE_U32) >= 0 else { return nil }
            flags = mnl_attr_get_u32(extended)
        }
        return AddressRecord(
            interfaceIndex: Int32(bitPattern: info.pointee.ifa_index),
            prefixLength: info.pointee.ifa_prefixlen, flags: flags, scope: info.pointee.ifa_scope, address: address
        )
    }

    private func parseRoute(_ header: UnsafeMutablePointer<nlmsghdr>) -> RouteRecord? {
        guard let info = payload(header, as: rtmsg.self),
            let attributes = AttributeTable(header, offset: MemoryLayout<rtmsg>.size)
        else { return nil }
        var table = UInt32(info.pointee.rtm_table)
        if let attribute = attributes[Int(RTA_TABLE.rawValue)] {
            guard mnl_attr_validate(attribute, MNL_TYPE_U32) >= 0 else { return nil }
            table = mnl_attr_get_u32(attribute)
        }
        var priority: UInt32 = 0
        if let attribute = attributes[Int(RTA_PRIORITY.rawValue)] {
            guard mnl_attr_validate(attribute, MNL_TYPE_U32) >= 0 else { return nil }
            priority = mnl_attr_get_u32(attribute)
        }
        var interfaces: [Int32] = []
        if let attribute = attributes[Int(RTA_OIF.rawValue)] {
            guard mnl_attr_validate(attribute, MNL_TYPE_U32) >= 0 else { return nil }
            interfaces.append(Int32(bitPattern: mnl_attr_get_u32(attribute)))
        }
        if let attribute = attributes[Int(RTA_MULTIPATH.rawValue)] {
            guard let hops = Self.nextHopInterfaces(attribute) else { return nil }
            interfaces += hops
        }
        let size = Int32(info.pointee.rtm_family) == AF_INET6 ? 16 : 4
        var preferredSource: IPAddress?
        if let attribute = attributes[Int(RTA_PREFSRC.rawValue)] {
            guard let bytes = attributes.bytes(of: attribute, count: size) else { return nil }
            preferredSource = IPAddress(bytes: bytes)
        }
        var destination: [UInt8] = []
        if let attribute = attributes[Int(RTA_DST.rawValue)] {
            guard let bytes = attributes.bytes(of: attribute, count: size) else { return nil }
            destination = bytes
        }
        return RouteRecord(
            family: info.pointee.rtm_family, table: table, type: info.pointee.rtm_type,
            destinationLength: info.pointee.rtm_dst_len, destination: destination, priority: priority,
            tos: info.pointee.rtm_tos, outputInterfaces: interfaces, preferredSource: preferredSource
        )
    }

    /// The interfaces of an `RTA_MULTIPATH` attribute's next hops; `nil` if one does not fit.
    private static func nextHopInterfaces(_ attribute: UnsafePointer<nlattr>) -> [Int32]? {
        var remaining = Int32(mnl_attr_get_payload_len(attribute))
        var hop = UnsafePointer(mnl_attr_get_payload(attribute).assumingMemoryBound(to: rtnexthop.self))
        var interfaces: [Int32] = []
        while remaining > 0 {
            guard remaining >= Int32(MemoryLayout<rtnexthop>.size), reachd_rtnh_ok(hop, remaining) != 0 else {
                return nil
            }
            interfaces.append(hop.pointee.rtnh_ifindex)
            remaining -= reachd_rtnh_size(hop)
            hop = reachd_rtnh_next(hop)
        }
        return interfaces
    }
}

/// A message's attributes by type, filled by `mnl_attr_parse`; the last one of a type wins.
///
/// libmnl stops silently at an attribute whose length runs past the end; this table notices
/// (the attributes must cover the message exactly) so such a message is rejected as malformed.
struct AttributeTable {
    private var slots = [UnsafePointer<nlattr>?](repeating: nil, count: 64)

    init?(_ header: UnsafeMutablePointer<nlmsghdr>, offset: Int) {
        let end = UnsafeRawPointer(header) + Int(header.pointee.nlmsg_len)
        guard let start = UnsafeRawPointer(mnl_nlmsg_get_payload_offset(header, offset)), start <= end else {
            return nil
        }
        var collector = Collector(end: start, limit: end)
        let status = withUnsafeMutablePointer(to: &collector) { context in
            mnl_attr_parse(header, UInt32(offset), Self.collect, context)
        }
        guard status >= MNL_CB_STOP, collector.end == end || Self.onlyPadding(from: collector.end, to: end) else {
            return nil
        }
        slots = collector.slots
    }

    init?(nested: UnsafePointer<nlattr>) {
        guard mnl_attr_validate(nested, MNL_TYPE_NESTED) >= 0 else { return nil }
        let end = UnsafeRawPointer(nested) + Int(nested.pointee.nla_len)
        guard let payload = UnsafeRawPointer(mnl_attr_get_payload(nested)) else { return nil }
        var collector = Collector(end: payload, limit: end)
        let status = withUnsafeMutablePointer(to: &collector) { context in
            mnl_attr_parse_nested(nested, Self.collect, context)
        }
        guard status >= MNL_CB_STOP, collector.end == end || Self.onlyPadding(from: collector.end, to: end) else {
            return nil
        }
        slots = collector.slots
    }

    subscript(type: Int) -> UnsafePointer<nlattr>? {
        type < slots.count ? slots[type] : nil
    }

    /// A NUL-terminated string attribute; `nil` if absent or not a valid string.
    func string(_ type: Int) -> String? {
        guard let attribute = self[type], mnl_attr_validate(attribute, MNL_TYPE_NUL_STRING) >= 0 else { return nil }
        return String(cString: mnl_attr_get_str(attribute))
    }

    /// The payload of an attribute that must be exactly `count` bytes.
    func bytes(of attribute: UnsafePointer<nlattr>, count: Int) -> [UInt8]? {
        guard Int(mnl_attr_get_payload_len(attribute)) == count else { return nil }
        let raw = UnsafeRawBufferPointer(start: mnl_attr_get_payload(attribute), count: count)
        return Array(raw)
    }

    /// The last attribute's alignment may end up to three bytes short of, or past, the message.
    private static func onlyPadding(from: UnsafeRawPointer, to: UnsafeRawPointer) -> Bool {
        abs(to - from) < 4
    }

    private struct Collector {
        var slots = [UnsafePointer<nlattr>?](repeating: nil, count: 64)
        /// Where the last attribute (aligned) ended: must reach the end of the message.
        var end: UnsafeRawPointer
        /// The message's (or nest's) unaligned end: no attribute may run past it.
        var limit: UnsafeRawPointer
    }

    private static let collect: mnl_attr_cb_t = { attribute, context in
        guard let attribute, let context else { return MNL_CB_ERROR }
        let collector = context.assumingMemoryBound(to: Collector.self)
        let length = Int(attribute.pointee.nla_len)
        guard UnsafeRawPointer(attribute) + length <= collector.pointee.limit else { return MNL_CB_ERROR }
        collector.pointee.end = UnsafeRawPointer(attribute) + ((length + 3) & ~3)
        let type = Int(mnl_attr_get_type(attribute))
        if type < collector.pointee.slots.count {
            collector.pointee.slots[type] = attribute
        }
        return MNL_CB_OK
    }
}
