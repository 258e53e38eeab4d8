import CMicroHTTPD
import Glibc
import Synchronization

/// Holds the handler for C, which only carries a raw pointer, and the count of open connections.
final class HandlerBox {
    let handler: any HTTPHandler
    let connectionLimit: Int
    /// Seconds an idle connection stays open between requests.
    let connectionTimeout: UInt32
    let openConnections = Atomic<Int>(0)
    /// With TLS: where each new connection takes its credentials from.
    let security: WebSecurity?

    init(
        _ handler: any HTTPHandler, connectionLimit: Int, connectionTimeout: UInt32, security: WebSecurity? = nil
    ) {
        self.handler = handler
        self.connectionLimit = connectionLimit
        self.connectionTimeout = connectionTimeout
        self.security = security?.servesTLS == true ? security : nil
    }
}

/// The C callbacks `HTTPDaemon` registers. They run on libmicrohttpd's threads and receive the
/// `HandlerBox` as their raw `cls` pointer.
enum DaemonCallbacks {
    /// At the connection limit a new connection is accepted and closed at once: the client learns
    /// there is no room now and may retry. (libmicrohttpd at its own limit stops accepting, and new
    /// connections would wait in the listen backlog with no answer.)
    static let acceptPolicy: MHD_AcceptPolicyCallback = { cls, _, _ in
        guard let cls else { return MHD_Result.NO }
        let box = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue()
        return box.openConnections.load(ordering: .relaxed) < box.connectionLimit ? MHD_Result.YES : MHD_Result.NO
    }

    /// Marks a request whose headers were seen but which has not been answered yet: an address no
    /// object can have, compared and never dereferenced.
    nonisolated(unsafe) private static let awaitingAnswer = UnsafeMutableRawPointer(bitPattern: 1)!

