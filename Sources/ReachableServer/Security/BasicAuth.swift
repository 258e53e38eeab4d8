import CGnuTLS
import FoundationEssentials
import Synchronization

/// `basic_auth_users`: checks a request's `Authorization` header against bcrypt hashes.
///
/// bcrypt costs milliseconds on purpose; a scrape over keep-alive sends the same header every
/// time, so a header that was verified is remembered (by its SHA-256, never in clear) and the
/// next one costs a hash and a lookup. Failures are never remembered: each wrong guess pays the
/// full bcrypt. An unknown user pays it too, against a hash of the same cost, so timing does not
/// tell which user names exist. A new configuration is a new `BasicAuth`: the cache goes with
/// the users it was verified against.
final class BasicAuth: Sendable {
    private let users: [String: String]
    /// What an unknown user's password is verified against: the costliest hash configured.
    private let decoy: String
    private let verified = Mutex(VerifiedHeaders())

    /// At most this many verified headers are kept (a few scrapers, a few people).
    static let cacheLimit = 64

    /// - Parameter users: user name → bcrypt hash, each well-formed (`WebConfig.parse` checked).
    init?(users: [String: String]) {
        guard let decoy = users.values.max(by: { BcryptHash.cost($0) < BcryptHash.cost($1) }) else { return nil }
        self.users = users
        self.decoy = decoy
    }

    /// Whether `authorization` (the header's value, or `nil`) holds a user and its password.
    func allows(_ authorization: String?) -> Bool {
        guard let authorization, let key = Self.digest(authorization) else { return false }
        if verified.withLock({ $0.contains(key) }) { return true }
        guard let (user, password) = Self.credentials(authorization) else { return false }
        let hash = users[user]
        let matches = BcryptHash.verify(password, against: hash ?? decoy)
        guard matches, hash != nil else { return false }
        verified.withLock { $0.insert(key) }
        return true
    }

    /// `Basic base64(user:password)` (the scheme in any case, RFC 7617); `nil` if malformed.
    static func credentials(_ header: String) -> (user: String, password: [UInt8])? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { return nil }
        let encoded = String(parts[1].drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        guard let decoded = Data(base64Encoded: encoded) else { return nil }
        let bytes = [UInt8](decoded)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        guard let user = String(validating: bytes[..<colon], as: UTF8.self) else { return nil }
        return (user, Array(bytes[(colon + 1)...]))
    }

    /// SHA-256 of the header (GnuTLS, already linked for TLS).
    private static func digest(_ header: String) -> Digest? {
        var bytes = Array(header.utf8)
        var digest = Digest()
        let result = withUnsafeMutableBytes(of: &digest.words) { out in
            gnutls_hash_fast(GNUTLS_DIG_SHA256, &bytes, bytes.count, out.baseAddress)
        }
        return result == 0 ? digest : nil
    }

    /// 32 bytes as four words, hashable without an allocation.
    struct Digest: Hashable {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        static func == (a: Digest, b: Digest) -> Bool { a.words == b.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    /// The verified headers, oldest dropped first past the limit.
    private struct VerifiedHeaders {
        var keys: Set<Digest> = []
        var order: [Digest] = []

        func contains(_ key: Digest) -> Bool { keys.contains(key) }

        mutating func insert(_ key: Digest) {
            guard keys.insert(key).inserted else { return }
            order.append(key)
            if order.count > BasicAuth.cacheLimit { keys.remove(order.removeFirst()) }
        }
    }
}
