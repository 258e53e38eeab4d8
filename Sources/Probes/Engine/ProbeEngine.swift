import CProbeLibraries
import Glibc
public import Reachable
import Synchronization

/// The one place reachd's outbound probes happen: a dedicated thread that drives libcurl (TCP
/// connects, HTTP and HTTPS requests), c-ares (DNS), ICMP sockets and file watches — its drivers —
/// sleeping in `epoll_wait` on all their descriptors (`EventLoop`), woken by an eventfd.
///
/// Any thread submits work without blocking (`probe`, `resolve`); each accepted job's completion is
/// called exactly once, on the engine thread, and must not block it: every other probe waits
/// meanwhile. Completions may submit more work (resolve → route check → probe).
///
/// A `final class` with a `Mutex`-guarded inbox rather than an actor: the callers include the netlink
/// thread, which cannot `await`, and libcurl and c-ares must be driven from one thread anyway.
public final class ProbeEngine: Sendable {
    private let core: EngineCore

    /// Creates the loop and starts the engine thread (the drivers are made as work names them).
    ///
    /// - Parameters:
    ///   - resolver: where DNS configuration comes from (tests point it at their own server).
    ///   - trustedCertificates: a PEM bundle to verify TLS servers against instead of the system's CAs
    ///     (`CURLOPT_CAINFO`); `nil` in production. Verification itself is never turned off.
    ///   - resolverProblem: told (on the engine thread) when c-ares refuses a configuration, so
    ///     that a nameserver that cannot be asked is said in the log, not only as a reason.
    ///   - echoCount: small echoes per `icmp://` probe (`--icmp-count`).
    ///   - turnEnded: called on the engine thread once per turn of its loop, after the turn's
    ///     completions, before it sleeps (the monitor publishes the turn's results there).
    public init(
        resolver: ResolverConfiguration = ResolverConfiguration(), trustedCertificates: String? = nil,
        echoCount: Int = 3, resolverProblem: @escaping @Sendable (String) -> Void = { _ in },
        turnEnded: @escaping @Sendable () -> Void = {}
    ) throws(ProbeEngineError) {
        if let failure = ProbeLibraries.failure {
            throw ProbeEngineError("outbound probes need libcurl and c-ares: \(failure)")
        }
        let loop: EventLoop
        do throws(SystemError) {
            loop = try EventLoop()
        } catch {
            throw ProbeEngineError("cannot make the probe loop: \(error)")
        }
        let settings = EngineSettings(
            loop: loop, trustedCertificates: trustedCertificates, echoCount: echoCount, resolver: resolver,
            resolverProblem: resolverProblem)
        core = EngineCore(settings: settings, turnEnded: turnEnded)
        try core.startThread()
    }

    deinit {
        stop()
    }

    /// Probes one routed address as its URL's kind does (`ProbeKind`).
    ///
    /// - Returns: `false` when the engine is stopped; the completion is then never called.
    @discardableResult
    public func probe(_ job: ProbeJob, completion: @escaping @Sendable (ProbeOutcome) -> Void) -> Bool {
        job.url.kind.probe(job, on: self, completion: completion)
    }

    /// Submits one probe to the driver of `type` (made on first use), which completes it: how a
    /// kind probes. If the engine stops before it starts, `completion` gets `engineStopped`.
    ///
    /// - Returns: `false` when the engine is stopped; the completion is then never called.
    func probe<Driver: EngineDriver>(
        with type: Driver.Type, completion: @escaping @Sendable (ProbeOutcome) -> Void,
        start: @escaping @Sendable (Driver) -> Void
    ) -> Bool {
        submit(EngineTask(on: type, counted: .probes, cancel: { completion(.engineStopped) }, start: start))
    }

    /// Submits a task to its driver (`EngineTask`).
    ///
    /// - Returns: `false` when the engine is stopped; the task is then never started or cancelled.
    func submit(_ task: EngineTask) -> Bool {
        core.submit(.task(task))
    }

    /// Resolves a host name to its addresses (an IP literal comes back at once, without DNS).
    ///
    /// - Parameters:
    ///   - host: a name or an IP literal without brackets (`TargetURL.host`).
    ///   - family: one family's query alone (A or AAAA; an answer without addresses of it is then
    ///     no failure, see `ResolveOutcome`), or `nil` for both in one lookup.
    ///   - egress: the way out its queries take (one resolver channel per egress).
    ///   - deadline: when to give up with `timeout`.
    /// - Returns: `false` when the engine is stopped; the completion is then never called.
    @discardableResult
    public func resolve(
        _ host: String, family: AddressFamily? = nil, via way: ResolverWay = ResolverWay(),
        deadline: ContinuousClock.Instant, completion: @escaping @Sendable (ResolveOutcome) -> Void
    ) -> Bool {
        submit(
            EngineTask(
                on: Resolver.self, counted: .resolutions,
                cancel: { completion(.engineStopped) }
            ) { resolver in
                resolver.start(host: host, family: family, way: way, deadline: deadline, completion: completion)
            })
    }

