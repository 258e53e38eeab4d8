import CMicroHTTPD
import Glibc

/// What libmicrohttpd 0.9.75 lets through of a malformed request head, found before reachd
/// answers it (RFC 9112): a NUL or another control byte in the request line or a header, a
/// missing, empty or second `Host`, and `Content-Length` that contradicts itself or comes with
/// `Transfer-Encoding`. (What it refuses itself — a `Content-Length` that is no number, an
/// unknown HTTP major version — never reaches reachd.)
///
/// libmicrohttpd hands on C strings, so a NUL the client sent cuts a path or a value short
/// without a trace in the strings themselves. It parses the head in place, in one buffer: it
/// turns the request line's separators and each line end into NULs and points into that buffer.
/// So the strings must sit exactly where a head without a stray NUL puts them — the target right
/// after the method and one space, each header line right after the line before — and anything
/// between them must be what libmicrohttpd wrote.
enum RequestHead {
    /// Why the head is malformed, or `nil`. Called on the first call for a request, while
    /// libmicrohttpd's buffer still holds the head.
    static func problem(
        connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>
    ) -> String? {
        if let problem = requestLineProblem(connection: connection, method: method, url: url, version: version) {
            return problem
        }
        var headers = Headers()
        withUnsafeMutablePointer(to: &headers) { headers in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, collectHeader, headers)
        }
        if let problem = headerLinesProblem(headers.fields, after: version) { return problem }
        let isHTTP11 = String(cString: version) != "HTTP/1.0"
        return fieldsProblem(headers.fields.map { (String(cString: $0.name), String(cString: $0.value)) }, isHTTP11)
    }

    /// The rules on the header values, apart from where they lie: `Host` once and not empty
    /// (HTTP/1.1, RFC 9112 §3.2), `Content-Length` one decimal number and never with
    /// `Transfer-Encoding` (§6.3).
    static func fieldsProblem(_ fields: [(name: String, value: String)], _ isHTTP11: Bool) -> String? {
        let hosts = fields.filter { $0.name.lowercased() == "host" }
        if isHTTP11 && hosts.isEmpty { return "An HTTP/1.1 request needs a Host header." }
        if hosts.count > 1 { return "A request has one Host header, not \(hosts.count)." }
        if let host = hosts.first, host.value.allSatisfy({ $0 == " " || $0 == "\t" }) {
            return "The Host header is empty."
        }
        let lengths = fields.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        if !lengths.isEmpty {
            if fields.contains(where: { $0.name.lowercased() == "transfer-encoding" }) {
                return "A request has Content-Length or Transfer-Encoding, not both."
            }
            // One list of equal decimal numbers is one length (RFC 9112 §6.3 allows repeats).
            let numbers = lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { trimmed($0) }
            guard numbers.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }),
                Set(numbers.map { String($0.drop { $0 == "0" }) }).count == 1
            else { return "Content-Length is not one decimal number." }
        }
        return nil
    }

    /// The method, one space, the target, one space, the version: nothing cut, no control byte.
    private static func requestLineProblem(
        connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>
    ) -> String? {
        let methodLength = strlen(method)
        guard url == method + methodLength + 1 else { return "The request line is not method SP target SP version." }
        // Between the target and the version, libmicrohttpd's NULs stand only where it split the
        // query: after the path (`?`), between arguments (`&`) and names and values (`=`).
        guard version > url else { return "The request line has no target." }
        let target = UnsafeBufferPointer(
            start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: version - url - 1)
        var expected = Array(
            UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url)))
        var arguments = Arguments()
        withUnsafeMutablePointer(to: &arguments) { arguments in
            _ = MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, collectArgument, arguments)
        }
        for argument in arguments.items {
            expected.append(0)
            expected += argument.name
            if let value = argument.value { expected += [0] + value }
        }
        // A target ending in `?` or `&` leaves one more NUL than the arguments account for (and
        // so does a NUL that ends the target: nothing follows it, nothing is cut).
        guard target.elementsEqual(expected) || target.elementsEqual(expected + [0]) else {
            return "The request target holds a NUL byte."
        }
        let line = [method, version].flatMap { text in
            UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
        }
        guard (line + target).allSatisfy({ $0 == 0 || ($0 > 0x20 && $0 != 0x7F) }) else {
            return "The request line holds a control byte or a space."
        }
        return nil
    }

    /// Each header line right after the one before (its end: CRLF or LF, both NUL now), the
    /// value right after the colon and its blanks, no control byte but HTAB.
    private static func headerLinesProblem(_ fields: [Field], after version: UnsafePointer<CChar>) -> String? {
        var lineEnd = UnsafeRawPointer(version) + strlen(version)
        for field in fields {
            let name = UnsafeRawPointer(field.name)
            let value = UnsafeRawPointer(field.value)
            guard name == lineEnd + 1 || name == lineEnd + 2 else { return "A header line holds a NUL byte." }
            let nameLength = strlen(field.name)
            var blank = name + nameLength + 1
            while blank < value, blank.load(as: UInt8.self) == 0x20 || blank.load(as: UInt8.self) == 0x09 {
                blank += 1
            }
            guard blank == value else { return "A header line holds a NUL byte." }
            let valueLength = strlen(field.value)
            let bytes = UnsafeRawBufferPointer(start: name, count: nameLength)
            guard bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: ":") }) else {
                return "A header name holds a control byte."
            }
            guard
                UnsafeRawBufferPointer(start: value, count: valueLength).allSatisfy({
                    $0 >= 0x20 && $0 != 0x7F || $0 == 0x09
                })
            else { return "A header value holds a control byte." }
            lineEnd = value + valueLength
        }
        // After the last line: its end and the empty line that ends the head, NULs only.
        guard lineEnd.load(fromByteOffset: 1, as: UInt8.self) == 0 else { return "A header line holds a NUL byte." }
        return nil
    }

    struct Field {
        let name: UnsafePointer<CChar>
        let value: UnsafePointer<CChar>
    }

    fileprivate struct Headers {
        var fields: [Field] = []
    }

    fileprivate struct Arguments {
        var items: [(name: [UInt8], value: [UInt8]?)] = []
    }
}

private let collectHeader: MHD_KeyValueIteratorN = { headers, _, name, _, value, _ in
    guard let headers, let name, let value else { return MHD_Result.YES }
    headers.assumingMemoryBound(to: RequestHead.Headers.self).pointee.fields.append(
        RequestHead.Field(name: name, value: value))
    return MHD_Result.YES
}

private let collectArgument: MHD_KeyValueIteratorN = { arguments, _, name, nameSize, value, valueSize in
    guard let arguments, let name else { return MHD_Result.YES }
    let bytes = { (text: UnsafePointer<CChar>, count: Int) in
        Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(text), count: count))
    }
    arguments.assumingMemoryBound(to: RequestHead.Arguments.self).pointee.items.append(
        (bytes(name, nameSize), value.map { bytes($0, valueSize) }))
    return MHD_Result.YES
}

/// `text` without the blanks (SP, HTAB) around it.
private func trimmed(_ text: Substring) -> Substring {
    let isBlank = { (character: Character) in character == " " || character == "\t" }
    guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
    else { return "" }
    return text[first...last]
}
