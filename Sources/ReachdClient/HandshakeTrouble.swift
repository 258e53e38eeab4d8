/// Why a TLS handshake with reachd failed, in the client commands' terms (GnuTLS's codes and
/// status bits are mapped to it in `TLSClientSession`), and the words that say what to do.
package enum HandshakeTrouble: Equatable, Sendable {
    /// Nothing came back within the timeout: a plain HTTP server waits for a request line that a
    /// ClientHello never ends.
    case noHandshake(seconds: Double)
    /// What came back is not TLS: a plain HTTP server's answer to a ClientHello.
    case notTLS
    /// The connection closed before any byte came back: what libmicrohttpd does to some
    /// ClientHellos on a plain port (to most it answers `400`). A TLS server would send an alert.
    case closed
    /// The certificate did not verify, for these reasons.
    case untrusted(Set<CertificateDoubt>, serverName: String)
    /// Anything else, in GnuTLS's words.
    case other(String)

    /// Why a certificate did not verify (GnuTLS's `gnutls_certificate_status_t` bits).
    package enum CertificateDoubt: Hashable, Sendable {
        case unknownIssuer, issuerNotCA, badSignature, expired, notYetValid, revoked, insecureAlgorithm
        case wrongName
        /// A reason without words of its own.
        case other
    }

    /// The failure `address` (`host:port`) caused.
    package func failure(at address: String) -> LocalHTTPClient.Failure {
        switch self {
        case .noHandshake(let seconds):
            return .speaksPlain(address, "began no TLS handshake within \(Self.secondsText(seconds)) s")
        case .notTLS:
            return .speaksPlain(address, "answered without TLS")
        case .closed:
            return .speaksPlain(address, "closed the connection at the TLS handshake")
        case .untrusted(let doubts, let serverName):
            return LocalHTTPClient.Failure(
                description: Self.untrustedWords(doubts, address: address, serverName: serverName), kind: .untrusted)
        case .other(let reason):
            // Said after "cannot connect to ADDRESS: ".
            return LocalHTTPClient.Failure(description: "TLS handshake failed: \(reason)")
        }
    }

    /// A name the certificate lacks is mended by asking for a name or address it holds; every
    /// other doubt by trusting its CA, or by not verifying.
    private static func untrustedWords(_ doubts: Set<CertificateDoubt>, address: String, serverName: String) -> String {
        let reasons = doubts.subtracting([.wrongName]).map(\.words).sorted()
        if reasons.isEmpty, doubts.contains(.wrongName) {
            return "the certificate of \(address) does not name \(serverName): ask for a name or address it holds"
                + " (--host), or add --insecure"
        }
        let why = reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))"
        return "the certificate of \(address) is not trusted\(why): \(ClientHint.trust)"
    }

    /// `3`, not `3.0`.
    private static func secondsText(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

extension HandshakeTrouble.CertificateDoubt {
    var words: String {
        switch self {
        case .unknownIssuer: "its issuer is not a trusted CA"
        case .issuerNotCA: "its issuer is not a CA"
        case .badSignature: "its signature does not verify"
        case .expired: "it has expired"
        case .notYetValid: "it is not valid yet"
        case .revoked: "it is revoked"
        case .insecureAlgorithm: "it is signed with an insecure algorithm"
        case .wrongName: "it names another host"
        case .other: "GnuTLS refused it"
        }
    }
}
