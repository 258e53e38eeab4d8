import FoundationEssentials

/// What sysfs knows about an interface that netlink does not say: whether it is Wi-Fi or a
/// modem. A protocol so tests can describe hardware this machine does not have.
public protocol InterfaceFacts: Sendable {
    /// `DEVTYPE=` from `/sys/class/net/NAME/uevent` (`wlan`, `wwan`, …), if any.
    func deviceType(of interface: String) -> String?
    /// Whether `/sys/class/net/NAME/phy80211` exists (a Wi-Fi device without `DEVTYPE`).
    func hasWirelessPhy(_ interface: String) -> Bool
}

/// The real sysfs. Only consulted for plain Ethernet-type links without a kind, so a container
/// whose /sys belongs to another namespace is never misled about its veth or tunnel.
public struct SysfsInterfaceFacts: InterfaceFacts {
    public let root: String

    public init(root: String = "/sys/class/net") {
        self.root = root
    }

    public func deviceType(of interface: String) -> String? {
        guard Self.isSafeName(interface),
            let text = try? String(contentsOfFile: "\(root)/\(interface)/uevent", encoding: .utf8)
        else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }

    public func hasWirelessPhy(_ interface: String) -> Bool {
        Self.isSafeName(interface) && FileManager.default.fileExists(atPath: "\(root)/\(interface)/phy80211")
    }

    /// Interface names come from the kernel, but a path is built from them: no `/` or `..`.
    private static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && name != "." && name != ".."
    }
}
