import CMnl
import Glibc

/// The IPv6 addresses the kernel is about to delete because their link was just set down.
///
/// `ip link set … down` reaches reachd as an `RTM_NEWLINK`, and only then, one by one, as an
/// `RTM_DELADDR` for each IPv6 address the kernel drops (`addrconf_ifdown`). A source that
/// published after the first message would send a second document a moment later, with the
/// addresses gone: a link going down must be one document. So after a batch that set a link
/// down, the source waits — on the socket, at most `NetlinkSource.removalWait` — until these
/// addresses have been announced as removed. What the kernel drops: every IPv6 address of the
/// link, unless `keep_addr_on_down` is set (for all links or for that one), which keeps the
/// permanent ones that are not link-local.
struct AddressRemovalsOnDown {
    /// Where the sysctls live; a test may point elsewhere.
    var sysctlDirectory = "/proc/sys/net/ipv6/conf"

    /// Whether any link in `setDown` still holds an address the kernel removes on down.
    func pending(_ setDown: Set<Int32>, in table: NetworkTable) -> Bool {
        setDown.contains { index in
            guard let link = table.links[index], link.flags & reachd_iff_up == 0 else { return false }
            let ipv6 = table.addresses(of: index).filter { $0.address.isIPv6 }
            guard !ipv6.isEmpty else { return false }
            let keepsAddresses = keepAddressOnDown(link.name)
            return ipv6.contains { Self.isDropped($0, keepsAddresses: keepsAddresses) }
        }
    }

    /// `addrconf_ifdown`'s rule for one address.
    static func isDropped(_ address: AddressRecord, keepsAddresses: Bool) -> Bool {
        guard keepsAddresses else { return true }
        let isLinkLocal = address.address.bytes[0] == 0xfe && address.address.bytes[1] & 0xc0 == 0x80
        return address.flags & UInt32(IFA_F_PERMANENT) == 0 || isLinkLocal
    }

    /// The kernel's own combination: `all` wins when it is not 0, else the link's; kept when > 0.
    /// An unreadable value counts as 0 (the kernel's default): at worst the wait runs out.
    private func keepAddressOnDown(_ linkName: String) -> Bool {
        let all = sysctl("all")
        return (all != 0 ? all : sysctl(linkName)) > 0
    }

    /// The sysctl's value; read with `read(2)`, as /proc files say they are empty until read.
    private func sysctl(_ directory: String) -> Int {
        let path = "\(sysctlDirectory)/\(directory)/keep_addr_on_down"
        guard let raw = try? systemCall("open", { open(path, O_RDONLY | O_CLOEXEC) }) else { return 0 }
        let file = OwnedDescriptor(taking: raw)
        var bytes = [UInt8](repeating: 0, count: 32)
        let count =
            (try? systemCall("read") { bytes.withUnsafeMutableBytes { read(file.rawValue, $0.baseAddress, 32) } }) ?? 0
        return Int(String(decoding: bytes[..<count], as: UTF8.self).filter { $0 != "\n" }.trimmed) ?? 0
    }
}
