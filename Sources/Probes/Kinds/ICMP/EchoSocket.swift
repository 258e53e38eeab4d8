import CICMP
import Glibc
import Reachable

/// One ICMP socket of the echo driver (`ICMPEchoes`): an unprivileged datagram socket where
/// `net.ipv4.ping_group_range` allows it (the kernel picks the identifier and delivers only its
/// own replies), else a raw socket (`CAP_NET_RAW`: reachd's own random identifier, and a filter
/// that lets only echo replies in). ICMP errors about what it sent come on its error queue
/// (`IP_RECVERR`), and it never fragments (`IP_PMTUDISC_PROBE`): the full-size echo tests the path.
/// Engine thread only.
final class EchoSocket {
    let family: AddressFamily
    let descriptor: Int32
    let isRaw: Bool
    /// The echo identifier of a raw socket (a datagram socket's is the kernel's).
    let identifier: UInt16
    private var sequence = UInt16.random(in: 0...UInt16.max)
    /// Where replies are read: one echo reply at most, the largest being a full-size echo's.
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// Why no ICMP socket can be opened, naming both remedies (for the start-up refusal).
    static let remedies =
        "allow unprivileged ICMP sockets with the sysctl net.ipv4.ping_group_range (e.g. \"0 2147483647\"; "
        + "a safe sysctl in Kubernetes), or give reachd CAP_NET_RAW"