    /// libmicrohttpd calls this at least twice per request: once when the headers are in, then
    /// once the (empty) body is. Answering on the first call makes it discard the rest of the
    /// request and close the connection, so a bodiless GET or HEAD is answered on the second call
    /// and keeps the connection alive; anything else is answered at once, and the connection closes
    /// without reading a body reachd has no use for.
    static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, version, _, uploadSize, context in
        guard let cls, let connection, let context else { return MHD_Result.NO }
        let box = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue()
        if context.pointee == nil {
            reachd_mhd_set_connection_timeout(connection, box.connectionTimeout)
            // Judged now, while libmicrohttpd's buffer holds the head as it was parsed.
            if let method, let url, let version,
                let malformed = RequestHead.problem(connection: connection, method: method, url: url, version: version)
            {
                var request = HTTPRequest(connection: connection, method: method, url: url, version: version)
                request.malformed = malformed
                let answer = box.handler.respond(
                    to: request, on: MHDConnection(connection: connection, httpVersion: ""))
                return queue(answer, to: request, on: connection, context: context)
            }
            let verb = method.map { String(cString: $0) } ?? ""
            let isBodiless =
                reachd_mhd_request_header(connection, "Content-Length").map { String(cString: $0) == "0" } ?? true
            let hasChunkedBody = reachd_mhd_request_header(connection, "Transfer-Encoding") != nil
            // OPTIONS too: a CORS preflight is followed by the real request on the same connection.
            if (verb == "GET" || verb == "HEAD" || verb == "OPTIONS") && isBodiless && !hasChunkedBody {
                context.pointee = DaemonCallbacks.awaitingAnswer
                return MHD_Result.YES
            }
        } else if let stored = context.pointee, stored != DaemonCallbacks.awaitingAnswer {
            // Woken after waiting for a deferred answer (nothing else is stored before answering).
            context.pointee = nil
            let deferred = Unmanaged<AnyObject>.fromOpaque(stored).takeRetainedValue() as! any DeferredAnswer
            let request = HTTPRequest(connection: connection, method: method, url: url, version: version)
            return queue(deferred.answer(), to: request, on: connection, context: context)
        } else {
            if let uploadSize, uploadSize.pointee != 0 {
                uploadSize.pointee = 0
                return MHD_Result.YES
            }
            context.pointee = nil
        }
        let request = HTTPRequest(connection: connection, method: method, url: url, version: version)
        let answer = box.handler.respond(
            to: request,
            on: MHDConnection(connection: connection, httpVersion: request.version, isTLS: box.security != nil))
        return queue(answer, to: request, on: connection, context: context)
    }

    /// Queues `answer`, or, when it comes later, parks the connection until it is ready: the
    /// request slot keeps the deferred answer, and libmicrohttpd calls the access handler again
    /// once the connection is resumed (it does so while a fully received request has no response).
    private static func queue(
        _ answer: HTTPResponse, to request: HTTPRequest, on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard case .later(let deferred) = answer.body else {
            return MHDResponse.queue(answer, to: request, on: connection, context: context)
        }
        context.pointee = Unmanaged.passRetained(deferred as AnyObject).toOpaque()
        let parked = MHDConnection(connection: connection, httpVersion: request.version)
        parked.suspend()
        // Suspended before asking: the wake-up resumes exactly once, after the suspension.
        deferred.whenReady { parked.resume() }
        return MHD_Result.YES
    }

    /// A request ended. If it was a stream, the stream is marked dead before anyone else hears of
    /// it: its connection must never be resumed again.
    static let requestCompleted: MHD_RequestCompletedCallback = { cls, _, context, _ in
        guard let cls, let context, let stored = context.pointee, stored != DaemonCallbacks.awaitingAnswer else {
            return
        }
        context.pointee = nil
        // A request that ended while its answer was deferred (the client left meanwhile).
        if Unmanaged<AnyObject>.fromOpaque(stored).takeUnretainedValue() is any DeferredAnswer {
            Unmanaged<AnyObject>.fromOpaque(stored).release()
            return
        }
        let stream = MHDResponse.stream(at: stored)
        Unmanaged<AnyObject>.fromOpaque(stored).release()
        stream.markDead()
        Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue().handler.streamEnded(stream)
    }

    /// Counts open connections for `acceptPolicy`. And a new connection must finish its first
    /// request line and headers without falling silent for two seconds: a client that sends only
    /// junk libmicrohttpd cannot frame (leading NUL bytes read as empty lines, which it skips) is
    /// closed soon rather than after the full idle timeout. Every byte restarts the clock, so a slow
    /// but steady sender still gets through. The normal timeout is restored as soon as a request
    /// arrives.
    ///
    /// With TLS, a new connection's session (made, its handshake not begun) gets the credentials
    /// in force now, retained in the connection's socket context until it closes: a rotation
    /// reaches every later handshake, and no connection loses the credentials it runs on.
    static let connectionNotification: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
        guard let cls, let connection else { return }
        let box = Unmanaged<HandlerBox>.fromOpaque(cls).takeUnretainedValue()
        if reachd_mhd_is_connection_start(code) != 0 {
            box.openConnections.add(1, ordering: .relaxed)
            reachd_mhd_set_connection_timeout(
                connection, min(DaemonCallbacks.firstRequestTimeout, box.connectionTimeout))
            if let credentials = box.security?.tls, let socketContext,
                let session = reachd_mhd_connection_tls_session(connection)
            {
                credentials.prepare(session: OpaquePointer(session))
                socketContext.pointee = Unmanaged.passRetained(credentials).toOpaque()
            }
        } else if reachd_mhd_is_connection_close(code) != 0 {
            box.openConnections.subtract(1, ordering: .relaxed)
            if let socketContext, let held = socketContext.pointee {
                socketContext.pointee = nil
                Unmanaged<TLSCredentials>.fromOpaque(held).release()
            }
        }
    }

    /// Seconds of silence allowed before a new connection's first request is complete.
    private static let firstRequestTimeout: UInt32 = 2

    /// Leaves percent-escapes in the path as they are. reachd's paths are plain ASCII, and
    /// libmicrohttpd hands paths on as C strings: a decoded `%00` would cut `/status%00` short to
    /// `/status`. Undecoded, such a path is simply not found.
    static let keepEscaped:
        @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = {
            _, _, text in
            guard let text else { return 0 }
            return strlen(text)
        }
}
