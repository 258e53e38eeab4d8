import CMicroHTTPD
import Glibc
import Reachable
import Synchronization

/// Owns one libmicrohttpd daemon through its life: not started → starting → running → draining
/// → stopped. Transitions that make no sense are refused, never undefined behaviour in C.
///
/// `poll` in an internal thread pool, with suspend/resume: an idle SSE stream is a suspended
/// connection, left out of every poll set, costing no thread and no wake-ups. Not `select`
/// (it closes descriptors ≥ 1024), not a thread per connection, and not epoll: libmicrohttpd
/// 0.9.75's edge-triggered epoll loop misses a client's FIN that arrives together with data
/// (measured here: 30–100 % of half-closed connections held open until the idle timeout);
/// level-triggered poll sees every one.
///
/// Decided under the phase lock, done after it (as grpc-swift-2's `GRPCServer` does): request
/// threads read the phase (`isDraining`), and `MHD_start_daemon`, `MHD_quiesce_daemon` and
/// `MHD_stop_daemon` wait for those threads, so none of them is called with the lock held.
///
/// The listening socket stays reachd's from start to `stop`, which closes it. libmicrohttpd
/// gets a descriptor of its own for the same socket and closes that one itself (at once when
/// quiescing hands it back, else when it stops): each descriptor has exactly one owner.
final class HTTPDaemon: Sendable {
    enum Phase: Sendable {
        case notStarted
        /// `MHD_start_daemon` is running; what was asked meanwhile is done once it returns.
        case starting(then: Request)
        case running(Handle)
        case draining(Handle)
        case stopped
    }

    /// A transition asked for while the daemon was starting.
    enum Request: Sendable {
        case run, quiesce, stop
    }

    /// libmicrohttpd's daemon pointer: used only through the phase lock's transitions.
    struct Handle: @unchecked Sendable {
        let daemon: OpaquePointer
        /// The retained handler box the callbacks receive; released after the daemon stops.
        let handler: UnsafeMutableRawPointer
        /// With TLS, the certificate and key text libmicrohttpd was given (it keeps the
        /// pointers): freed after the daemon stops.
        var tlsText: [UnsafeMutablePointer<CChar>] = []
    }

    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    private let phase = Mutex(Phase.notStarted)
    /// reachd's descriptor of the listening socket, until `stop` closes it.
    private let listening: Mutex<ListeningSocket?>
    private let configuration: ServerConfiguration

    init(listening: consuming ListeningSocket, configuration: ServerConfiguration) {
        self.listening = Mutex(Optional(listening))
        self.configuration = configuration
    }

    /// Shutdown has begun (or the daemon is done). Not while it starts: libmicrohttpd may accept
    /// and answer before `MHD_start_daemon` returns, and such a first `/readyz` read "shutting
    /// down" (a clean-clone CI run caught it: `reachd:serving` failed at start).
    var isDraining: Bool {
        phase.withLock { phase in
            switch phase {
            case .notStarted, .starting(then: .run), .running: false
            case .starting, .draining, .stopped: true
            }
        }
    }

    /// Starts serving with `handler`, which is retained until `stop`.
    func start(handler: any HTTPHandler) throws {
        try phase.withLock { phase in
            guard case .notStarted = phase else { throw StartFailure(description: "daemon already started") }
            phase = .starting(then: .run)
        }
        let started: Handle
        do {
            started = try makeDaemon(handler: handler)
        } catch {
            phase.withLock { phase in
                if case .starting(.stop) = phase { phase = .stopped } else { phase = .notStarted }
            }
            throw error
        }
        let then = phase.withLock { phase -> Request in
            guard case .starting(let then) = phase else { return .stop }
            phase = then == .stop ? .stopped : .running(started)
            return then
        }
        switch then {
        case .run: break
        case .quiesce: quiesce()
        case .stop: stopDaemon(started)
        }
    }

