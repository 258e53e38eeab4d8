import CMnl
import Glibc
import Reachable

/// Builds rtnetlink messages byte for byte with libmnl, shaped like the kernel's own, so the
/// parser under test reads exactly what it would read from a socket.
enum MessageBuilder {
    /// One message: a header, then whatever `body` puts after it (libmnl keeps `nlmsg_len`).
    static func message(
        type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 0, _ body: (UnsafeMutablePointer<nlmsghdr>) -> Void
    ) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 8192)
        let length = buffer.withUnsafeMutableBytes { raw -> Int in
            let header = mnl_nlmsg_put_header(raw.baseAddress)!
            header.pointee.nlmsg_type = type
            header.pointee.nlmsg_flags = flags
            header.pointee.nlmsg_seq = sequence
            body(header)
            return Int(header.pointee.nlmsg_len)
        }
        return Array(buffer.prefix(length))
    }

    /// `RTM_NEWLINK` (or `RTM_DELLINK`) as the kernel sends it: ifinfomsg, name, operstate, link info.
    static func link(
        removed: Bool = false,
        index: Int32,
        name: String?,
        flags: UInt32,
        hardwareType: Int32 = ARPHRD_ETHER,
        operState: UInt8? = UInt8(IF_OPER_UP),
        kind: String? = nil,
        extra: (UnsafeMutablePointer<nlmsghdr>) -> Void = { _ in }
    ) -> [UInt8] {
        message(type: UInt16(removed ? RTM_DELLINK : RTM_NEWLINK)) { header in
            let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<ifinfomsg>.size)!
                .assumingMemoryBound(to: ifinfomsg.self)
            info.pointee.ifi_family = UInt8(AF_UNSPEC)
            info.pointee.ifi_index = index
            info.pointee.ifi_flags = flags
            info.pointee.ifi_type = UInt16(hardwareType)
            if let name { mnl_attr_put_strz(header, UInt16(IFLA_IFNAME), name) }
            mnl_attr_put_u32(header, UInt16(IFLA_MTU), 1500)
            if let operState { mnl_attr_put_u8(header, UInt16(IFLA_OPERSTATE), operState) }
            if let kind {
                let nest = mnl_attr_nest_start(header, UInt16(IFLA_LINKINFO))
                mnl_attr_put_strz(header, UInt16(IFLA_INFO_KIND), kind)
                mnl_attr_nest_end(header, nest)
            }
            extra(header)
        }
    }

    /// `RTM_NEWADDR` (or `RTM_DELADDR`): IPv4 carries `IFA_LOCAL` and `IFA_ADDRESS`, IPv6 only
    /// `IFA_ADDRESS`, both `IFA_FLAGS` (which holds the bits above 8), as the kernel does.
    static func address(
        removed: Bool = false,
        index: Int32,
        _ text: String,
        prefix: UInt8,
        scope: UInt8 = UInt8(RT_SCOPE_UNIVERSE.rawValue),
        flags: UInt32 = UInt32(IFA_F_PERMANENT),
        flagsAttribute: Bool = true,
        extra: (UnsafeMutablePointer<nlmsghdr>) -> Void = { _ in }
    ) -> [UInt8] {
        let bytes = IPAddress(text)!.bytes
        return message(type: UInt16(removed ? RTM_DELADDR : RTM_NEWADDR)) { header in
            let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<ifaddrmsg>.size)!
                .assumingMemoryBound(to: ifaddrmsg.self)
            info.pointee.ifa_family = UInt8(bytes.count == 4 ? AF_INET : AF_INET6)
            info.pointee.ifa_prefixlen = prefix
            info.pointee.ifa_flags = UInt8(truncatingIfNeeded: flags)
            info.pointee.ifa_scope = scope
            info.pointee.ifa_index = UInt32(bitPattern: index)
            put(header, type: UInt16(IFA_ADDRESS), bytes)
            if bytes.count == 4 { put(header, type: UInt16(IFA_LOCAL), bytes) }
            if flagsAttribute { mnl_attr_put_u32(header, UInt16(IFA_FLAGS), flags) }
            extra(header)
        }
    }

    /// `RTM_NEWROUTE` (or `RTM_DELROUTE`). Tables above 255 go in `RTA_TABLE` only, with
    /// `rtm_table` = `RT_TABLE_COMPAT`, like the kernel. `multipath` adds one next hop per
    /// interface (each with a gateway) in `RTA_MULTIPATH`.
    static func route(
        removed: Bool = false,
        family: Int32 = AF_INET,
        table: UInt32 = RT_TABLE_MAIN.rawValue,
        type: UInt8 = UInt8(RTN_UNICAST),
        destination: String? = nil,
        destinationLength: UInt8 = 0,
        priority: UInt32? = nil,
        outputInterface: Int32? = nil,
        gateway: String? = nil,
        preferredSource: String? = nil,
        multipath: [(interface: Int32, gateway: String)] = [],
        flags: UInt16 = 0,
        sequence: UInt32 = 0,
        extra: (UnsafeMutablePointer<nlmsghdr>) -> Void = { _ in }
    ) -> [UInt8] {
        message(type: UInt16(removed ? RTM_DELROUTE : RTM_NEWROUTE), flags: flags, sequence: sequence) { header in
            let info = mnl_nlmsg_put_extra_header(header, MemoryLayout<rtmsg>.size)!
                .assumingMemoryBound(to: rtmsg.self)
            info.pointee.rtm_family = UInt8(family)
            info.pointee.rtm_dst_len = destinationLength
            info.pointee.rtm_table = table < 256 ? UInt8(table) : UInt8(RT_TABLE_COMPAT.rawValue)
            info.pointee.rtm_protocol = UInt8(RTPROT_STATIC)
            info.pointee.rtm_scope = UInt8(RT_SCOPE_UNIVERSE.rawValue)
            info.pointee.rtm_type = type
            mnl_attr_put_u32(header, UInt16(RTA_TABLE.rawValue), table)
            if let destination { put(header, type: UInt16(RTA_DST.rawValue), IPAddress(destination)!.bytes) }
            if let priority { mnl_attr_put_u32(header, UInt16(RTA_PRIORITY.rawValue), priority) }
            if let preferredSource {
                put(header, type: UInt16(RTA_PREFSRC.rawValue), IPAddress(preferredSource)!.bytes)
            }
            if let gateway { put(header, type: UInt16(RTA_GATEWAY.rawValue), IPAddress(gateway)!.bytes) }
            if let outputInterface {
                mnl_attr_put_u32(header, UInt16(RTA_OIF.rawValue), UInt32(bitPattern: outputInterface))
            }
            if !multipath.isEmpty {
                put(header, type: UInt16(RTA_MULTIPATH.rawValue), nextHops(multipath))
            }
            extra(header)
        }
    }

    /// The kernel's answer to `ip route get DESTINATION`: a cloned /32 (or /128) route.
    static func lookupAnswer(
        destination: String, type: UInt8 = UInt8(RTN_UNICAST), outputInterface: Int32?, preferredSource: String?,
        gateway: String? = nil
    ) -> [UInt8] {
        let bytes = IPAddress(destination)!.bytes
        return route(
            family: bytes.count == 4 ? AF_INET : AF_INET6, type: type, destination: destination,
            destinationLength: UInt8(bytes.count * 8), outputInterface: outputInterface, gateway: gateway,
            preferredSource: preferredSource
        )
    }

    /// A rule change (`RTM_NEWRULE`): carries nothing the table keeps.
    static func rule() -> [UInt8] {
        message(type: UInt16(RTM_NEWRULE)) { header in
            _ = mnl_nlmsg_put_extra_header(header, 12)  // struct fib_rule_hdr
            mnl_attr_put_u32(header, 6 /* FRA_PRIORITY */, 100)
            mnl_attr_put_u32(header, 15 /* FRA_TABLE */, 100)
        }
    }

    /// `NLMSG_DONE`, the end of a dump.
    static func done(sequence: UInt32 = 0) -> [UInt8] {
        message(type: UInt16(NLMSG_DONE), flags: UInt16(NLM_F_MULTI), sequence: sequence) { header in
            let payload = mnl_nlmsg_put_extra_header(header, 4)!
            payload.storeBytes(of: Int32(0), as: Int32.self)
        }
    }

    /// `NLMSG_ERROR` with a negative errno (0 is an acknowledgement).
    static func error(_ code: Int32, sequence: UInt32 = 0) -> [UInt8] {
        message(type: UInt16(NLMSG_ERROR), sequence: sequence) { header in
            let payload = mnl_nlmsg_put_extra_header(header, MemoryLayout<nlmsgerr>.size)!
                .assumingMemoryBound(to: nlmsgerr.self)
            payload.pointee.error = code
            payload.pointee.msg.nlmsg_len = 16
        }
    }

    /// An attribute with any payload, including one of the wrong size.
    static func put(_ header: UnsafeMutablePointer<nlmsghdr>, type: UInt16, _ payload: [UInt8]) {
        payload.withUnsafeBytes { mnl_attr_put(header, type, $0.count, $0.baseAddress) }
    }

    /// `RTA_MULTIPATH`'s payload: `struct rtnexthop` followed by its `RTA_GATEWAY`, per hop.
    static func nextHops(_ hops: [(interface: Int32, gateway: String)]) -> [UInt8] {
        var bytes: [UInt8] = []
        for hop in hops {
            let gateway = IPAddress(hop.gateway)!.bytes
            let attributeLength = 4 + gateway.count
            let hopLength = MemoryLayout<rtnexthop>.size + ((attributeLength + 3) & ~3)
            var header = rtnexthop(
                rtnh_len: UInt16(hopLength), rtnh_flags: 0, rtnh_hops: 0, rtnh_ifindex: hop.interface)
            withUnsafeBytes(of: &header) { bytes += $0 }
            var attribute = nlattr(nla_len: UInt16(attributeLength), nla_type: UInt16(RTA_GATEWAY.rawValue))
            withUnsafeBytes(of: &attribute) { bytes += $0 }
            bytes += gateway
            bytes += [UInt8](repeating: 0, count: ((attributeLength + 3) & ~3) - attributeLength)
        }
        return bytes
    }
}
