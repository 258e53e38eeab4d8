import CProbeLibraries
import Glibc
import Reachable

/// One c-ares channel (one reading of `resolv.conf`) and the sockets it wants watched.
///
/// c-ares tells which descriptors to watch through its socket-state callback; the channel keeps that
/// set and passes each change to `socketsChanged` (its `AresChannels` puts them on the engine
/// loop), and calls `ares_process_fd` for those that became ready. Used only on the engine thread.
final class AresChannel {
    private(set) var channel: OpaquePointer?
    /// Descriptor → (wants read, wants write), as c-ares last asked.
    private(set) var sockets: [ares_socket_t: (read: Bool, write: Bool)] = [:]
    /// Queries started and not yet called back; a retired channel is destroyed when this is 0.
    var outstanding = 0
    /// Told each change c-ares asks for: a descriptor to watch for reading, writing, or (both
    /// false) no more.
    var socketsChanged: (ares_socket_t, _ read: Bool, _ write: Bool) -> Void = { _, _, _ in }
    /// How a one-server channel makes its sockets, and the errno its last failed socket call set
    /// (`reachd_ares_own_sockets`); `nil` for a resolver channel.
    private var ownSockets: UnsafeMutablePointer<reachd_ares_sockets>?

    /// Reads the resolver configuration into a new channel whose queries leave through `way`
    /// (`ares_set_local_dev` binds its sockets to a pinned interface, which must exist, and
    /// `ares_set_local_ip4`/`_ip6` to its source addresses, so policy routing by source applies).
    ///
    /// - Throws: c-ares' message when the channel cannot be created.
    init(configuration: ResolverConfiguration, way: ResolverWay = ResolverWay()) throws(ResolverError) {
        // c-ares ignores a failed SO_BINDTODEVICE and would send the kernel's way instead.
        if let interface = way.egress.interface, if_nametoindex(interface) == 0 {
            throw ResolverError("cannot resolve via \(interface): no such interface")
        }
        var options = ares_options()
        var mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_RESOLVCONF | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES
        options.sock_state_cb = Self.socketStateCallback
        options.sock_state_cb_data = Unmanaged.passUnretained(self).toOpaque()
        options.timeout = Int32(clamping: configuration.attemptTimeout.roundedUpMilliseconds)
        options.tries = Int32(clamping: max(1, configuration.attempts))
        if let port = configuration.serverPort {
            mask |= ARES_OPT_UDP_PORT | ARES_OPT_TCP_PORT
            options.udp_port = port
            options.tcp_port = port
        }
        let path = strdup(configuration.resolvConfPath)
        defer { free(path) }
        options.resolvconf_path = path
        var created: OpaquePointer?
        let status = reachd_ares_init_options(&created, &options, mask)
        guard status == ARES_SUCCESS, let created else {
            throw ResolverError(
                "cannot read \(configuration.resolvConfPath): \(String(cString: reachd_ares_strerror(status)))")
        }
        channel = created
        if let interface = way.egress.interface { reachd_ares_set_local_dev(created, interface) }
        if let source = way.ipv4Source {
            // c-ares takes the IPv4 address in host byte order.
            reachd_ares_set_local_ip4(created, source.bytes.reduce(0) { $0 << 8 | UInt32($1) })
        }
        if let source = way.ipv6Source {
            source.bytes.withUnsafeBufferPointer { reachd_ares_set_local_ip6(created, $0.baseAddress) }
        }
    }