    /// Stops accepting: the listening socket is shut down so new connections are refused at once
    /// (not left in the backlog); it stays open until `stop`. Existing connections go on.
    func quiesce() {
        let handle = phase.withLock { phase -> Handle? in
            switch phase {
            case .starting(.run):
                phase = .starting(then: .quiesce)
                return nil
            case .running(let handle):
                phase = .draining(handle)
                return handle
            default:
                return nil
            }
        }
        guard let handle else { return }
        let returned = MHD_quiesce_daemon(handle.daemon)
        // A failed quiesce hands nothing back: libmicrohttpd still polls its descriptor (and
        // closes it when it stops), so the socket is left open for it.
        guard returned >= 0 else { return }
        _ = OwnedDescriptor(taking: returned)
        listening.withLock { listening in
            guard let descriptor = listening?.descriptor else { return }
            _ = try? systemCall("shutdown listening socket") { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Stops the daemon and closes every connection, then the listening socket.
    /// Every suspended connection must have been resumed first: libmicrohttpd aborts otherwise.
    func stop() {
        let handle = phase.withLock { phase -> Handle? in
            switch phase {
            case .starting:
                phase = .starting(then: .stop)
                return nil
            case .running(let handle), .draining(let handle):
                phase = .stopped
                return handle
            case .notStarted, .stopped:
                phase = .stopped
                return nil
            }
        }
        if let handle { stopDaemon(handle) }
        _ = listening.withLock { $0.take() }
    }

    private func stopDaemon(_ handle: Handle) {
        MHD_stop_daemon(handle.daemon)
        Unmanaged<HandlerBox>.fromOpaque(handle.handler).release()
        for text in handle.tlsText { free(text) }
    }

    /// `MHD_start_daemon` on a descriptor of the listening socket that libmicrohttpd owns.
    private func makeDaemon(handler: any HTTPHandler) throws -> Handle {
        let duplicate = try listening.withLock { listening throws(SystemError) in try listening?.duplicate() }
        guard let forDaemon = duplicate else { throw StartFailure(description: "daemon already stopped") }
        let box = Unmanaged.passRetained(
            HandlerBox(
                handler, connectionLimit: configuration.maxConnections,
                connectionTimeout: UInt32(configuration.connectionTimeout), security: configuration.security
            )
        ).toOpaque()
        var options: [MHD_OptionItem] = [
            item(MHD_OPTION.LISTEN_SOCKET, Int(forDaemon)),
            // reachd enforces the limit itself when it accepts (see `acceptPolicy`); this is
            // only a backstop a few above it.
            item(MHD_OPTION.CONNECTION_LIMIT, configuration.maxConnections + Self.limitSlack),
            item(MHD_OPTION.CONNECTION_TIMEOUT, configuration.connectionTimeout),
            item(MHD_OPTION.CONNECTION_MEMORY_LIMIT, configuration.connectionMemoryLimit),
            item(MHD_OPTION.CONNECTION_MEMORY_INCREMENT, 1024),
            MHD_OptionItem(
                option: MHD_OPTION.NOTIFY_COMPLETED,
                value: unsafeBitCast(DaemonCallbacks.requestCompleted, to: Int.self), ptr_value: box
            ),
            MHD_OptionItem(
                option: MHD_OPTION.NOTIFY_CONNECTION,
                value: unsafeBitCast(DaemonCallbacks.connectionNotification, to: Int.self), ptr_value: box
            ),
            MHD_OptionItem(
                option: MHD_OPTION.UNESCAPE_CALLBACK,
                value: unsafeBitCast(DaemonCallbacks.keepEscaped, to: Int.self), ptr_value: nil
            ),
        ]
        if configuration.maxConnectionsPerIP > 0 {
            options.append(item(MHD_OPTION.PER_IP_CONNECTION_LIMIT, configuration.maxConnectionsPerIP))
        }
        if configuration.threads > 1 {
            options.append(item(MHD_OPTION.THREAD_POOL_SIZE, configuration.threads))
        }
        // With TLS, libmicrohttpd needs a certificate and key of its own at start; every
        // connection is then given the credentials in force when it is accepted
        // (`DaemonCallbacks.connectionNotification`), so these are only ever the first ones.
        var tlsText: [UnsafeMutablePointer<CChar>] = []
        var flags = MHD_USE_POLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if let credentials = configuration.security?.servesTLS == true ? configuration.security?.tls : nil {
            tlsText = [
                strdup(credentials.certificatePEM), strdup(credentials.keyPEM), strdup(credentials.priorityText),
            ]
            flags |= MHD_USE_TLS.rawValue
            options.append(MHD_OptionItem(option: MHD_OPTION.HTTPS_MEM_CERT, value: 0, ptr_value: tlsText[0]))
            options.append(MHD_OptionItem(option: MHD_OPTION.HTTPS_MEM_KEY, value: 0, ptr_value: tlsText[1]))
            options.append(MHD_OptionItem(option: MHD_OPTION.HTTPS_PRIORITIES, value: 0, ptr_value: tlsText[2]))
        }
        options.append(item(MHD_OPTION.END, 0))
        guard
            let daemon = reachd_mhd_start(
                UInt32(flags), DaemonCallbacks.acceptPolicy, DaemonCallbacks.accessHandler, box, &options
            )
        else {
            // Refused: the descriptor made for it is still reachd's to close.
            _ = OwnedDescriptor(taking: forDaemon)
            Unmanaged<HandlerBox>.fromOpaque(box).release()
            for text in tlsText { free(text) }
            throw StartFailure(
                description: "libmicrohttpd refused to start (check --max-connections and the file limit)")
        }
        return Handle(daemon: daemon, handler: box, tlsText: tlsText)
    }

    /// How far libmicrohttpd's own limit sits above reachd's: room for the few connections
    /// the worker threads may accept at the same instant before each sees the other's count.
    private static let limitSlack = 64

    private func item(_ option: MHD_OPTION, _ value: Int) -> MHD_OptionItem {
        MHD_OptionItem(option: option, value: value, ptr_value: nil)
    }
}
