import CZlib

/// One change as `/changes` keeps it: its JSON object, compressed with zlib when it is large.
///
/// A change's JSON repeats its field names and values (`"field":"targets.t17.state","from":
/// "unknown","to":"reachable"`) and is kept until `--history` newer ones replace it — for hours.
/// A fleet's first readings are changes of megabytes, held for the whole run; compressed they are
/// a tenth of that (docs/scale.md). Only from `compressedFrom` bytes: a small change (one target's
/// state) gains little and is read on every request for `/changes`.
struct KeptChange {
    static let compressedFrom = 4096

    /// The JSON's length: what the change adds to the `/changes` answer (and to its byte budget).
    let count: Int
    /// The JSON, or its zlib stream when `isCompressed`.
    private let stored: [UInt8]
    private let isCompressed: Bool

    init(_ json: [UInt8]) {
        count = json.count
        if json.count >= Self.compressedFrom, let compressed = Self.compress(json) {
            stored = compressed
            isCompressed = true
        } else {
            stored = json
            isCompressed = false
        }
    }

    /// The bytes held.
    var storedCount: Int { stored.count }

    /// The change's JSON.
    var json: [UInt8] {
        var json: [UInt8] = []
        append(to: &json)
        return json
    }

    /// The change's JSON, appended to `body`.
    func append(to body: inout [UInt8]) {
        guard isCompressed else { return body.append(contentsOf: stored) }
        let start = body.count
        body.append(contentsOf: repeatElement(0, count: count))
        var length = uLongf(count)
        let result = body.withUnsafeMutableBufferPointer { buffer in
            stored.withUnsafeBufferPointer { source in
                uncompress(buffer.baseAddress! + start, &length, source.baseAddress, uLong(source.count))
            }
        }
        // reachd's own stream, inflated to the length it was made from: anything else is a defect.
        precondition(result == Z_OK && Int(length) == count, "a kept change did not inflate: zlib \(result)")
    }

    /// `json` compressed at zlib's fastest level (a fleet's link-down is a change of megabytes,
    /// compressed after the frame is out), or `nil` if zlib failed or it did not get smaller.
    private static func compress(_ json: [UInt8]) -> [UInt8]? {
        let bound = Int(compressBound(uLong(json.count)))
        var result: Int32 = Z_OK
        let compressed = [UInt8](unsafeUninitializedCapacity: bound) { buffer, initialized in
            var length = uLongf(bound)
            result = json.withUnsafeBufferPointer { source in
                compress2(buffer.baseAddress, &length, source.baseAddress, uLong(source.count), Z_BEST_SPEED)
            }
            initialized = result == Z_OK ? Int(length) : 0
        }
        guard result == Z_OK, compressed.count < json.count else { return nil }
        // Kept for hours: copied without the room `compressBound` asked for.
        return [UInt8](unsafeUninitializedCapacity: compressed.count) { buffer, initialized in
            initialized = buffer.initialize(fromContentsOf: compressed)
        }
    }
}
