import CMicroHTTPD

extension HTTPRequest {
    /// The request as libmicrohttpd parsed it. It strips the query string from the path and
    /// keeps the arguments apart; with reachd's unescape callback both stay percent-escaped.
    init(
        connection: OpaquePointer, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?
    ) {
        self.init(
            method: method.map { String(cString: $0) } ?? "",
            path: url.map { String(cString: $0) } ?? "",
            version: version.map { String(cString: $0) } ?? ""
        )
        withUnsafeMutablePointer(to: &headers) { fields in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, appendField, fields)
        }
        withUnsafeMutablePointer(to: &query) { items in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, appendQueryItem, items)
        }
        takeAbsoluteForm()
    }

    /// `GET http://host:port/status` (absolute form, RFC 9112 §3.2.2; what a client talking to a
    /// proxy sends): served as `/status`, and the target's authority stands for `Host`, which
    /// the server must then ignore — so the `Host` check judges the authority.
    mutating func takeAbsoluteForm() {
        // Nearly every path starts with `/`: decided by its first byte, nothing allocated.
        guard let first = path.utf8.first, first | 0x20 == UInt8(ascii: "h") else { return }
        let lowered = path.prefix(8).lowercased()
        let schemeLength = lowered.hasPrefix("http://") ? 7 : lowered.hasPrefix("https://") ? 8 : 0
        guard schemeLength > 0 else { return }
        let rest = path.dropFirst(schemeLength)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = String(rest[..<slash])
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        headers.removeAll { $0.name.lowercased() == "host" }
        headers.append(HTTPField("Host", authority))
    }
}

private let appendField: MHD_KeyValueIterator = { fields, _, name, value in
    guard let fields, let name else { return MHD_Result.YES }
    fields.assumingMemoryBound(to: [HTTPField].self).pointee.append(
        HTTPField(String(cString: name), value.map { String(cString: $0) } ?? "")
    )
    return MHD_Result.YES
}

private let appendQueryItem: MHD_KeyValueIterator = { items, _, name, value in
    guard let items, let name else { return MHD_Result.YES }
    items.assumingMemoryBound(to: [HTTPRequest.QueryItem].self).pointee.append(
        HTTPRequest.QueryItem(name: String(cString: name), value: value.map { String(cString: $0) })
    )
    return MHD_Result.YES
}
