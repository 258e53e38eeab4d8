import CMnl

/// The kernel's rtnetlink values that the table, the route rule and the derivation compare
/// with, named once from its headers: only the netlink code imports them (CMnl), so the pure
/// code reads `KernelValue.unicastRoute`, not a C header.
enum KernelValue {
    /// `rtm_type`.
    static let unicastRoute = UInt8(RTN_UNICAST)
    static let localRoute = UInt8(RTN_LOCAL)

    /// `rtm_scope` / `ifa_scope`.
    static let universeScope = UInt8(RT_SCOPE_UNIVERSE.rawValue)

    /// `ifa_flags` (in `IFA_FLAGS`).
    static let tentativeAddress = UInt32(IFA_F_TENTATIVE)
    static let optimisticAddress = UInt32(IFA_F_OPTIMISTIC)
    static let duplicateAddress = UInt32(IFA_F_DADFAILED)
    static let secondaryAddress = UInt32(IFA_F_SECONDARY)

    /// `ifi_flags`.
    static let interfaceUp = reachd_iff_up
    static let interfaceLoopback = reachd_iff_loopback
    static let interfaceRunning = reachd_iff_running
    static let interfaceLowerUp = reachd_iff_lower_up
    static let interfaceDormant = reachd_iff_dormant

    /// `IFLA_OPERSTATE` (RFC 2863).
    static let operUnknown = UInt8(IF_OPER_UNKNOWN)
    static let operNotPresent = UInt8(IF_OPER_NOTPRESENT)
    static let operDown = UInt8(IF_OPER_DOWN)
    static let operLowerLayerDown = UInt8(IF_OPER_LOWERLAYERDOWN)
    static let operTesting = UInt8(IF_OPER_TESTING)
    static let operDormant = UInt8(IF_OPER_DORMANT)
    static let operUp = UInt8(IF_OPER_UP)

    /// `ifi_type` (`ARPHRD_*`).
    static let ether = UInt16(ARPHRD_ETHER)
    static let rawIP = UInt16(ARPHRD_RAWIP)
    static let pointToPointKinds: Set<UInt16> = Set(
        [ARPHRD_PPP, ARPHRD_NONE, ARPHRD_TUNNEL, ARPHRD_TUNNEL6, ARPHRD_SIT, ARPHRD_IPGRE, ARPHRD_IP6GRE].map {
            UInt16($0)
        })
}