    /// A channel that asks one nameserver only, once, with no search list and no retries: the
    /// nameserver check (`--dns-check`) and `dns://` targets. Answers with SERVFAIL or REFUSED
    /// come back as such (`ARES_FLAG_NOCHECKRESP`) instead of being taken for "try the next
    /// server"; the errno of a failed socket call is kept (`lastSocketError`).
    ///
    /// - Parameters:
    ///   - way: the way out (a pinned `dns://` target binds as the resolver does).
    ///   - hearsRouterErrors: a router's destination unreachable ends a query at once
    ///     (`IP_RECVERR`; a `dns://` target's `host-unreachable`); otherwise the kernel drops it
    ///     for UDP and the query times out, as the nameserver check has always judged it.
    init(
        server: IPAddress, port: UInt16?, timeout: Duration, way: ResolverWay = ResolverWay(),
        hearsRouterErrors: Bool = false
    ) throws(ResolverError) {
        if let interface = way.egress.interface, if_nametoindex(interface) == 0 {
            throw ResolverError("cannot ask \(server) via \(interface): no such interface")
        }
        var options = ares_options()
        var mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS
        options.sock_state_cb = Self.socketStateCallback
        options.sock_state_cb_data = Unmanaged.passUnretained(self).toOpaque()
        options.timeout = Int32(clamping: timeout.roundedUpMilliseconds)
        options.tries = 1
        options.flags = ARES_FLAG_NOCHECKRESP | ARES_FLAG_NOSEARCH
        if let port {
            mask |= ARES_OPT_UDP_PORT | ARES_OPT_TCP_PORT
            options.udp_port = port
            options.tcp_port = port
        }
        var created: OpaquePointer?
        var status = reachd_ares_init_options(&created, &options, mask)
        if status == ARES_SUCCESS, let created {
            status = Self.setServer(server, port: port, on: created)
            if status != ARES_SUCCESS { reachd_ares_destroy(created) }
        }
        guard status == ARES_SUCCESS, let created else {
            throw ResolverError("cannot ask \(server): \(String(cString: reachd_ares_strerror(status)))")
        }
        channel = created
        // c-ares binds none of the sockets it does not make itself: the device and sources go here.
        var sockets = reachd_ares_sockets()
        sockets.hear_router_errors = hearsRouterErrors ? 1 : 0
        if let interface = way.egress.interface {
            withUnsafeMutableBytes(of: &sockets.device) { device in
                device.copyBytes(from: interface.utf8.prefix(device.count - 1))
            }
        }
        if let source = way.ipv4Source {
            sockets.has_source4 = 1
            withUnsafeMutableBytes(of: &sockets.source4) { $0.copyBytes(from: source.bytes) }
        }
        if let source = way.ipv6Source {
            sockets.has_source6 = 1
            withUnsafeMutableBytes(of: &sockets.source6) { $0.copyBytes(from: source.bytes) }
        }
        let owned = UnsafeMutablePointer<reachd_ares_sockets>.allocate(capacity: 1)
        owned.initialize(to: sockets)
        ownSockets = owned
        reachd_ares_own_sockets(created, owned)
    }

    /// The errno of the channel's last failed socket call (0: none yet), for a query c-ares
    /// ended with `ARES_ECONNREFUSED`: ECONNREFUSED (an ICMP port unreachable), EHOSTUNREACH or
    /// ENETUNREACH (a router's destination unreachable), or another.
    var lastSocketError: Int32 { ownSockets?.pointee.last_errno ?? 0 }

    /// Makes `server` the channel's one nameserver, as an address rather than text: c-ares
    /// 1.18's text form refuses an IPv6 address in brackets without a port (`[2001:db8::1]`), and
    /// every IPv6 nameserver read `failing (error)` for it (a profile under wrk).
    private static func setServer(_ server: IPAddress, port: UInt16?, on channel: OpaquePointer) -> Int32 {
        var node = ares_addr_port_node()
        node.family = server.family
        withUnsafeMutableBytes(of: &node.addr) { storage in
            storage.copyBytes(from: server.bytes)  // both union members start at its first byte
        }
        // 0: the channel's port (53, or the one its options set).
        node.udp_port = Int32(port ?? 0)
        node.tcp_port = Int32(port ?? 0)
        return reachd_ares_set_servers_ports(channel, &node)
    }

