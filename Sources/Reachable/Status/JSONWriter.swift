public import FoundationEssentials
import Glibc

/// A minimal JSON writer (a class, so nested closures can write to it): objects, arrays, strings
/// with RFC 8259 escaping, literals. It writes the status document and the server's health and
/// problem bodies, so every JSON reachd sends is escaped by the same code.
///
/// A fleet's document is megabytes written in hundreds of thousands of pieces, on the way from a
/// link-down to its event. So the bytes go through a plain pointer, not `Array.append` (whose
/// uniqueness and capacity checks on every piece were much of the time: docs/scale.md): into the
/// result's own storage when `JSONWriter.bytes(capacity:_:)` writes (nothing copied when the
/// capacity was enough), else into a buffer of the writer's own, grown by doubling.
public final class JSONWriter: JSONOutput {
    /// Where the bytes go: the storage `bytes(capacity:_:)` lends, or `malloc`'s (`ownsBuffer`).
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var ownsBuffer: Bool
    /// Bytes written so far.
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var needsComma = false
    /// The last time written, and its quoted text: a link-down's targets all change at one instant.
    @exclusivity(unchecked) private var lastTime: (date: Date, text: (UInt64, UInt64, UInt64, UInt16))?

    /// - Parameter capacity: the bytes to reserve: about what the result will hold.
    public init(capacity: Int = 512) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
        ownsBuffer = true
    }

    private init(lending buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
        ownsBuffer = false
    }

    deinit {
        if ownsBuffer { base.deallocate() }
    }

    /// What `body` writes, in an array reserved at `capacity` bytes and written in place (copied
    /// once more only when it outgrew them).
    public static func bytes(capacity: Int, _ body: (JSONWriter) -> Void) -> [UInt8] {
        var outgrown: [UInt8]?
        let written = [UInt8](unsafeUninitializedCapacity: max(capacity, 64)) { buffer, initialized in
            let writer = JSONWriter(lending: buffer)
            body(writer)
            if writer.ownsBuffer {
                outgrown = writer.bytes
                initialized = 0
            } else {
                initialized = writer.count
                // The storage is the array's: the writer must neither free it nor write to it later.
                writer.base = .allocate(capacity: 64)
                writer.capacity = 64
                writer.count = 0
                writer.ownsBuffer = true
            }
        }
        return outgrown ?? written
    }

    /// A copy of what was written.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    public func object(_ body: () -> Void) {
        put(UInt8(ascii: "{"))
        needsComma = false
        body()
        put(UInt8(ascii: "}"))
        needsComma = true
    }

    public func array<Element>(_ elements: [Element], _ body: (Element) -> Void) {
        put(UInt8(ascii: "["))
        needsComma = false
        for element in elements {
            if needsComma { put(UInt8(ascii: ",")) }
            body(element)
            needsComma = true
        }
        put(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `array(_:_:)`, each element written by `body` to the writer it is given: a large array in
    /// parts written by two threads at the same time (`LargeDocuments.runInParts`), each part into a region of
    /// its own of the room left here, then moved down behind the part before it, in order: a
    /// buffer of its own for a part, copied in, faulted in as much memory again at every link-down
    /// (docs/scale.md).
    public func arrayInParts<Element>(_ elements: [Element], _ body: (JSONWriter, Element) -> Void) {
        let parts = LargeDocuments.parts(for: elements.count)
        guard parts > 1 else { return array(elements) { body(self, $0) } }
        put(UInt8(ascii: "["))
        needsComma = false
        let start = count
        // Each part's share of the room left (`bytes(capacity:)` reserved about the whole document
        // with a quarter to spare), less the byte of the comma each part is moved behind: so a
        // part moved down never reaches the region of the part after it.
        let region = max((capacity - start) / parts, 1)
        let writers = UnsafeMutableBufferPointer<JSONWriter?>.allocate(capacity: parts)
        writers.initialize(repeating: nil)
        defer {
            writers.deinitialize()
            writers.deallocate()
        }
        LargeDocuments.runInParts(parts) { part in
            let room = UnsafeMutableBufferPointer(start: base + start + part * region, count: region - 1)
            // A part that outgrows its region goes on in a buffer of its own (`grow`).
            let writer = JSONWriter(lending: room)
            writer.elements(elements[LargeDocuments.range(of: part, in: parts, count: elements.count)], body)
            writers[part] = writer
        }
        let written = writers.map { $0! }
        if written.contains(where: \.ownsBuffer) {
            // Rare (entries much longer than the last document's): moving the parts down in place
            // could overwrite a part not yet moved, so every part is copied out, then back in.
            let copies = written.map(\.bytes)
            count = start
            for bytes in copies { bytes.withUnsafeBufferPointer { elementsCopied($0) } }
        } else {
            count = start
            for writer in written where writer.count > 0 {
                // Moved down, never up, and never into the region of a part not moved yet (each
                // part left a byte of its region for the comma).
                if needsComma { put(UInt8(ascii: ",")) }
                memmove(base + count, writer.base, writer.count)
                count += writer.count
                needsComma = true
            }
        }
        put(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A part's elements written elsewhere, comma-separated, appended after the elements so far.
    private func elementsCopied(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        if needsComma { put(UInt8(ascii: ",")) }
        copy(bytes)
        needsComma = true
    }

    /// The elements of an array, comma-separated, without its brackets.
    private func elements<Element>(_ elements: ArraySlice<Element>, _ body: (JSONWriter, Element) -> Void) {
        for index in elements.indices {
            if needsComma { put(UInt8(ascii: ",")) }
            body(self, elements[index])
            needsComma = true
        }
    }

    public func field(_ name: String, _ value: () -> Void) {
        if needsComma { put(UInt8(ascii: ",")) }
        string(name)
        put(UInt8(ascii: ":"))
        value()
        needsComma = true
    }

    public func bool(_ value: Bool) {
        literal(value ? "true" : "false")
    }

    public func null() {
        literal("null")
    }

    /// Bytes that are not a JSON value (an SSE frame's head and tail around the document): as
    /// they are, with no comma before or after.
    public func verbatim(_ text: some Collection<UInt8>) {
        reserve(text.count)
        for byte in text { unchecked(byte) }
    }

    public func raw(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            reserve(utf8.count)
            unchecked(utf8)
        }
        needsComma = true
    }

    /// A value written as a literal in the code (`null`, `true`, a state's name): as it is.
    public func literal(_ text: StaticString) {
        text.withUTF8Buffer { utf8 in
            reserve(utf8.count)
            unchecked(utf8)
        }
        needsComma = true
    }

    /// A time of the document (`Timestamp`), quoted.
    public func timestamp(_ date: Date, _ style: Timestamp) {
        let length = Timestamp.Fields.length + 2
        reserve(length)
        let place = UnsafeMutableBufferPointer(start: base + count, count: length)
        if let last = lastTime, last.date == date {
            withUnsafeBytes(of: last.text) { _ = place.initialize(from: $0.prefix(length)) }
        } else if style.writeQuoted(date, into: place) {
            var text: (UInt64, UInt64, UInt64, UInt16) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &text) { $0.copyMemory(from: UnsafeRawBufferPointer(place)) }
            lastTime = (date, text)
        } else {
            return string(style.format(date))
        }
        count += length
        needsComma = true
    }

    /// A string known to need no escaping: an enum's raw value (a state, a reason), which the
    /// code spells, so the check `string(_:)` makes of every byte is skipped (a document has
    /// several a target). Checked in debug builds.
    public func plain(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            assert(JSONString.isPlain(utf8))
            reserve(utf8.count + 2)
            unchecked(UInt8(ascii: "\""))
            unchecked(utf8)
            unchecked(UInt8(ascii: "\""))
        }
        needsComma = true
    }

    public func string(_ text: String) {
        // A string's bytes read in place (no copy of the string to call `withUTF8` on).
        if text.utf8.withContiguousStorageIfAvailable({ writeQuoted($0) }) == nil {
            var text = text
            text.withUTF8 { writeQuoted($0) }
        }
        needsComma = true
    }

    /// `parts` joined by `separator` (which needs no escaping), as one string: a `/changes` field
    /// path (`targets.db.state`) written from its parts, not joined into a string first (a
    /// link-down's change has several a target).
    public func string(joining parts: [String], separator: StaticString) {
        guard parts.allSatisfy({ part in part.utf8.withContiguousStorageIfAvailable(JSONString.isPlain) ?? false })
        else { return string(parts.joined(separator: separator.description)) }
        put(UInt8(ascii: "\""))
        for (index, part) in parts.enumerated() {
            if index > 0 { separator.withUTF8Buffer { copy($0) } }
            part.utf8.withContiguousStorageIfAvailable { copy($0) }
        }
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    private func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        if JSONString.isPlain(utf8) {
            reserve(utf8.count + 2)
            unchecked(UInt8(ascii: "\""))
            unchecked(utf8)
            unchecked(UInt8(ascii: "\""))
        } else {
            var escaped: [UInt8] = []
            JSONString.append(String(decoding: utf8, as: UTF8.self), to: &escaped)
            escaped.withUnsafeBufferPointer { escaped in
                reserve(escaped.count)
                unchecked(escaped)
            }
        }
    }

    // MARK: The bytes

    @inline(__always)
    private func put(_ byte: UInt8) {
        reserve(1)
        unchecked(byte)
    }

    /// Room for `extra` more bytes.
    @inline(__always)
    private func reserve(_ extra: Int) {
        if capacity - count < extra { grow(toHold: count + extra) }
    }

    private func grow(toHold needed: Int) {
        let grown = max(needed, capacity * 2)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        buffer.update(from: base, count: count)
        if ownsBuffer { base.deallocate() }
        base = buffer
        capacity = grown
        ownsBuffer = true
    }

    /// A byte where `reserve` made room.
    @inline(__always)
    private func unchecked(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    /// Bytes, room made for them.
    private func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        unchecked(bytes)
    }

    /// Bytes where `reserve` made room.
    @inline(__always)
    private func unchecked(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }
}
