import CCrypt
import Glibc

/// bcrypt, the only hash the exporter-toolkit accepts for basic auth, verified with libxcrypt's
/// `crypt_r` (the system's own password hashing: no library of our own to keep, and its bcrypt
/// is the OpenBSD one the `$2b$`/`$2y$` hashes of `htpasswd -B` come from).
enum BcryptHash {
    /// `$2a$`, `$2b$` or `$2y$`, a two-digit cost of 04 to 31, `$`, then 53 characters of
    /// bcrypt's base64 (22 of salt, 31 of hash).
    static func isWellFormed(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
            bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$")
        else { return false }
        guard let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost) else {
            return false
        }
        return bytes[7...].allSatisfy(isBcryptBase64)
    }

    /// The cost factor (log2 of the rounds) of a well-formed hash.
    static func cost(_ hash: String) -> Int {
        Int(String(decoding: Array(hash.utf8)[4..<6], as: UTF8.self)) ?? 0
    }

    /// Whether `password` hashes to `hash`: bcrypt with the hash's own salt and cost, then a
    /// comparison that takes as long whatever the first differing byte (`ConstantTime.equal`).
    static func verify(_ password: [UInt8], against hash: String) -> Bool {
        // libxcrypt stops a passphrase at its first NUL; bcrypt itself reads at most 72 bytes.
        guard !password.contains(0) else {
            _ = compute(Array(repeating: UInt8(ascii: "x"), count: password.count), setting: hash)
            return false
        }
        guard let computed = compute(password, setting: hash) else { return false }
        return ConstantTime.equal(computed, Array(hash.utf8))
    }

    /// `crypt_r(password, setting)`; `nil` when libxcrypt refuses the setting (it answers with a
    /// string starting with `*`).
    static func compute(_ password: [UInt8], setting: String) -> [UInt8]? {
        // `struct crypt_data` is 32 KiB: on the heap, once per call (a verification is
        // milliseconds of bcrypt; the allocation is nothing beside it).
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        UnsafeMutableRawPointer(data).initializeMemory(
            as: UInt8.self, repeating: 0, count: MemoryLayout<crypt_data>.size)
        let phrase = password.map { CChar(bitPattern: $0) } + [0]
        guard let result = crypt_r(phrase, setting, data) else { return nil }
        let bytes = Array(UnsafeRawBufferPointer(start: result, count: strlen(result)))
        return bytes.first == UInt8(ascii: "*") ? nil : bytes
    }

    private static func isBcryptBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}

/// Comparisons whose time does not depend on where two secrets differ.
enum ConstantTime {
    /// Every byte is looked at whatever the earlier ones were; only the lengths (not secret
    /// here: a bcrypt hash is always 60 bytes) decide early.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
