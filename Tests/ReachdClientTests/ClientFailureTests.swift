import ReachdClient
import Testing

/// What the client commands say when they get no answer they can use, and how they exit: the
/// same for `status`, `check` and `watch`.
struct ClientFailureTests {
    typealias Failure = LocalHTTPClient.Failure

    /// 77 only for refused credentials; every other failure to get an answer is 1. (64 is
    /// ArgumentParser's, for a bad flag: no failure here ever gives it.)
    @Test func theExitStatusOfEachKind() {
        let statuses: [(Failure.Kind, Int32)] = [
            (.unanswered, 1), (.refused, 1), (.speaksTLS, 1), (.speaksPlain, 1), (.untrusted, 1),
            (.credentialsRefused, 77),
        ]
        for (kind, status) in statuses {
            #expect(Failure(description: "", kind: kind).exitStatus == status, "\(kind)")
        }
        #expect(ClientExitStatus.usage == 64 && ClientExitStatus.noPermission == 77 && ClientExitStatus.failure == 1)
    }

    @Test func a401SaysWhichOptionsCarryCredentials() {
        let failure = Failure.credentialsRefused(by: "127.0.0.1:9478")
        #expect(
            failure.description
                == "127.0.0.1:9478 answered 401: wrong or missing credentials (--user NAME:PASSWORD or REACHD_USER)")
        #expect(failure.exitStatus == 77 && failure.needsOtherOptions)
    }

    /// What the option mends, said once: a timeout or a refused connection are not such mistakes.
    @Test func onlyWhatOtherOptionsMendStopsAWatch() {
        #expect(!Failure(description: "timed out").needsOtherOptions)
        #expect(!Failure(description: "refused", refused: true).needsOtherOptions)
        #expect(Failure(description: "", kind: .untrusted).needsOtherOptions)
    }

    // MARK: A plain request at a TLS port

    @Test func aConnectionClosedBeforeAnyByteMaySpeakTLS() throws {
        let failure = try #require(
            PlainReception.tlsRefusal(at: "[::1]:9478", firstBytes: [], closedByPeer: true))
        #expect(
            failure.description == "[::1]:9478 closed the connection without an answer: it may speak TLS: add --tls")
        #expect(failure.kind == .speaksTLS && failure.exitStatus == 1)
    }

    /// An alert record: content type 21, version 3.x.
    @Test func aTLSAlertMaySpeakTLS() throws {
        let failure = try #require(
            PlainReception.tlsRefusal(at: "127.0.0.1:9478", firstBytes: [21, 3], closedByPeer: true))
        #expect(failure.description == "127.0.0.1:9478 answered with a TLS alert: it may speak TLS: add --tls")
    }

    /// A timeout (nothing closed), or an answer that is not TLS, is no hint at --tls.
    @Test func otherwiseNoHint() {
        #expect(PlainReception.tlsRefusal(at: "127.0.0.1:9478", firstBytes: [], closedByPeer: false) == nil)
        #expect(
            PlainReception.tlsRefusal(at: "127.0.0.1:9478", firstBytes: Array("HT".utf8), closedByPeer: true) == nil)
    }

    // MARK: --tls at a plain port, and certificates

    @Test func noHandshakeWithinTheTimeoutDoesNotSpeakTLS() {
        let failure = HandshakeTrouble.noHandshake(seconds: 3).failure(at: "127.0.0.1:9478")
        #expect(
            failure.description == "127.0.0.1:9478 began no TLS handshake within 3 s: it does not speak TLS: drop --tls"
        )
        #expect(failure.kind == .speaksPlain)
        #expect(HandshakeTrouble.noHandshake(seconds: 0.5).failure(at: "a").description.contains("within 0.5 s"))
    }

    @Test func anHTTPAnswerDoesNotSpeakTLS() {
        let failure = HandshakeTrouble.notTLS.failure(at: "127.0.0.1:9478")
        #expect(failure.description == "127.0.0.1:9478 answered without TLS: it does not speak TLS: drop --tls")
    }

    /// libmicrohttpd answers most ClientHellos `400` and closes on a few without a byte.
    @Test func aConnectionClosedAtTheHandshakeDoesNotSpeakTLS() {
        let failure = HandshakeTrouble.closed.failure(at: "127.0.0.1:9478")
        #expect(
            failure.description
                == "127.0.0.1:9478 closed the connection at the TLS handshake: it does not speak TLS: drop --tls")
        #expect(failure.kind == .speaksPlain && failure.needsOtherOptions)
    }

    /// Anything else in GnuTLS's words, after the address the caller names.
    @Test func anotherHandshakeFailureIsNoHint() {
        let failure = HandshakeTrouble.other("A TLS fatal alert has been received.").failure(at: "127.0.0.1:9478")
        #expect(failure.description == "TLS handshake failed: A TLS fatal alert has been received.")
        #expect(failure.kind == .unanswered && !failure.needsOtherOptions)
    }

    @Test func anUnknownIssuerAsksForTheCAOrNoVerification() {
        let failure = HandshakeTrouble.untrusted([.unknownIssuer], serverName: "127.0.0.1").failure(
            at: "127.0.0.1:9478")
        #expect(
            failure.description
                == "the certificate of 127.0.0.1:9478 is not trusted (its issuer is not a trusted CA): add --cacert FILE or --insecure"
        )
        #expect(failure.kind == .untrusted && failure.exitStatus == 1)
        // GnuTLS's own words are not repeated.
        #expect(!failure.description.contains("The name in the certificate"))
    }

    /// Only a name the certificate lacks: no CA would mend that.
    @Test func aWrongNameAsksForAnotherAddress() {
        let failure = HandshakeTrouble.untrusted([.wrongName], serverName: "::1").failure(at: "[::1]:9478")
        #expect(
            failure.description
                == "the certificate of [::1]:9478 does not name ::1: ask for a name or address it holds (--host), or add --insecure"
        )
        let both = HandshakeTrouble.untrusted([.wrongName, .expired], serverName: "::1").failure(at: "[::1]:9478")
        #expect(both.description.contains("is not trusted (it has expired): add --cacert FILE or --insecure"))
    }
}
