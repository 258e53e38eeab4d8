import CMicroHTTPD

/// Building and sending libmicrohttpd responses from Swift bytes.
enum Response {
    /// A response whose body libmicrohttpd copies once; the caller owns one reference.
    static func make(body: [UInt8], headers: [(String, String)]) -> OpaquePointer {
        let response = body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(
                raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), reachd_mhd_must_copy
            )
        }!
        for (name, value) in headers {
            MHD_add_response_header(response, name, value)
        }
        return response
    }

    /// Creates, queues and releases a one-off response.
    @discardableResult
    static func send(
        _ connection: OpaquePointer, status: Int, body: [UInt8], headers: [(String, String)]
    ) -> MHD_Result {
        let response = make(body: body, headers: headers)
        defer { MHD_destroy_response(response) }
        return MHD_queue_response(connection, UInt32(status), response)
    }

    static func problem(_ connection: OpaquePointer, _ problem: Problem) -> MHD_Result {
        var headers = [("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")]
        if problem.status == 405 { headers.append(("Allow", Route.allowedMethods)) }
        return send(connection, status: problem.status, body: problem.json, headers: headers)
    }
}
