import CMicroHTTPD
import Glibc

/// What libmicrohttpd 0.9.75 lets through of a malformed request head, found before reachd
/// answers it (RFC 9112): a NUL or another control byte in the request line or a header, and what
/// `HeaderRules` judges. (What it refuses itself — a `Content-Length` that is no number, an
/// unknown HTTP major version — never reaches reachd.)
///
/// libmicrohttpd hands on C strings, so a NUL the client sent cuts a path or a value short
/// without a trace in the strings themselves. It parses the head in place, in one buffer: it
/// turns the request line's separators and each line end into NULs and points into that buffer.
/// So the strings must sit exactly where a head without a stray NUL puts them — the target right
/// after the method and one space, each argument of the query right after the one before, each
/// header line right after the line before — and anything between them must be what
/// libmicrohttpd wrote. Every request passes here: it reads the head once and allocates nothing.
enum RequestHead {
    /// Why the head is malformed, or `nil`. Called on the first call for a request, while
    /// libmicrohttpd's buffer still holds the head.
    static func problem(
        connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>
    ) -> String? {
        let line = UnsafeRawPointer(method)
        let methodLength = strlen(method)
        guard UnsafeRawPointer(url) == line + methodLength + 1, isVisible(line, methodLength) else {
            return "The request line is not method SP target SP version."
        }
        // The target: its path, then libmicrohttpd's NUL for `?` and its arguments, each after a
        // NUL for `&` or `=`, up to the NUL it made of the space before the version.
        var target = TargetWalk(cursor: UnsafeRawPointer(url), end: UnsafeRawPointer(version) - 1)
        guard target.take(UnsafeRawPointer(url), count: strlen(url)) else { return Self.cutTarget }
        if !target.isComplete {
            // A query (or a cut path): its arguments must account for the rest.
            withUnsafeMutablePointer(to: &target) { walk in
                _ = MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, walkArgument, walk)
            }
        }
        guard target.isComplete else { return Self.cutTarget }
        var headers = HeaderWalk(
            lineEnd: UnsafeRawPointer(version) + strlen(version), rules: HeaderRules(isHTTP10: isHTTP10(version)))
        withUnsafeMutablePointer(to: &headers) { walk in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, walkHeader, walk)
        }
        if let problem = headers.problem { return problem }
        // After the last line: its end and the empty line that ends the head, NULs only.
        guard headers.lineEnd.load(fromByteOffset: 1, as: UInt8.self) == 0 else { return Self.cutHeader }
        return headers.rules.verdict
    }

    static let cutTarget = "The request target holds a NUL, a control byte or a space."
    static let cutHeader = "A header line holds a NUL or a control byte."

    /// Bytes of a request line's token or target: visible ASCII or above, no space, no DEL.
    static func isVisible(_ start: UnsafeRawPointer, _ count: Int) -> Bool {
        UnsafeRawBufferPointer(start: start, count: count).allSatisfy { $0 > 0x20 && $0 != 0x7F }
    }

    private static func isHTTP10(_ version: UnsafePointer<CChar>) -> Bool {
        strcmp(version, "HTTP/1.0") == 0
    }
}

/// The target between the method and the version, walked string by string.
struct TargetWalk {
    var cursor: UnsafeRawPointer
    let end: UnsafeRawPointer
    var isBroken = false

    /// The next string must start at the cursor (after one NUL unless it is the path). An
    /// argument may hold spaces: libmicrohttpd turned each `+` into one, in place.
    mutating func take(_ start: UnsafeRawPointer, count: Int, spacesAllowed: Bool = false) -> Bool {
        let isClean = UnsafeRawBufferPointer(start: start, count: count).allSatisfy {
            ($0 > 0x20 || (spacesAllowed && $0 == 0x20)) && $0 != 0x7F
        }
        guard !isBroken, start == cursor, start + count <= end, isClean else {
            isBroken = true
            return false
        }
        cursor = start + count
        return true
    }

    /// A NUL libmicrohttpd made of `?`, `&` or `=`, then the string at `start`.
    mutating func takeAfterSeparator(_ start: UnsafeRawPointer, count: Int) {
        guard !isBroken, cursor < end, cursor.load(as: UInt8.self) == 0 else {
            isBroken = true
            return
        }
        cursor += 1
        _ = take(start, count: count, spacesAllowed: true)
    }

    /// Everything up to the version was accounted for. A target ending in `?` or `&` leaves one
    /// NUL the arguments do not account for (and so does a NUL that ends the target: nothing
    /// follows it, nothing is cut).
    var isComplete: Bool {
        !isBroken && (cursor == end || (cursor + 1 == end && cursor.load(as: UInt8.self) == 0))
    }
}

