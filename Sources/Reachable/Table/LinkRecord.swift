/// What the table keeps of an `RTM_NEWLINK`.
public struct LinkRecord: Sendable, Equatable {
    public var index: Int32
    public var name: String
    /// `IFF_*` flags (`ifi_flags`).
    public var flags: UInt32
    /// `ARPHRD_*` hardware type (`ifi_type`).
    public var hardwareType: UInt16
    /// `IF_OPER_*` (RFC 2863) from `IFLA_OPERSTATE`.
    public var operState: UInt8
    /// `IFLA_INFO_KIND` inside `IFLA_LINKINFO`, if the kernel sent one.
    public var kind: String?

    public init(index: Int32, name: String, flags: UInt32, hardwareType: UInt16, operState: UInt8, kind: String?) {
        self.index = index
        self.name = name
        self.flags = flags
        self.hardwareType = hardwareType
        self.operState = operState
        self.kind = kind
    }

    public var isLoopback: Bool { flags & KernelValue.interfaceLoopback != 0 }

    /// Usable (ARCHITECTURE.md, "How Linux state becomes a status"): not loopback, administratively up, and with carrier — operstate
    /// `up`, or `unknown` with lower-up/running and not dormant (tun reports no carrier;
    /// systemd-networkd's rule).
    public var isUsable: Bool {
        guard !isLoopback, flags & KernelValue.interfaceUp != 0 else { return false }
        if operState == KernelValue.operUp { return true }
        guard operState == KernelValue.operUnknown else { return false }
        let hasCarrier = flags & (KernelValue.interfaceLowerUp | KernelValue.interfaceRunning) != 0
        let isDormant = flags & KernelValue.interfaceDormant != 0
        return hasCarrier && !isDormant
    }

    /// The kernel's operstate as the document spells it.
    public var operStateName: String {
        switch operState {
        case KernelValue.operNotPresent: "notpresent"
        case KernelValue.operDown: "down"
        case KernelValue.operLowerLayerDown: "lowerlayerdown"
        case KernelValue.operTesting: "testing"
        case KernelValue.operDormant: "dormant"
        case KernelValue.operUp: "up"
        default: "unknown"
        }
    }
}
