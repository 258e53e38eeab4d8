import CMnl
import Glibc

extension RoutePrefixes {
    /// Notes one message of a route or rule dump (`NetlinkRequester.routePrefixes`): a route's
    /// destination, a rule's `to` prefix. A multipath route or a nexthop object (whose next hop
    /// is a hash of the destination) leaves its family ungrouped, and so does a message that
    /// cannot be read. Cached clones and other families are skipped.
    mutating func note(_ header: UnsafeMutablePointer<nlmsghdr>) {
        let type = Int32(header.pointee.nlmsg_type)
        guard type == Int32(RTM_NEWROUTE) || type == Int32(RTM_NEWRULE) else { return }
        // `rtmsg` and `fib_rule_hdr` begin alike: family, destination length; both are 12 bytes.
        guard mnl_nlmsg_get_payload_len(header) >= MemoryLayout<rtmsg>.size else { return }
        let info = UnsafePointer(mnl_nlmsg_get_payload(header).assumingMemoryBound(to: rtmsg.self))
        let family: AddressFamily
        switch Int32(info.pointee.rtm_family) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return
        }
        if type == Int32(RTM_NEWROUTE), info.pointee.rtm_flags & UInt32(RTM_F_CLONED) != 0 { return }
        guard let attributes = AttributeTable(header, offset: MemoryLayout<rtmsg>.size) else {
            return refuseGrouping(of: family)
        }
        if type == Int32(RTM_NEWROUTE),
            attributes[Int(RTA_MULTIPATH.rawValue)] != nil || attributes[Int(RTA_NH_ID.rawValue)] != nil
        {
            return refuseGrouping(of: family)
        }
        let size = family == .ipv6 ? 16 : 4
        let length = Int(info.pointee.rtm_dst_len)
        guard length > 0 else { return insert([UInt8](repeating: 0, count: size), length: 0) }
        // RTA_DST and FRA_DST are both attribute 1.
        guard let attribute = attributes[Int(RTA_DST.rawValue)],
            let bytes = attributes.bytes(of: attribute, count: size)
        else { return refuseGrouping(of: family) }
        insert(bytes, length: length)
    }
}
