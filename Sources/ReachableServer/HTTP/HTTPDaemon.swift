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
final class HTTPDaemon: Sendable {
    enum Phase: Sendable {
        case notStarted
        case running(Handle)
        case draining(Handle)
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

    var isDraining: Bool {
        phase.withLock { if case .running = $0 { false } else { true } }
    }

    /// Starts serving with `handler`, which must outlive the daemon (it is retained until `stop`).
    func start(handler: any HTTPHandler) throws {
        try phase.withLock { phase in
            guard case .notStarted = phase else { throw StartFailure(description: "daemon already started") }
            let box = Unmanaged.passRetained(
                HandlerBox(handler, connectionLimit: configuration.maxConnections)
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
                    value: unsafeBitCast(requestCompleted, to: Int.self), ptr_value: box
                ),
                MHD_OptionItem(
                    option: MHD_OPTION.NOTIFY_CONNECTION,
                    value: unsafeBitCast(connectionNotification, to: Int.self), ptr_value: box
                ),
                MHD_OptionItem(
                    option: MHD_OPTION.UNESCAPE_CALLBACK,
                    value: unsafeBitCast(keepEscaped, to: Int.self), ptr_value: nil
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
            guard let daemon = reachd_mhd_start(UInt32(flags), acceptPolicy, accessHandler, box, &options) else {
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
            phase = .draining(handle)
        }
    }

    /// Stops the daemon and closes every connection. Every suspended connection must have been
    /// resumed first: libmicrohttpd aborts the process otherwise.
    func stop() {
        let handle = phase.withLock { phase -> Handle? in
            switch phase {
            case .running(let handle), .draining(let handle):
                phase = .stopped
                return handle
            case .notStarted, .stopped:
                phase = .stopped
                return nil
            }
        }
        guard let handle else { return }
        MHD_stop_daemon(handle.daemon)
        Unmanaged<HandlerBox>.fromOpaque(handle.handler).release()
        close(listening.descriptor)
    }

    /// How far libmicrohttpd's own limit sits above reachd's: room for the few connections
    /// the worker threads may accept at the same instant before each sees the other's count.
    private static let limitSlack = 64

    private func item(_ option: MHD_OPTION, _ value: Int) -> MHD_OptionItem {
        MHD_OptionItem(option: option, value: value, ptr_value: nil)
    }
}

/// Holds the handler for C, which only carries a raw pointer, and the count of open connections.
private final class HandlerBox {
    let handler: any HTTPHandler
    let connectionLimit: Int
    let openConnections = Atomic<Int>(0)

    init(_ handler: any HTTPHandler, connectionLimit: Int) {
        self.handler = handler
        self.connectionLimit = connectionLimit
    }
}

/// At the connection limit a new connection is accepted and closed at once: the client learns
/// there is no room now and may retry. (libmicrohttpd at its own limit stops accepting, and new
/// connections would wait in the listen backlog with no answer.)
private let acceptPolicy: MHD_AcceptPolicyCallback = { cls, _, _ in
    guard let cls else { return MHD_Result.NO }
    let box = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue()
    return box.openConnections.load(ordering: .relaxed) < box.connectionLimit ? MHD_Result.YES : MHD_Result.NO
}

/// Marks a request whose headers were seen but which has not been answered yet: an address no
/// object can have, compared and never dereferenced.
nonisolated(unsafe) private let awaitingAnswer = UnsafeMutableRawPointer(bitPattern: 1)!

/// libmicrohttpd calls this at least twice per request: once when the headers are in, then
/// once the (empty) body is. Answering on the first call makes it discard the rest of the
/// request and close the connection, so a bodiless GET or HEAD is answered on the second call
/// and keeps the connection alive; anything else is answered at once, and the connection closes
/// without reading a body reachd has no use for.
private let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, _, uploadSize, context in
    guard let cls, let connection, let context else { return MHD_Result.NO }
    let handler = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue().handler
    let request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "",
        version: version.map { String(cString: $0) } ?? ""
    )
    let verb = request.method
    if context.pointee == nil {
        reachd_mhd_set_connection_timeout(connection, handler.connectionTimeout)
        let isBodiless =
            reachd_mhd_request_header(connection, "Content-Length").map { String(cString: $0) == "0" } ?? true
        let hasChunkedBody = reachd_mhd_request_header(connection, "Transfer-Encoding") != nil
        if (verb == "GET" || verb == "HEAD") && isBodiless && !hasChunkedBody {
            context.pointee = awaitingAnswer
            return MHD_Result.YES
        }
        return handler.respond(to: request, on: connection, context: context)
    }
    guard context.pointee == awaitingAnswer else { return MHD_Result.NO }
    if let uploadSize, uploadSize.pointee != 0 {
        uploadSize.pointee = 0
        return MHD_Result.YES
    }
    context.pointee = nil
    return handler.respond(to: request, on: connection, context: context)
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, _, context, _ in
    guard let cls, let context, let stored = context.pointee, stored != awaitingAnswer else { return }
    context.pointee = nil
    Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue().handler.completed(context: stored)
}

/// Counts open connections for `acceptPolicy`. And a new connection must finish its first
/// request line and headers without falling silent for two seconds: a client that sends only junk libmicrohttpd cannot frame (leading NUL bytes
/// read as empty lines, which it skips) is closed soon rather than after the full idle timeout.
/// Every byte restarts the clock, so a slow but steady sender still gets through. The normal
/// timeout is restored as soon as a request arrives.
private let connectionNotification: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let cls, let connection else { return }
    let box = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue()
    if reachd_mhd_is_connection_start(code) != 0 {
        box.openConnections.add(1, ordering: .relaxed)
        reachd_mhd_set_connection_timeout(connection, min(firstRequestTimeout, box.handler.connectionTimeout))
    } else if reachd_mhd_is_connection_close(code) != 0 {
        box.openConnections.subtract(1, ordering: .relaxed)
    }
}

/// Seconds of silence allowed before a new connection's first request is complete.
private let firstRequestTimeout: UInt32 = 2

/// Leaves percent-escapes in the path as they are. reachd's paths are plain ASCII, and
/// libmicrohttpd hands paths on as C strings: a decoded `%00` would cut `/status%00` short to
/// `/status`. Undecoded, such a path is simply not found.
private let keepEscaped:
    @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = {
        _, _, text in
        guard let text else { return 0 }
        return strlen(text)
    }
