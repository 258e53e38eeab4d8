extension LocalHTTPClient {
    /// Why a client command got no answer it can use, in words that say what to do, and the exit
    /// status that follows from it — the same for `status`, `check` and `watch`.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        package var kind: Kind

        package enum Kind: Sendable, Equatable {
            /// No answer, a timeout, an answer that cannot be read or is not the one asked for.
            case unanswered
            /// ECONNREFUSED: nothing listens on that port.
            case refused
            /// A plain request met by a closed connection or a TLS alert: the port speaks TLS.
            case speaksTLS
            /// `--tls` met by no handshake or by an HTTP answer: the port speaks plain HTTP.
            case speaksPlain
            /// The certificate did not verify.
            case untrusted
            /// `401`: the credentials are missing or wrong.
            case credentialsRefused
        }

        package init(description: String, refused: Bool = false) {
            self.init(description: description, kind: refused ? .refused : .unanswered)
        }

        package init(description: String, kind: Kind) {
            self.description = description
            self.kind = kind
        }

        /// The address answered ECONNREFUSED.
        package var refused: Bool { kind == .refused }

        /// 1, or 77 (`EX_NOPERM`) for refused credentials: a health check that is turned away
        /// is a configuration to fix, not an outage.
        package var exitStatus: Int32 {
            kind == .credentialsRefused ? ClientExitStatus.noPermission : ClientExitStatus.failure
        }

        /// Whether only other options can mend it (another try with the same ones cannot).
        package var needsOtherOptions: Bool {
            switch kind {
            case .speaksTLS, .speaksPlain, .untrusted, .credentialsRefused: true
            case .unanswered, .refused: false
            }
        }

        /// `address` answered `401`.
        package static func credentialsRefused(by address: String) -> Failure {
            Failure(description: "\(address) answered 401: \(ClientHint.credentials)", kind: .credentialsRefused)
        }

        /// A plain request at `address` met `what` (a closed connection, a TLS alert).
        package static func speaksTLS(_ address: String, _ what: String) -> Failure {
            Failure(description: "\(address) \(what): \(ClientHint.addTLS)", kind: .speaksTLS)
        }

        /// `--tls` at `address` met `what` (no handshake, an HTTP answer).
        package static func speaksPlain(_ address: String, _ what: String) -> Failure {
            Failure(description: "\(address) \(what): \(ClientHint.dropTLS)", kind: .speaksPlain)
        }
    }
}

/// The exit statuses of the client commands (`status`, `check`, `watch`), as `sysexits.h` names
/// them: a usage mistake is told apart from a server that cannot be asked.
package enum ClientExitStatus {
    /// Every failure to get an answer (and, for `check`, a failing check).
    package static let failure: Int32 = 1
    /// `EX_USAGE`: a bad flag or variable — the only failure the usage text follows.
    package static let usage: Int32 = 64
    /// `EX_NOPERM`: the credentials were refused.
    package static let noPermission: Int32 = 77
}

/// What to do, after each failure whose fix is an option of the client commands.
package enum ClientHint {
    package static let addTLS = "it may speak TLS: add --tls"
    package static let dropTLS = "it does not speak TLS: drop --tls"
    package static let trust = "add --cacert FILE or --insecure"
    package static let credentials = "wrong or missing credentials (--user NAME:PASSWORD or REACHD_USER)"
}
