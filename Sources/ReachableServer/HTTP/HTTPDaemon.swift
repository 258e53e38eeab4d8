import CMicroHTTPD
import Glibc
import Synchronization

/// Owns one libmicrohttpd daemon through its life: not started → running → draining → stopped.
/// Transitions that make no sense are refused, never undefined behaviour in C.
///
/// `poll` in an internal thread pool, with suspend/resume: an idle SSE stream is a suspended
/// connection, left out of every poll set, costing no thread and no wake-ups. Not `select`
/// (it closes descriptors ≥ 1024), not a thread per connection, and not epoll: libmicrohttpd
/// 0.9.75's edge-triggered epoll loop misses a client's FIN that arrives together with data
/// (measured here: 30–100 % of half-closed connections held open until the idle timeout);
/// level-triggered poll sees every one.
///
/// The listening socket has one owner at a time: reachd before `start`; libmicrohttpd while
/// running (`MHD_stop_daemon` closes it); reachd again once `MHD_quiesce_daemon` hands it back.
/// A failed quiesce hands nothing back, so libmicrohttpd still closes it.
final class HTTPDaemon: Sendable {
    enum Phase: Sendable {
        case notStarted
        case running(Handle)
        /// `returnedListener` is the listening socket libmicrohttpd gave back when it quiesced
        /// (reachd closes it after the stop); `nil` when quiescing failed and it still owns it.
        case draining(Handle, returnedListener: Int32?)
        case stopped
    }

    /// libmicrohttpd's daemon pointer: used only through the phase lock's transitions.
    struct Handle: @unchecked Sendable {
        let daemon: OpaquePointer
        /// The retained handler box the callbacks receive; released after the daemon stops.
        let handler: UnsafeMutableRawPointer
    }

    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    private let phase = Mutex(Phase.notStarted)
    private let listening: ListeningSocket
    private let configuration: ServerConfiguration

    init(listening: ListeningSocket, configuration: ServerConfiguration) {
        self.listening = listening
        self.configuration = configuration
    }

    /// A daemon that never started still owns its listening socket: a server built but never run
    /// (a later step of the app's assembly failed, or a test) gives its port back.
    deinit {
        let neverStarted = phase.withLock { if case .notStarted = $0 { true } else { false } }
        if neverStarted { close(listening.descriptor) }
    }

    var isDraining: Bool {
        phase.withLock { if case .running = $0 { false } else { true } }
    }

    /// Starts serving with `handler`, which is retained until `stop`.
    func start(handler: any HTTPHandler) throws {
        try phase.withLock { phase in
            guard case .notStarted = phase else { throw StartFailure(description: "daemon already started") }
            let box = Unmanaged.passRetained(
                HandlerBox(
                    handler, connectionLimit: configuration.maxConnections,
                    connectionTimeout: UInt32(configuration.connectionTimeout)
                )
            ).toOpaque()
            var options: [MHD_OptionItem] = [
                item(MHD_OPTION.LISTEN_SOCKET, Int(listening.descriptor)),
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
            options.append(item(MHD_OPTION.END, 0))
            let flags = MHD_USE_POLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            guard
                let daemon = reachd_mhd_start(
                    UInt32(flags), DaemonCallbacks.acceptPolicy, DaemonCallbacks.accessHandler, box, &options
                )
            else {
                Unmanaged<HandlerBox>.fromOpaque(box).release()
                throw StartFailure(
                    description: "libmicrohttpd refused to start (check --max-connections and the file limit)")
            }
            phase = .running(Handle(daemon: daemon, handler: box))
        }
    }

    /// Stops accepting: the listening socket is shut down so new connections are refused at once
    /// (not left in the backlog); it stays open until `stop`. Existing connections go on.
    func quiesce() {
        phase.withLock { phase in
            guard case .running(let handle) = phase else { return }
            let descriptor = MHD_quiesce_daemon(handle.daemon)
            if descriptor >= 0 { shutdown(descriptor, Int32(SHUT_RDWR)) }
            phase = .draining(handle, returnedListener: descriptor >= 0 ? descriptor : nil)
        }
    }

    /// Stops the daemon and closes every connection, then the listening socket if it is reachd's.
    /// Every suspended connection must have been resumed first: libmicrohttpd aborts otherwise.
    func stop() {
        let (handle, listenerToClose) = phase.withLock { phase -> (Handle?, Int32?) in
            defer { phase = .stopped }
            switch phase {
            case .notStarted: return (nil, listening.descriptor)
            case .running(let handle): return (handle, nil)
            case .draining(let handle, let returnedListener): return (handle, returnedListener)
            case .stopped: return (nil, nil)
            }
        }
        if let handle {
            MHD_stop_daemon(handle.daemon)
            Unmanaged<HandlerBox>.fromOpaque(handle.handler).release()
        }
        if let listenerToClose { close(listenerToClose) }
    }

    /// How far libmicrohttpd's own limit sits above reachd's: room for the few connections
    /// the worker threads may accept at the same instant before each sees the other's count.
    private static let limitSlack = 64

    private func item(_ option: MHD_OPTION, _ value: Int) -> MHD_OptionItem {
        MHD_OptionItem(option: option, value: value, ptr_value: nil)
    }
}
