import CMicroHTTPD

/// Turns an `HTTPResponse` into a libmicrohttpd response queued on a connection.
enum MHDResponse {
    /// Queues `answer` on `connection`. For a stream, `context` (the request's slot) keeps a
    /// reference to it until libmicrohttpd reports the request completed.
    static func queue(
        _ answer: HTTPResponse, to request: HTTPRequest, on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        switch answer.body {
        case .bytes(let body):
            let response = make(body: body, headers: answer.headers)
            defer { MHD_destroy_response(response) }
            return MHD_queue_response(connection, UInt32(answer.status), response)
        case .shared(let shared):
            // Queueing takes libmicrohttpd's own reference; `prepared` keeps it alive until then.
            let prepared = shared.prepared(by: PreparedResponse.init)
            return withExtendedLifetime(prepared) {
                MHD_queue_response(connection, UInt32(answer.status), prepared.response)
            }
        case .stream(let stream):
            return queueStream(
                stream, status: answer.status, headers: answer.headers, isChunked: request.version != "HTTP/1.0",
                on: connection, context: context)
        case .lengthUnknown:
            // Not chunked (libmicrohttpd 0.9.75 would send the final chunk even to HEAD) and no
            // length: the end of the answer is the connection's.
            guard let response = MHD_create_response_from_callback(reachd_mhd_size_unknown, 16, endAtOnce, nil, nil)
            else { return MHD_Result.NO }
            defer { MHD_destroy_response(response) }
            reachd_mhd_set_unframed(response)
            for header in answer.headers {
                MHD_add_response_header(response, header.name, header.value)
            }
            return MHD_queue_response(connection, UInt32(answer.status), response)
        case .later:
            // `DaemonCallbacks` parks the connection for these; never queued as such.
            return MHD_Result.NO
        }
    }

    /// A response whose body libmicrohttpd copies once; the caller owns one reference.
    static func make(body: ArraySlice<UInt8>, headers: [HTTPField]) -> OpaquePointer {
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

    /// A response that serves `body` where it lies: libmicrohttpd holds a retained box of the
    /// array and releases it when its last connection is done with the response (not the
    /// `SharedResponse` itself: its prepared response would then keep it alive in a cycle). A
    /// native array's storage does not move while a reference to it is held and nothing writes.
    static func makeSharing(body: ArraySlice<UInt8>, headers: [HTTPField]) -> OpaquePointer {
        let owner = Unmanaged.passRetained(BodyOwner(body))
        let response = owner.takeUnretainedValue().body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer_with_free_callback_cls(
                raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), releaseBody, owner.toOpaque())
        }!
        for header in headers {
            MHD_add_response_header(response, header.name, header.value)
        }
        return response
    }

    /// A stream as C's raw context pointer: the object itself, retained (a box around the
    /// existential would cost every open stream an allocation).
    static func retainedPointer(to stream: any BodyStream) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(stream as AnyObject).toOpaque()
    }

    /// The stream behind a pointer made by `retainedPointer(to:)`, which holds nothing else.
    static func stream(at pointer: UnsafeMutableRawPointer) -> any BodyStream {
        Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue() as! any BodyStream
    }

    /// A chunked response of unknown length whose reader is the stream. Each connection gets
    /// its own response object, because the reader may suspend the connection (and runs under
    /// the response's mutex).
    ///
    /// A chunked body is read straight into the connection's write buffer; the response's own
    /// buffer (its "block size") serves only an unframed HTTP/1.0 body. So an HTTP/1.1 stream
    /// gets the smallest one: 1 KiB less per open stream.
    private static func queueStream(
        _ stream: any BodyStream, status: Int, headers: [HTTPField], isChunked: Bool, on connection: OpaquePointer,
        context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        // The request slot keeps its own reference until libmicrohttpd reports completion, which
        // it also does when this answer fails (the handler returned NO after seeing the request).
        context.pointee = retainedPointer(to: stream)
        let reader = retainedPointer(to: stream)
        guard
            let response = MHD_create_response_from_callback(
                reachd_mhd_size_unknown, isChunked ? 16 : 1024, readStream, reader, releaseStream
            )
        else {
            Unmanaged<AnyObject>.fromOpaque(reader).release()
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
    switch MHDResponse.stream(at: cls).read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity)) {
    case .wrote(let count): return count
    case .suspended: return 0
    case .ended: return reachd_mhd_end_of_stream
    case .failed: return reachd_mhd_end_with_error
    }
}

/// The body of a `HEAD` answer, never read (libmicrohttpd sends none to HEAD).
private let endAtOnce: MHD_ContentReaderCallback = { _, _, _, _ in reachd_mhd_end_of_stream }

private let releaseStream: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<AnyObject>.fromOpaque(cls).release()
}

/// Keeps a shared response's bytes alive for libmicrohttpd (`makeSharing`).
private final class BodyOwner {
    let body: ArraySlice<UInt8>
    init(_ body: ArraySlice<UInt8>) { self.body = body }
}

private func releaseBody(_ owner: UnsafeMutableRawPointer?) {
    if let owner { Unmanaged<BodyOwner>.fromOpaque(owner).release() }
}
