import CMicroHTTPD

/// Turns an `HTTPResponse` into a libmicrohttpd response queued on a connection.
enum MHDResponse {
    /// Queues `answer` on `connection`. For a stream, `context` (the request's slot) keeps a
    /// reference to it until libmicrohttpd reports the request completed.
    static func queue(
        _ answer: HTTPResponse, on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        switch answer.body {
        case .bytes(let body):
            let response = make(body: body, headers: answer.headers)
            defer { MHD_destroy_response(response) }
            return MHD_queue_response(connection, UInt32(answer.status), response)
        case .prepared(let prepared):
            // Queueing takes libmicrohttpd's own reference; `prepared` keeps it alive until then.
            return withExtendedLifetime(prepared) {
                MHD_queue_response(connection, UInt32(answer.status), prepared.response)
            }
        case .stream(let stream):
            return queueStream(stream, status: answer.status, headers: answer.headers, on: connection, context: context)
        }
    }

    /// A response whose body libmicrohttpd copies once; the caller owns one reference.
    static func make(body: [UInt8], headers: [HTTPField]) -> OpaquePointer {
        let response = body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(
                raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), reachd_mhd_must_copy
            )
        }!
        for header in headers {
            MHD_add_response_header(response, header.name, header.value)
        }
        return response
    }

    /// A chunked response of unknown length whose reader is the stream. Each connection gets
    /// its own response object, because the reader may suspend the connection (and runs under
    /// the response's mutex).
    private static func queueStream(
        _ stream: EventStream, status: Int, headers: [HTTPField], on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        // The request slot keeps its own reference until libmicrohttpd reports completion, which
        // it also does when this answer fails (the handler returned NO after seeing the request).
        context.pointee = Unmanaged.passRetained(stream).toOpaque()
        let reader = Unmanaged.passRetained(stream).toOpaque()
        guard
            let response = MHD_create_response_from_callback(
                reachd_mhd_size_unknown, 1024, readStream, reader, releaseStream
            )
        else {
            Unmanaged<EventStream>.fromOpaque(reader).release()
            return MHD_Result.NO
        }
        defer { MHD_destroy_response(response) }
        for header in headers {
            MHD_add_response_header(response, header.name, header.value)
        }
        return MHD_queue_response(connection, UInt32(status), response)
    }
}

/// libmicrohttpd asks the stream for bytes. 0 is returned only right after the stream
/// suspended the connection: a reader that returns 0 otherwise spins a core.
private let readStream: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return reachd_mhd_end_with_error }
    let stream = Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue()
    switch stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity)) {
    case .wrote(let count): return count
    case .suspended: return 0
    case .ended: return reachd_mhd_end_of_stream
    case .abandoned: return reachd_mhd_end_with_error
    }
}

private let releaseStream: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<EventStream>.fromOpaque(cls).release()
}