    /// The nameservers the channel asks, in order (for a failure's words: `SERVFAIL from …`, or
    /// `no route to …` when the kernel has a route to none of them).
    private(set) lazy var servers: [IPAddress] = {
        guard let channel else { return [] }
        var list: UnsafeMutablePointer<ares_addr_port_node>?
        guard reachd_ares_get_servers_ports(channel, &list) == ARES_SUCCESS else { return [] }
        defer { reachd_ares_free_data(list) }
        var servers: [IPAddress] = []
        var node = list
        while let current = node {
            let size = current.pointee.family == AF_INET6 ? 16 : 4
            let bytes = withUnsafeBytes(of: current.pointee.addr) { Array($0.prefix(size)) }
            if let address = IPAddress(bytes: bytes) { servers.append(address) }
            node = current.pointee.next
        }
        return servers
    }()

    /// c-ares says which descriptors to watch; the channel keeps the set for the engine's poll.
    private static let socketStateCallback: ares_sock_state_cb = { data, socket, readable, writable in
        guard let data else { return }
        let channel = Unmanaged<AresChannel>.fromOpaque(data).takeUnretainedValue()
        if readable == 0, writable == 0 {
            channel.sockets[socket] = nil
        } else {
            channel.sockets[socket] = (readable != 0, writable != 0)
        }
        channel.socketsChanged(socket, readable != 0, writable != 0)
    }

    deinit {
        destroy()
        ownSockets?.deallocate()
    }

    /// Destroys the channel: c-ares calls every pending query back with `ARES_EDESTRUCTION` first.
    func destroy() {
        guard let channel else { return }
        self.channel = nil
        reachd_ares_destroy(channel)
        // c-ares says so as it closes each socket; any it did not say are no longer watched either.
        for socket in sockets.keys { socketsChanged(socket, false, false) }
        sockets = [:]
    }

    /// Lets c-ares read or write a ready descriptor of its own (it may call queries back from here).
    ///
    /// - Returns: whether the descriptor is one of this channel's.
    func ready(_ descriptor: Int32, readable: Bool, writable: Bool) -> Bool {
        guard let channel, sockets[descriptor] != nil else { return false }
        reachd_ares_process_fd(
            channel, readable ? descriptor : reachd_ares_socket_bad, writable ? descriptor : reachd_ares_socket_bad)
        return true
    }

    /// Lets c-ares handle its timeouts (retries, next server, giving up).
    func processTimeouts() {
        guard let channel else { return }
        reachd_ares_process_fd(channel, reachd_ares_socket_bad, reachd_ares_socket_bad)
    }

    /// How long until c-ares needs `processTimeouts`, or `nil` when it waits for nothing.
    func nextTimeout() -> Duration? {
        guard let channel, outstanding > 0 else { return nil }
        var storage = timeval()
        guard let next = reachd_ares_timeout(channel, nil, &storage) else { return nil }
        return .seconds(next.pointee.tv_sec) + .microseconds(next.pointee.tv_usec)
    }

    /// Starts `ares_query` for the records of `type` (1: A) of `name`, exactly as given; `context`
    /// comes back to `callback` retained.
    func query(_ name: String, type: UInt16, context: UnsafeMutableRawPointer, callback: ares_callback) {
        guard let channel else { return }
        outstanding += 1
        reachd_ares_query(channel, name, 1 /* C_IN */, Int32(type), callback, context)
    }

    /// Starts `ares_getaddrinfo` for one family (A or AAAA) or, `nil`, both; `context` comes back
    /// to `callback` retained.
    func getAddresses(
        of host: String, family: AddressFamily?, context: UnsafeMutableRawPointer, callback: ares_addrinfo_callback
    ) {
        guard let channel else { return }
        var hints = ares_addrinfo_hints()
        hints.ai_family = family.map { $0 == .ipv4 ? AF_INET : AF_INET6 } ?? AF_UNSPEC
        // reachd sorts itself; c-ares' RFC 6724 sort would open a UDP socket per address to learn it.
        hints.ai_flags = ARES_AI_NOSORT
        outstanding += 1
        reachd_ares_getaddrinfo(channel, host, nil, &hints, callback, context)
    }
}

/// The resolver cannot run (a channel could not be created).
public struct ResolverError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