    /// Asks one nameserver alone for the A record of `name`, exactly as given (the nameserver check).
    ///
    /// - Returns: `false` when the engine is stopped; the completion is then never called.
    @discardableResult
    public func askNameserver(
        _ server: IPAddress, name: String, timeout: Duration,
        completion: @escaping @Sendable (NameserverAnswer) -> Void
    ) -> Bool {
        askNameserver(NameserverQuestion(server: server, name: name), timeout: timeout, completion: completion)
    }

    /// Asks one nameserver alone one question, once, no search list (`dns://` targets); the answer
    /// carries the message received, whatever its rcode.
    ///
    /// - Returns: `false` when the engine is stopped; the completion is then never called.
    @discardableResult
    public func askNameserver(
        _ question: NameserverQuestion, timeout: Duration, completion: @escaping @Sendable (NameserverAnswer) -> Void
    ) -> Bool {
        submit(
            EngineTask(
                on: NameserverQueries.self, counted: .nameserverQueries,
                cancel: { completion(.engineStopped(server: question.server)) }
            ) { nameservers in nameservers.ask(question, timeout: timeout, completion: completion) })
    }

    /// Runs `body` on the engine thread, soon: the probes' orchestrators keep their state there,
    /// so it needs no lock and every completion sees it as it is.
    @discardableResult
    public func perform(_ body: @escaping @Sendable () -> Void) -> Bool {
        core.submit(.perform(body))
    }

    /// Calls the handler of the key's source (`onTimer(of:)`) with its item on the engine thread
    /// at `deadline`. A later call with the same `key` replaces it (one pending timer per target,
    /// however often the network changes).
    @discardableResult
    public func schedule(key: EngineTimerKey, at deadline: ContinuousClock.Instant) -> Bool {
        core.submit(.schedule(key: key, at: deadline))
    }

    /// Whether `key` has a timer set and not yet run. On the engine thread only (its timers are
    /// the thread's); a `schedule` not yet taken from the inbox is not counted.
    func hasTimer(_ key: EngineTimerKey) -> Bool {
        assert(isEngineThread, "the engine's timers are confined to its thread")
        return core.hasTimer(key)
    }

    /// What the keyed timers of `source` call, with their item: one handler for all of a source's
    /// timers, so that a timer is a number, not a closure (set before the first `schedule`, which
    /// arrives after it; a later handler replaces it).
    @discardableResult
    public func onTimer(of source: EngineTimerKey.Source, _ handler: @escaping @Sendable (_ item: Int) -> Void) -> Bool
    {
        core.submit(.timerHandler(source, handler))
    }

    /// Runs `body` on the engine thread at `deadline`, once (nothing replaces it).
    @discardableResult
    public func after(_ deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> Bool {
        core.submit(.after(deadline, body))
    }

    /// Calls `onChange` on the engine thread whenever resolv.conf changed (after the resolver read
    /// it again): names may resolve elsewhere now. The engine's one watch of the file.
    @discardableResult
    public func onResolverConfigurationChange(_ onChange: @escaping @Sendable () -> Void) -> Bool {
        submit(EngineTask(on: Resolver.self, counted: nil) { resolver in resolver.listeners.append(onChange) })
    }

    /// Calls `onChange` on the engine thread whenever the file at `path` changes (written in
    /// place, replaced by a rename, created, or a symlink in its directory swapped, as a
    /// Kubernetes ConfigMap update does). For `--targets-file` (resolv.conf has its own watch).
    ///
    /// - Parameter completedWritesOnly: a write in place counts when the writer closes the file,
    ///   not at each `write` (a file that is parsed whole must not be read half written).
    @discardableResult
    public func watch(
        path: String, completedWritesOnly: Bool = false, onChange: @escaping @Sendable () -> Void
    ) -> Bool {
        submit(
            EngineTask(on: FileWatches.self, counted: nil) { watches in
                if let watch = try? FileWatch(path: path, completedWritesOnly: completedWritesOnly) {
                    watches.add(watch, onChange: onChange)
                }
            })
    }

    /// Whether the caller runs on the engine thread (state confined to it asserts this).
    var isEngineThread: Bool { core.isEngineThread }

    /// What the engine has done so far (for tests).
    public var statistics: EngineStatistics { core.statistics }

    /// Wakes the thread, cancels what is under way (completions are called with `wasCancelled`), waits
    /// for the thread to end and releases every handle. Idempotent; from the engine thread itself (a
    /// completion) it only signals.
    public func stop() {
        core.stop()
    }
}

/// Names the one pending timer of one probed item: a later timer with the same key replaces it.
public struct EngineTimerKey: Hashable, Sendable {
    /// Which source's items: each numbers its own from 0.
    public enum Source: Hashable, Sendable {
        case targets
        case connectivity
        case uplinks
        case nameservers
    }

    public var source: Source
    public var item: Int

    public init(_ source: Source, item: Int) {
        self.source = source
        self.item = item
    }
}

/// The engine could not start.
public struct ProbeEngineError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
