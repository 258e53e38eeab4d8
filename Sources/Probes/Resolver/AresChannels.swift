import CProbeLibraries

/// c-ares channels, one under each key, and the queries sent on them: what the resolver (a
/// channel per egress) and the nameserver queries (a channel per server) drive the loop with. A channel is
/// made on first use, dropped once it has been idle for `idleLifetime`, and retired — finishing
/// the queries it has, then destroyed — when it is replaced. Engine thread only.
///
/// Not generic on purpose: the loop calls it through its drivers on every wake-up, and
/// an unspecialised generic class paid a generic-metadata lookup per call there (perf, 100
/// targets: 9 % of the engine thread). Keys are `AnyHashable`, queries `PendingDeadlines`.
final class AresChannels: DescriptorOwner {
    private let loop: EventLoop
    private var channels: [AnyHashable: AresChannel] = [:]
    private var lastUsed: [AnyHashable: ContinuousClock.Instant] = [:]
    private var retired: [AresChannel] = []
    private var pending = PendingDeadlines()
    private let idleLifetime: Duration

    init(idleLifetime: Duration, loop: EventLoop) {
        self.idleLifetime = idleLifetime
        self.loop = loop
    }

    /// Puts the sockets `channel` asks for on the loop, from now on.
    private func follow(_ channel: AresChannel) {
        channel.socketsChanged = { [unowned self, loop] socket, read, write in
            if read || write {
                loop.watch(socket, reading: read, writing: write, for: self)
            } else {
                loop.unwatch(socket, for: self)
            }
        }
    }

    /// The channel under `key`: the one there is, or a new one from `make`.
    func channel(
        for key: AnyHashable, make: () throws(ResolverError) -> AresChannel
    ) throws(ResolverError) -> AresChannel {
        lastUsed[key] = .now
        if let channel = channels[key] { return channel }
        let channel = try make()
        follow(channel)
        channels[key] = channel
        return channel
    }

    /// Whether a channel is under `key`.
    func has(_ key: AnyHashable) -> Bool { channels[key] != nil }

    /// Puts `channel` under `key`, retiring every other channel (the configuration they read
    /// is gone): those under other keys are made again on their next use.
    func replaceAll(with channel: AresChannel, for key: AnyHashable) {
        for old in channels.values { retire(old) }
        follow(channel)
        channels = [key: channel]
        lastUsed = [key: .now]
    }

    /// Keeps `query`'s deadline.
    func track<Outcome>(_ query: PendingQuery<Outcome>) {
        pending.append(query)
    }

    func processTimeouts(now: ContinuousClock.Instant) {
        guard !channels.isEmpty || !retired.isEmpty else { return }
        for channel in channels.values { channel.processTimeouts() }
        for channel in retired { channel.processTimeouts() }
        pending.expire(now: now)
        retired.removeAll { channel in
            guard channel.outstanding == 0 else { return false }
            channel.destroy()
            return true
        }
        for (key, used) in lastUsed where now - used > idleLifetime && channels[key]?.outstanding == 0 {
            channels.removeValue(forKey: key)?.destroy()
            lastUsed[key] = nil
        }
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        var earliest = pending.earliestDeadline
        for channel in channels.values { earliest = Self.earlier(earliest, channel.nextTimeout().map { now + $0 }) }
        for channel in retired { earliest = Self.earlier(earliest, channel.nextTimeout().map { now + $0 }) }
        return earliest
    }

    private static func earlier(
        _ first: ContinuousClock.Instant?, _ second: ContinuousClock.Instant?
    ) -> ContinuousClock.Instant? {
        guard let first, let second else { return first ?? second }
        return min(first, second)
    }

    func ready(_ descriptor: Int32, readable: Bool, writable: Bool) {
        for channel in channels.values where channel.ready(descriptor, readable: readable, writable: writable) {
            return
        }
        for channel in retired where channel.ready(descriptor, readable: readable, writable: writable) { return }
    }

    func shutdown() {
        for channel in channels.values { channel.destroy() }
        for channel in retired { channel.destroy() }
        channels = [:]
        lastUsed = [:]
        retired = []
        pending.cancelAll()
    }

    private func retire(_ channel: AresChannel) {
        if channel.outstanding == 0 {
            channel.destroy()
        } else {
            retired.append(channel)
        }
    }
}
