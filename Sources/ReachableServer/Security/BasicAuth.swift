import CGnuTLS
import FoundationEssentials
import Synchronization

/// `basic_auth_users`: checks a request's `Authorization` header against bcrypt hashes.
///
/// bcrypt costs milliseconds on purpose. The outcome of every verification — success or failure,
/// as the exporter-toolkit does — is remembered for that exact header (by its SHA-256, never in
/// clear): a scrape over keep-alive, or a guesser repeating itself, costs a hash and a lookup.
/// Successes and failures are kept apart, each bounded, so new wrong passwords never push out a
/// good header. A header not yet seen is verified by the `PasswordVerifier`, never on the
/// request's thread. An unknown user pays a verification too, against a hash of the same cost, so
/// timing does not tell which user names exist. A new configuration is a new `BasicAuth`: the
/// caches go with the users they were verified against.
final class BasicAuth: Sendable {
    private let users: [String: String]
    /// What an unknown user's password is verified against: the costliest hash configured.
    private let decoy: String
    private let allowed = Mutex(RecentHeaders(limit: BasicAuth.allowedLimit))
    private let refused = Mutex(RecentHeaders(limit: BasicAuth.refusedLimit))

    /// Good headers kept (a few scrapers, a few people).
    static let allowedLimit = 64
    /// Wrong headers kept: a guesser's recent tries (a repeated one is answered without bcrypt).
    static let refusedLimit = 1024

    /// What `check` found.
    enum Check {
        case allowed
        /// Missing, malformed or known wrong: `401` now.
        case refused
        /// Not seen before: verified by `verifier`, on its own thread.
        case pending(VerificationTicket)
        /// Not seen before, and too many verifications wait: `429` now.
        case shed
    }

    /// - Parameter users: user name → bcrypt hash, each well-formed (`WebConfig.parse` checked).
    init?(users: [String: String]) {
        guard let decoy = users.values.max(by: { BcryptHash.cost($0) < BcryptHash.cost($1) }) else { return nil }
        self.users = users
        self.decoy = decoy
    }

    /// Whether `authorization` (the header's value, or `nil`) is known good or bad; if neither, its
    /// verification is handed to `verifier`.
    func check(_ authorization: String?, verifier: PasswordVerifier) -> Check {
        guard let authorization, let key = Self.digest(authorization) else { return .refused }
        if allowed.withLock({ $0.contains(key) }) { return .allowed }
        if refused.withLock({ $0.contains(key) }) { return .refused }
        guard let (user, password) = Self.credentials(authorization) else { return .refused }
        switch verifier.submit(auth: self, key: key, user: user, password: password) {
        case .queued(let ticket): return .pending(ticket)
        case .shed: return .shed
        }
    }

    /// bcrypt, then the outcome kept under `key` (the verifier's thread calls this).
    func verify(user: String, password: [UInt8], key: Digest) -> Bool {
        let hash = users[user]
        let matches = BcryptHash.verify(password, against: hash ?? decoy) && hash != nil
        if matches {
            allowed.withLock { $0.insert(key) }
        } else {
            refused.withLock { $0.insert(key) }
        }
        return matches
    }

    /// Whether `authorization` holds a user and its password, verified on the caller's thread
    /// (the tests').
    func allows(_ authorization: String?) -> Bool {
        guard let authorization, let key = Self.digest(authorization) else { return false }
        if allowed.withLock({ $0.contains(key) }) { return true }
        if refused.withLock({ $0.contains(key) }) { return false }
        guard let (user, password) = Self.credentials(authorization) else { return false }
        return verify(user: user, password: password, key: key)
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

    /// Headers whose outcome is known, the oldest dropped first past `limit`.
    private struct RecentHeaders {
        let limit: Int
        var keys: Set<Digest> = []
        var order: [Digest] = []
        /// Where the oldest key is in `order` (a ring once full: no shifting per insert).
        var oldest = 0

        init(limit: Int) { self.limit = limit }

        func contains(_ key: Digest) -> Bool { keys.contains(key) }

        mutating func insert(_ key: Digest) {
            guard keys.insert(key).inserted else { return }
            if order.count < limit {
                order.append(key)
                return
            }
            keys.remove(order[oldest])
            order[oldest] = key
            oldest = (oldest + 1) % limit
        }
    }
}
