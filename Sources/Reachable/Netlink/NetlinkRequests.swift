import CMnl
import Glibc

/// The request messages reachd sends, built with libmnl.
enum NetlinkRequests {
    /// A dump of every link, address or route (`RTM_GETLINK`, `RTM_GETADDR`, `RTM_GETROUTE`).
    static func dump(_ type: Int32, sequence: UInt32) -> [UInt8] {
        build(type: type, flags: NLM_F_REQUEST | NLM_F_DUMP, sequence: sequence) { header in
            // Each type's own header, zeroed ("all families, no filter"): the request socket checks
            // strictly (NETLINK_GET_STRICT_CHK), and then the kernel refuses a header of another size.
            let size =
                switch type {
                case Int32(RTM_GETLINK): MemoryLayout<ifinfomsg>.size
                case Int32(RTM_GETADDR): MemoryLayout<ifaddrmsg>.size
                default: MemoryLayout<rtmsg>.size
                }
            _ = mnl_nlmsg_put_extra_header(header, size)
        }
    }

    /// A dump of the routes through one interface, both families: the kernel filters it (with
    /// `NETLINK_GET_STRICT_CHK` set on the socket), so a host with 100,000 routes elsewhere pays
    /// nothing for them.
    static func routeDump(through interfaceIndex: Int32, sequence: UInt32) -> [UInt8] {
        build(type: Int32(RTM_GETROUTE), flags: NLM_F_REQUEST | NLM_F_DUMP, sequence: sequence) { header in
            _ = mnl_nlmsg_put_extra_header(header, MemoryLayout<rtmsg>.size)
            mnl_attr_put_u32(header, UInt16(RTA_OIF.rawValue), UInt32(bitPattern: interfaceIndex))
        }
    }

    /// `ip route get DESTINATION [oif NAME]`: which route would the kernel use? No packet is sent.
    /// `outputInterface` (not 0) asks for a route out of that interface only (`RTA_OIF`, a
    /// pinned egress). `fibMatch` (`ip route get fibmatch`) answers with the routing-table entry
    /// that matched — its prefix, table and metric — instead of the route made for this destination.
    /// `source` (`ip route get … from SOURCE`) asks as a socket bound to that local address would:
    /// rules that select a table by source apply.
    static func routeLookup(
        destination address: IPAddress, source: IPAddress? = nil, outputInterface: Int32 = 0, fibMatch: Bool = false,
        sequence: UInt32
    ) -> [UInt8] {
        build(type: Int32(RTM_GETROUTE), flags: NLM_F_REQUEST, sequence: sequence) { header in
            let message = mnl_nlmsg_put_extra_header(header, MemoryLayout<rtmsg>.size)!
                .assumingMemoryBound(to: rtmsg.self)
            message.pointee.rtm_family = UInt8(address.family)
            message.pointee.rtm_dst_len = address.isIPv6 ? 128 : 32
            if fibMatch { message.pointee.rtm_flags = UInt32(RTM_F_FIB_MATCH) }
            address.withBytes { raw in
                mnl_attr_put(header, UInt16(RTA_DST.rawValue), raw.count, raw.baseAddress)
            }
            if let source {
                message.pointee.rtm_src_len = source.isIPv6 ? 128 : 32
                source.withBytes { raw in
                    mnl_attr_put(header, UInt16(RTA_SRC.rawValue), raw.count, raw.baseAddress)
                }
            }
            if outputInterface != 0 {
                mnl_attr_put_u32(header, UInt16(RTA_OIF.rawValue), UInt32(bitPattern: outputInterface))
            }
        }
    }

    private static func build(
        type: Int32, flags: Int32, sequence: UInt32, body: (UnsafeMutablePointer<nlmsghdr>) -> Void
    ) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBytes { raw -> Int in
            let header = mnl_nlmsg_put_header(raw.baseAddress)!
            header.pointee.nlmsg_type = UInt16(type)
            header.pointee.nlmsg_flags = UInt16(flags)
            header.pointee.nlmsg_seq = sequence
            body(header)
            return Int(header.pointee.nlmsg_len)
        }
        return Array(buffer.prefix(length))
    }
}