    /// - Parameters:
    ///   - interface: a pinned probe's interface (`SO_BINDTODEVICE`).
    ///   - source: a pinned probe's source address (bound, so that rules by source apply).
    init(family: AddressFamily, interface: String? = nil, source: IPAddress? = nil) throws(SystemError) {
        self.family = family
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let proto = Int32(family == .ipv4 ? IPPROTO_ICMP : IPPROTO_ICMPV6)
        let flags = Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        var opened = socket(domain, Int32(SOCK_DGRAM.rawValue) | flags, proto)
        var raw = false
        if opened < 0, errno == EACCES || errno == EPERM || errno == EPROTONOSUPPORT {
            opened = socket(domain, Int32(SOCK_RAW.rawValue) | flags, proto)
            raw = true
        }
        guard opened >= 0 else {
            throw SystemError("no ICMP socket (\(Self.remedies))", code: errno)
        }
        descriptor = opened
        isRaw = raw
        identifier = raw ? UInt16.random(in: 1...UInt16.max) : 0
        do {
            try configure(interface: interface, source: source)
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit {
        close(descriptor)
    }

    private func configure(interface: String?, source: IPAddress?) throws(SystemError) {
        let (level, recvErr, discover, probe) =
            family == .ipv4
            ? (Int32(IPPROTO_IP), IP_RECVERR, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)
            : (Int32(IPPROTO_IPV6), IPV6_RECVERR, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE)
        try option(level, recvErr, Int32(1), "IP_RECVERR")
        try option(level, discover, Int32(probe), "IP_MTU_DISCOVER")
        if isRaw, family == .ipv4 {
            // A set bit blocks that type: every type but echo reply.
            try option(Int32(SOL_RAW), reachd_icmp_filter_option, ~(UInt32(1) << UInt32(ICMP_ECHOREPLY)), "ICMP_FILTER")
        } else if isRaw {
            var filter = icmp6_filter()
            reachd_icmp6_filter_pass_only(&filter, Int32(ICMP6_ECHO_REPLY))
            try option(Int32(IPPROTO_ICMPV6), ICMP6_FILTER, filter, "ICMP6_FILTER")
        }
        // One socket carries the replies of every icmp:// target of its family and way out: a round
        // of 1,000 targets is answered within a millisecond, more than the default 208 KiB holds
        // (the fleet bench counted 6 % of the replies lost on a lossless link: false loss). With
        // CAP_NET_ADMIN past net.core.rmem_max, else up to it; a smaller buffer is no error.
        if (try? option(Int32(SOL_SOCKET), SO_RCVBUFFORCE, Self.receiveBuffer, "SO_RCVBUFFORCE")) == nil {
            _ = try? option(Int32(SOL_SOCKET), SO_RCVBUF, Self.receiveBuffer, "SO_RCVBUF")
        }
        if let interface {
            let bound = interface.withCString { name in
                setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(strlen(name) + 1))
            }
            guard bound == 0 else { throw SystemError("SO_BINDTODEVICE \(interface)", code: errno) }
        }
        if let source {
            let bound = source.withSocketAddress(port: 0) { bind(descriptor, $0, $1) }
            guard bound == 0 else { throw SystemError("bind \(source)", code: errno) }
        }
    }

    /// What the socket asks for its receive buffer (the kernel doubles it for bookkeeping).
    static let receiveBuffer: Int32 = 4 << 20

    private func option<Value: BitwiseCopyable>(
        _ level: Int32, _ name: Int32, _ value: Value, _ what: String
    ) throws(SystemError) {
        var value = value
        guard setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Value>.size)) == 0 else {
            throw SystemError("setsockopt \(what)", code: errno)
        }
    }

    /// The next sequence number (wrapping).
    func nextSequence() -> UInt16 {
        sequence &+= 1
        return sequence
    }

    /// Sends an echo request with `payload` bytes to `address`; `nil`, or the `errno` of a refused send.
    func sendEcho(to address: IPAddress, sequence: UInt16, payload: Int) -> Int32? {
        var packet = [UInt8](repeating: 0, count: 8 + payload)
        packet[0] = UInt8(family == .ipv4 ? ICMP_ECHO : Int32(ICMP6_ECHO_REQUEST))
        packet[4] = UInt8(identifier >> 8)
        packet[5] = UInt8(identifier & 0xff)
        packet[6] = UInt8(sequence >> 8)
        packet[7] = UInt8(sequence & 0xff)
        for index in 8..<packet.count { packet[index] = UInt8(truncatingIfNeeded: index) }
        if isRaw, family == .ipv4 {
            // The kernel sums a datagram socket's and every ICMPv6 packet; a raw IPv4 one is ours.
            let sum = Self.checksum(packet)
            packet[2] = UInt8(sum >> 8)
            packet[3] = UInt8(sum & 0xff)
        }
        let sent = address.withSocketAddress(port: 0) { pointer, length in
            packet.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, pointer, length) }
        }
        return sent < 0 ? errno : nil
    }

    /// RFC 1071's Internet checksum.
    static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        var index = 0
        while index + 1 < bytes.count {
            sum += UInt32(bytes[index]) << 8 | UInt32(bytes[index + 1])
            index += 2
        }
        if index < bytes.count { sum += UInt32(bytes[index]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xffff) + (sum >> 16) }
        return ~UInt16(sum)
    }

    /// What came back: an echo reply (`sequence`, from whom), or an ICMP error about one of ours.
    enum Arrival {
        case reply(sequence: UInt16, from: IPAddress)
        /// `unreachable`: destination unreachable (any code); `mtu`: "fragmentation needed" /
        /// "packet too big" or a local MTU, with the MTU it names.
        case error(sequence: UInt16, to: IPAddress?, unreachable: Bool, mtu: Int?, detail: String)
    }

    /// Everything waiting on the socket, replies then errors; never blocks.
    func drain() -> [Arrival] {
        var arrivals: [Arrival] = []
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &address) { storage in
                    storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, raw.baseAddress, raw.count, 0, $0, &length)
                    }
                }
            }
            guard count > 0 else { break }
            var header = 0
            if isRaw, family == .ipv4 { header = Int(buffer[0] & 0x0f) * 4 }  // a raw IPv4 read has the IP header
            guard count >= header + 8 else { continue }
            let type = Int32(buffer[header])
            guard type == (family == .ipv4 ? Int32(ICMP_ECHOREPLY) : Int32(ICMP6_ECHO_REPLY)) else { continue }
            let id = UInt16(buffer[header + 4]) << 8 | UInt16(buffer[header + 5])
            guard !isRaw || id == identifier, let from = Self.address(of: &address) else { continue }
            arrivals.append(.reply(sequence: UInt16(buffer[header + 6]) << 8 | UInt16(buffer[header + 7]), from: from))
        }
        while let error = readError() { arrivals.append(error) }
        return arrivals
    }

    /// One message of the error queue (`MSG_ERRQUEUE`): the ICMP header we sent, and the
    /// kernel's `sock_extended_err` saying what came back.
    private func readError() -> Arrival? {
        var payload = [UInt8](repeating: 0, count: 64)
        var control = [UInt8](repeating: 0, count: 512)
        var address = sockaddr_storage()
        let count = payload.withUnsafeMutableBytes { payloadBytes in
            control.withUnsafeMutableBytes { controlBytes in
                withUnsafeMutablePointer(to: &address) { name in
                    var vector = iovec(iov_base: payloadBytes.baseAddress, iov_len: payloadBytes.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var message = msghdr()
                        message.msg_name = UnsafeMutableRawPointer(name)
                        message.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                        message.msg_iov = vectorPointer
                        message.msg_iovlen = 1
                        message.msg_control = controlBytes.baseAddress
                        message.msg_controllen = controlBytes.count
                        let received = recvmsg(descriptor, &message, Int32(MSG_ERRQUEUE | MSG_DONTWAIT))
                        return (received, message.msg_controllen)
                    }
                }
            }
        }
        guard count.0 >= 0 else { return nil }
        guard count.0 >= 8, payload[0] == UInt8(family == .ipv4 ? ICMP_ECHO : Int32(ICMP6_ECHO_REQUEST)),
            let extended = Self.extendedError(control, length: count.1)
        else { return readError() }  // not about an echo of ours: the next one
        let id = UInt16(payload[4]) << 8 | UInt16(payload[5])
        if isRaw, id != identifier { return readError() }
        let sequence = UInt16(payload[6]) << 8 | UInt16(payload[7])
        let fromICMP = extended.ee_origin == UInt8(SO_EE_ORIGIN_ICMP) || extended.ee_origin == UInt8(SO_EE_ORIGIN_ICMP6)
        let type = Int32(extended.ee_type)
        let code = Int32(extended.ee_code)
        let tooBig =
            fromICMP
            ? (family == .ipv4 ? type == ICMP_DEST_UNREACH && code == ICMP_FRAG_NEEDED : type == ICMP6_PACKET_TOO_BIG)
            : extended.ee_errno == UInt32(EMSGSIZE)
        let unreachable =
            fromICMP && !tooBig && type == (family == .ipv4 ? ICMP_DEST_UNREACH : Int32(ICMP6_DST_UNREACH))
        let detail =
            tooBig
            ? "path MTU \(extended.ee_info)"
            : fromICMP
                ? "ICMP \(family == .ipv4 ? "" : "v6 ")type \(type) code \(code)"
                : String(cString: strerror(Int32(extended.ee_errno)))
        return .error(
            sequence: sequence, to: Self.address(of: &address), unreachable: unreachable,
            mtu: tooBig ? Int(extended.ee_info) : nil, detail: detail)
    }

    private static func address(of storage: inout sockaddr_storage) -> IPAddress? {
        withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { IPAddress(socketAddress: $0) }
        }
    }

    /// The `IP_RECVERR` / `IPV6_RECVERR` control message's `sock_extended_err`.
    private static func extendedError(_ control: [UInt8], length: Int) -> sock_extended_err? {
        var offset = 0
        let headerSize = MemoryLayout<cmsghdr>.size
        while offset + headerSize <= length {
            let header = control.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self) }
            let isError =
                (header.cmsg_level == IPPROTO_IP && header.cmsg_type == IP_RECVERR)
                || (header.cmsg_level == Int32(IPPROTO_IPV6) && header.cmsg_type == IPV6_RECVERR)
            let dataOffset = offset + ((headerSize + 7) & ~7)
            if isError, dataOffset + MemoryLayout<sock_extended_err>.size <= length {
                return control.withUnsafeBytes {
                    $0.loadUnaligned(fromByteOffset: dataOffset, as: sock_extended_err.self)
                }
            }
            guard header.cmsg_len > 0 else { return nil }
            offset += (Int(header.cmsg_len) + 7) & ~7
        }
        return nil
    }

    /// The MTU of `interface`, from sysfs (the network namespace reachd runs in: sysfs follows
    /// it); `nil` when it cannot be read.
    static func mtu(of interface: String) -> Int? {
        guard !interface.contains("/"), let file = fopen("/sys/class/net/\(interface)/mtu", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 32)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int(text.filter(\.isNumber)).flatMap { $0 > 0 ? $0 : nil }
    }
}