/// The header lines, walked in order, and the rules on their values.
struct HeaderWalk {
    /// Where the line before ends (the NUL libmicrohttpd made of its CR or LF).
    var lineEnd: UnsafeRawPointer
    var rules: HeaderRules
    var problem: String?

    mutating func take(name: UnsafeRawPointer, nameCount: Int, value: UnsafeRawPointer, valueCount: Int) {
        guard problem == nil else { return }
        // CRLF is two NULs now, a bare LF one.
        guard name == lineEnd + 1 || name == lineEnd + 2 else { return fail() }
        let names = UnsafeRawBufferPointer(start: name, count: nameCount)
        guard names.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: ":") }) else { return fail() }
        // The colon (a NUL now), then blanks up to the value.
        var blank = name + nameCount + 1
        while blank < value, blank.load(as: UInt8.self) == 0x20 || blank.load(as: UInt8.self) == 0x09 {
            blank += 1
        }
        guard blank == value else { return fail() }
        let values = UnsafeRawBufferPointer(start: value, count: valueCount)
        guard values.allSatisfy({ ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }) else { return fail() }
        rules.take(name: names, value: values)
        lineEnd = value + valueCount
    }

    private mutating func fail() {
        problem = RequestHead.cutHeader
    }
}

/// The rules on the header values (RFC 9112): `Host` once and not empty (HTTP/1.1 needs it,
/// §3.2), `Content-Length` one decimal number however often repeated, and never with
/// `Transfer-Encoding` (§6.3). Fed one header at a time; pure.
struct HeaderRules {
    let isHTTP10: Bool
    private var hosts = 0
    private var emptyHost = false
    private var length: UInt64?
    private var lengthsDiffer = false
    private var hasLength = false
    private var hasTransferEncoding = false

    init(isHTTP10: Bool) {
        self.isHTTP10 = isHTTP10
    }

    mutating func take(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        // Most headers are none of the three: told apart by length first.
        guard name.count == 4 || name.count == 14 || name.count == 17 else { return }
        if Self.named(name, "host") {
            hosts += 1
            if value.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { emptyHost = true }
        } else if Self.named(name, "content-length") {
            hasLength = true
            for number in value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                guard let parsed = Self.decimal(number), length == nil || length == parsed else {
                    lengthsDiffer = true
                    continue
                }
                length = parsed
            }
        } else if Self.named(name, "transfer-encoding") {
            hasTransferEncoding = true
        }
    }

    /// Why the headers are malformed, or `nil`.
    var verdict: String? {
        if hosts == 0 && !isHTTP10 { return "An HTTP/1.1 request needs a Host header." }
        if hosts > 1 { return "A request has one Host header, not \(hosts)." }
        if emptyHost { return "The Host header is empty." }
        if hasLength && hasTransferEncoding { return "A request has Content-Length or Transfer-Encoding, not both." }
        if lengthsDiffer { return "Content-Length is not one decimal number." }
        return nil
    }

    /// The name, compared without case.
    static func named(_ name: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard name.count == lowercase.utf8CodeUnitCount else { return false }
        let wanted = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return zip(name, wanted).allSatisfy { byte, lower in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == lower
        }
    }

    /// Digits between optional blanks, as a number; `nil` for anything else or an overflow.
    static func decimal(_ text: Slice<UnsafeRawBufferPointer>) -> UInt64? {
        let digits = text.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
        guard !digits.isEmpty else { return nil }
        var number: UInt64 = 0
        for digit in digits.reversed() {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (times, overflowed) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            number = sum
        }
        return number
    }
}

private let walkArgument: MHD_KeyValueIteratorN = { walk, _, name, nameCount, value, valueCount in
    guard let walk, let name else { return MHD_Result.YES }
    let target = walk.assumingMemoryBound(to: TargetWalk.self)
    target.pointee.takeAfterSeparator(UnsafeRawPointer(name), count: nameCount)
    if let value { target.pointee.takeAfterSeparator(UnsafeRawPointer(value), count: valueCount) }
    return target.pointee.isBroken ? MHD_Result.NO : MHD_Result.YES
}

private let walkHeader: MHD_KeyValueIteratorN = { walk, _, name, nameCount, value, valueCount in
    guard let walk, let name, let value else { return MHD_Result.YES }
    let headers = walk.assumingMemoryBound(to: HeaderWalk.self)
    headers.pointee.take(
        name: UnsafeRawPointer(name), nameCount: nameCount, value: UnsafeRawPointer(value), valueCount: valueCount)
    return headers.pointee.problem == nil ? MHD_Result.YES : MHD_Result.NO
}
