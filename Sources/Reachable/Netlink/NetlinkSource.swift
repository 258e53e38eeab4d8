import CMnl
import Dispatch
import Glibc
import Synchronization

/// Counters a test or an operator can read to see what the source has done.
public struct SourceStatistics: Sendable, Equatable {
    /// Times the thread woke because the event socket had something.
    public var wakeUps = 0
    /// Valid messages read from the event socket.
    public var messages = 0
    /// Messages skipped as malformed, on either socket.
    public var malformedMessages = 0
    /// Full dumps after the kernel said events were lost (`ENOBUFS`).
    public var resyncs = 0
}

/// The kernel side of the monitor: an event socket subscribed to every rtnetlink group that can
/// change reachability, a request socket for dumps and lookups, and one thread that sleeps until
/// either the kernel or `stop()` wakes it. Never polls.
///
/// Unchecked `Sendable`: the sockets, table and parser are used by `seed()` before `start()`
/// and by the source thread after it, never by two threads at once; the rest is immutable or
/// behind a mutex.
final class NetlinkSource: @unchecked Sendable {
    private static let groups: [UInt32] = [
        UInt32(RTNLGRP_LINK.rawValue),
        UInt32(RTNLGRP_IPV4_IFADDR.rawValue), UInt32(RTNLGRP_IPV6_IFADDR.rawValue),
        UInt32(RTNLGRP_IPV4_ROUTE.rawValue), UInt32(RTNLGRP_IPV6_ROUTE.rawValue),
        UInt32(RTNLGRP_IPV4_RULE.rawValue), UInt32(RTNLGRP_IPV6_RULE.rawValue),
        UInt32(RTNLGRP_IPV4_NETCONF.rawValue), UInt32(RTNLGRP_IPV6_NETCONF.rawValue),
    ]

    private let events: NetlinkSocket
    private let requester: NetlinkRequester
    private var table = NetworkTable()
    private var parser = NetlinkParser()
    private let wakeDescriptor: Int32
    private let configuration: MonitorConfiguration
    private let destinations: (ipv4: [UInt8]?, ipv6: [UInt8]?)
    private let classifier: TransportClassifier
    private let stats = Mutex(SourceStatistics())
    private let finished = DispatchSemaphore(value: 0)
    private let started = Mutex(false)
    /// The source thread, so `stop()` called on it (a monitor's last reference dropped inside a
    /// publish) signals without waiting for itself.
    private let threadID = Mutex<pthread_t?>(nil)

    var statistics: SourceStatistics { stats.withLock { $0 } }

    /// Opens both sockets and the wake-up descriptor. Subscribes before anything is dumped, so
    /// no change between the dump and the first read is missed.
    init(configuration: MonitorConfiguration) throws {
        self.configuration = configuration
        destinations = (
            IPAddressText.parse(configuration.ipv4Destination), IPAddressText.parse(configuration.ipv6Destination)
        )
        classifier = TransportClassifier(facts: configuration.interfaceFacts)
        events = try NetlinkSocket(
            groups: Self.groups, nonBlocking: true, receiveBufferSize: configuration.receiveBufferSize
        )
        requester = try NetlinkRequester()
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else { throw NetlinkError("eventfd") }
    }

    deinit {
        close(wakeDescriptor)
    }

    /// The first full reading, taken on the caller's thread so the status is meaningful as soon
    /// as the monitor exists. Call before `start`.
    func seed() throws -> NetworkPath {
        table = try requester.dumpEverything()
        return derivePath()
    }

    /// Starts the thread. `publish` gets every derived path (the monitor drops repeats);
    /// `fail` is called once if the kernel connection breaks for good, and the thread ends.
    func start(publish: @escaping @Sendable (NetworkPath) -> Void, fail: @escaping @Sendable (String) -> Void) {
        guard
            started.withLock({ wasStarted in
                defer { wasStarted = true }
                return !wasStarted
            })
        else { return }
        let body = Unmanaged.passRetained(
            ThreadBody { [self] in
                threadID.withLock { $0 = pthread_self() }
                run(publish: publish, fail: fail)
                finished.signal()
            }
        )
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, body.toOpaque())
        if created == 0 {
            pthread_detach(thread)
        } else {
            body.release()
            fail("cannot start the netlink thread: \(String(cString: strerror(created)))")
            started.withLock { $0 = false }
        }
    }

    /// Wakes the thread and waits until it has ended; nothing is published after this returns.
    func stop() {
        guard started.withLock({ $0 }) else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
        if threadID.withLock({ $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }) { return }
        finished.wait()
        finished.signal()  // a second stop() returns at once too
    }

    private func run(publish: @Sendable (NetworkPath) -> Void, fail: @Sendable (String) -> Void) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var descriptors = [
            pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                fail(NetlinkError("poll").description)
                return
            }
            if descriptors[1].revents != 0 { return }
            do {
                try drain(buffer: buffer)
                publish(derivePath())
            } catch {
                fail("netlink: \(error)")
                return
            }
        }
    }

    /// Reads every pending notification and applies it; then re-reads what the kernel changes
    /// without telling: all of it after lost events, the routes after link or address changes.
    private func drain(buffer: UnsafeMutableRawBufferPointer) throws {
        var lostEvents = false
        var touchedLinksOrAddresses = false
        var count = 0
        while true {
            let received: Int?
            do {
                received = try events.receive(into: buffer)
            } catch let error as NetlinkError where error.code == ENOBUFS {
                lostEvents = true
                continue
            }
            guard let received else { break }
            for envelope in parser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<received])) {
                count += 1
                switch table.apply(envelope.message) {
                case .links, .addresses: touchedLinksOrAddresses = true
                default: break
                }
            }
        }
        if lostEvents {
            table = try requester.dumpEverything()
        } else if touchedLinksOrAddresses {
            // The kernel flushes IPv4 routes of a downed link without RTM_DELROUTE.
            table.replaceRoutes(with: try requester.dump(Int32(RTM_GETROUTE)))
        }
        let malformed = parser.malformedCount + requester.malformedCount
        stats.withLock {
            $0.wakeUps += 1
            $0.messages += count
            $0.malformedMessages = malformed
            if lostEvents { $0.resyncs += 1 }
        }
    }

    /// Asks the kernel where outside traffic would go, then derives the path from the table.
    private func derivePath() -> NetworkPath {
        let lookups = RouteLookups(
            ipv4: destinations.ipv4.map(requester.lookup) ?? .notAsked,
            ipv6: destinations.ipv6.map(requester.lookup) ?? .notAsked
        )
        return derive(
            table: table, lookups: lookups, classifier: classifier,
            meteredPatterns: configuration.meteredInterfacePatterns
        )
    }
}

/// The source thread's work, carried through pthread_create's context pointer.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
