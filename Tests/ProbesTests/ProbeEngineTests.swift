import Foundation
import Probes
import Reachable
import Synchronization
import TestSupport
import Testing

/// The engine against real servers on loopback, one per behaviour.
@Suite(.timeLimit(.minutes(2)))
struct ProbeEngineTests {
    let engine: ProbeEngine

    init() throws {
        // No test here resolves a name: a resolv.conf that does not exist keeps the host's out of it.
        engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
    }

    static func url(_ text: String) throws -> TargetURL {
        try TargetSpec.parse("t=\(text)").url
    }

    func job(
        _ url: String, port: UInt16, address: String = "127.0.0.1", timeout: Duration = .seconds(30),
        prefix: String? = nil
    ) throws -> ProbeJob {
        ProbeJob(
            url: try Self.url(url.replacingOccurrences(of: "PORT", with: String(port))),
            address: IPAddress(address)!, deadline: .now + timeout, expectedBodyPrefix: prefix.map { Array($0.utf8) })
    }

    static let noContent = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"

    @Test func noContentIsSuccessWithItsStatusAndTimings() async throws {
        let server = try TestHTTPServer(.respond(Self.noContent))
        let outcome = await engine.probe(try job("http://127.0.0.1:PORT/generate_204", port: server.port))
        #expect(outcome.failure == nil && outcome.statusCode == 204, "\(outcome)")
        #expect(outcome.bodyPrefixMatched == nil)
        #expect(outcome.timings.total > .zero && outcome.timings.connect <= outcome.timings.total)
        #expect(outcome.timings.appConnect == .zero, "no TLS")
        #expect(server.requests.first?.hasPrefix("GET /generate_204 HTTP/1.1\r\n") == true)
    }

    /// A pinned job's socket is bound to its interface (`CURLOPT_INTERFACE if!NAME`): out of `lo`
    /// it reaches the loopback server; out of an interface that does not exist it fails without
    /// connecting anywhere else.
    @Test func aPinnedJobConnectsOnlyOutOfItsInterface() async throws {
        let server = try TestHTTPServer(.respond(Self.noContent))
        let url = try Self.url("http://127.0.0.1:\(server.port)/")
        func pinned(_ interface: String) -> ProbeJob {
            ProbeJob(
                url: url, address: IPAddress("127.0.0.1")!, egress: .pinned(to: interface),
                deadline: .now + .seconds(30))
        }
        let throughLoopback = await engine.probe(pinned("lo"))
        #expect(throughLoopback.failure == nil && throughLoopback.statusCode == 204, "\(throughLoopback)")
        let nowhere = await engine.probe(pinned("nosuch0"))
        #expect(nowhere.failure != nil, "\(nowhere)")
        #expect(server.requests.count == 1, "only the probe through lo arrived")
    }

    /// `icmp://` on loopback, both families: every small echo answered with its round trip, the
    /// full-size echo (as large as lo's MTU allows) carried; the handshake of a tcp probe is its
    /// round trip. On the engine loop, under the sanitizers like every other driver.
    @Test func echoesOnLoopbackAreAnsweredAndMeasured() async throws {
        for (literal, headers) in [("127.0.0.1", 28), ("::1", 48)] {
            let url = try Self.url("icmp://\(literal.contains(":") ? "[\(literal)]" : literal)")
            let outcome = await engine.probe(
                ProbeJob(url: url, address: IPAddress(literal)!, outputInterface: "lo", deadline: .now + .seconds(30)))
            #expect(outcome.failure == nil, "\(literal): \(outcome)")
            #expect(outcome.quality.echoesSent == 3 && outcome.quality.echoesAnswered == 3, "\(outcome.quality)")
            #expect(outcome.quality.roundTrips.count == 3 && outcome.quality.roundTrips.allSatisfy { $0 > .zero })
            // lo's MTU is 65,536: the largest IP packet, 65,535 bytes, is what the full-size echo is.
            #expect(
                outcome.quality.pathMTU == .carried(bytes: 65_535), "\(headers) bytes of headers: \(outcome.quality)")
        }
        let server = try TestHTTPServer(.respond(Self.noContent))
        let tcp = await engine.probe(try job("tcp://127.0.0.1:PORT", port: server.port))
        #expect(tcp.failure == nil && tcp.quality.roundTrips.count == 1, "\(tcp)")
    }

    @Test func redirectIsAnAnswerAndIsNotFollowed() async throws {
        let server = try TestHTTPServer { head in
            head.hasPrefix("GET /login ")
                ? .respond(Self.noContent)
                : .respond("HTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        let outcome = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port))
        #expect(outcome.failure == nil && outcome.statusCode == 302, "a followed redirect would end in 204: \(outcome)")
        // The server records each request before it answers, and the probe completes only after the
        // last answer it reads: a followed Location would be recorded by now.
        #expect(server.requests.count == 1, "the Location was not requested: \(server.requests)")
    }

    @Test func bodyPrefixIsComparedAndReadingStopsThere() async throws {
        let body = "NetworkManager is online\n"
        let server = try TestHTTPServer(
            .respond("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"))
        let matching = await engine.probe(
            try job("http://127.0.0.1:PORT/", port: server.port, prefix: "NetworkManager"))
        #expect(matching.failure == nil && matching.statusCode == 200 && matching.bodyPrefixMatched == true)
        let other = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port, prefix: "Welcome to"))
        #expect(other.failure == nil && other.bodyPrefixMatched == false)
        let longer = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port, prefix: body + "more"))
        #expect(longer.bodyPrefixMatched == false, "the body ended before the prefix did")
        let none = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port))
        #expect(none.failure == nil && none.bodyPrefixMatched == nil)
    }

    @Test(arguments: [400, 404, 500, 503])
    func answerOutsideTwoHundredToThreeNinetyNineIsHTTPStatus(_ status: Int) async throws {
        let server = try TestHTTPServer(
            .respond("HTTP/1.1 \(status) Nope\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope"))
        let outcome = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port))
        #expect(outcome.failure == .httpStatus && outcome.statusCode == status, "\(outcome)")
    }

    @Test func serverThatNeverAnswersIsTimeoutAtTheDeadline() async throws {
        let server = try TestHTTPServer(.hang)
        let started = ContinuousClock.now
        let outcome = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port, timeout: .seconds(1)))
        let elapsed = ContinuousClock.now - started
        #expect(outcome.failure == .timeout, "\(outcome)")
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(30), "at the deadline, not long after: \(elapsed)")
    }

    @Test func closedPortIsRefused() async throws {
        let closed = try ClosedPort()
        let http = await engine.probe(try job("http://127.0.0.1:PORT/", port: closed.port))
        #expect(http.failure == .refused, "\(http)")
        let tcp = await engine.probe(try job("tcp://127.0.0.1:PORT", port: closed.port))
        #expect(tcp.failure == .refused, "\(tcp)")
        #expect(tcp.timings.total < .seconds(30), "a sanity bound: loopback connects at once")
    }

    @Test func tcpOnlyConnectsAndCloses() async throws {
        let server = try TestHTTPServer(.hang)
        let outcome = await engine.probe(try job("tcp://db.test:PORT", port: server.port))
        #expect(outcome.failure == nil && outcome.statusCode == nil, "\(outcome)")
        try await waitUntil("the server saw the probe close its connection") { server.endedConnections == 1 }
        #expect(server.requests.isEmpty, "nothing was sent over the connection")
    }

    @Test func hugeBodyIsNeitherReadNorAllowedToDelayOthers() async throws {
        let huge = try TestHTTPServer(.hugeBody(10_000_000))
        let quick = try TestHTTPServer(.respond(Self.noContent))
        let started = ContinuousClock.now
        let bigJob = try job("http://127.0.0.1:PORT/", port: huge.port, prefix: "xxxx")
        let smallJob = try job("http://127.0.0.1:PORT/", port: quick.port)
        async let big = engine.probe(bigJob)
        async let small = engine.probe(smallJob)
        let (bigOutcome, smallOutcome) = await (big, small)
        #expect(bigOutcome.failure == nil && bigOutcome.statusCode == 200 && bigOutcome.bodyPrefixMatched == true)
        #expect(smallOutcome.statusCode == 204)
        // A sanity bound (the machine may be busy): reading 10 MB first would take far longer.
        #expect(ContinuousClock.now - started < .seconds(30))
        huge.stop()
        #expect(huge.bodyBytesWritten < 10_000_000, "the client closed long before: \(huge.bodyBytesWritten)")
        let targetStyle = try TestHTTPServer(.hugeBody(10_000_000))
        let target = await engine.probe(try job("http://127.0.0.1:PORT/", port: targetStyle.port))
        #expect(target.failure == nil && target.statusCode == 200, "a target needs only the status line")
    }

    @Test func tricklingServerIsTimeout() async throws {
        let server = try TestHTTPServer(.trickle(Self.noContent))
        let outcome = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port, timeout: .seconds(1)))
        #expect(outcome.failure == .timeout, "\(outcome)")
        server.stop()
    }

    @Test func selfSignedCertificateIsTLS() async throws {
        let directory = try TemporaryDirectory()
        let server = try SelfSignedTLSServer(directory: directory)
        let outcome = await engine.probe(try job("https://localhost:PORT/", port: server.port))
        #expect(outcome.failure == .tls, "\(outcome)")
        #expect(outcome.detail?.contains("certificate") == true, "a verification failure: \(outcome.detail ?? "")")
    }

    @Test func trustedCertificateVerifiesTheURLsHostNotThePinnedAddress() async throws {
        let directory = try TemporaryDirectory()
        let server = try SelfSignedTLSServer(directory: directory)
        let trusting = try ProbeEngine(
            resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"),
            trustedCertificates: server.certificatePath)
        let verified = await trusting.probe(try job("https://localhost:PORT/", port: server.port))
        #expect(verified.failure == nil && verified.statusCode == 200, "\(verified)")
        #expect(verified.timings.appConnect > .zero && verified.timings.appConnect <= verified.timings.total)
        // Same server, same pinned address, a name the certificate does not carry.
        let mismatch = await trusting.probe(try job("https://other.invalid:PORT/", port: server.port))
        #expect(mismatch.failure == .tls, "\(mismatch)")
        trusting.stop()
    }

    @Test func connectionIsPinnedToTheGivenAddressWithoutResolvingTheHost() async throws {
        let server = try TestHTTPServer(.respond(Self.noContent))
        // "pinned.invalid" resolves nowhere; the request still reaches 127.0.0.1 and names its host.
        let outcome = await engine.probe(try job("http://pinned.invalid:PORT/x", port: server.port))
        #expect(outcome.statusCode == 204, "\(outcome)")
        #expect(server.requests.first?.contains("\r\nHost: pinned.invalid:\(server.port)\r\n") == true)
    }

    @Test(.enabled(if: LoopbackSocket.ipv6Available, "IPv6 loopback is not available"))
    func ipv6AddressIsProbed() async throws {
        let server = try TestHTTPServer(address: "::1", .respond(Self.noContent))
        let literal = await engine.probe(try job("http://[::1]:PORT/", port: server.port, address: "::1"))
        #expect(literal.statusCode == 204, "\(literal)")
        let named = await engine.probe(try job("tcp://six.invalid:PORT", port: server.port, address: "::1"))
        #expect(named.failure == nil, "\(named)")
    }

    @Test func hundredSilentTargetsFinishInAboutTheirTimeout() async throws {
        let server = try TestHTTPServer(.hang)
        let started = ContinuousClock.now
        let outcomes = try await withThrowingTaskGroup(of: ProbeOutcome.self) { group in
            for index in 0..<100 {
                let job = try job("http://t\(index).invalid:PORT/", port: server.port, timeout: .seconds(1))
                group.addTask { await engine.probe(job) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - started
        let others = outcomes.filter { $0.failure != .timeout }
        #expect(outcomes.count == 100 && others.isEmpty, "not timeouts: \(others.prefix(3))")
        #expect(elapsed < .seconds(40), "concurrent (one after another would take 100 s): \(elapsed)")
        server.stop()
    }

    @Test func deadlineAlreadyPassedIsTimeoutAtOnce() async throws {
        let server = try TestHTTPServer(.respond(Self.noContent))
        let outcome = await engine.probe(try job("http://127.0.0.1:PORT/", port: server.port, timeout: .zero))
        #expect(outcome.failure == .timeout)
        #expect(server.requests.isEmpty)
    }
}

/// Starting and stopping: every accepted job ends exactly once, nothing runs after `stop()`.
@Suite(.timeLimit(.minutes(1)))
struct ProbeEngineLifecycleTests {
    @Test func stopCancelsWorkUnderWayAndIsIdempotent() async throws {
        let engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
        let server = try TestHTTPServer(.hang)
        let job = ProbeJob(
            url: try ProbeEngineTests.url("http://127.0.0.1:\(server.port)/"), address: IPAddress("127.0.0.1")!,
            deadline: .now + .seconds(120))
        async let pending = engine.probe(job)
        try await waitUntil("the request is under way") { server.requests.count == 1 }
        let started = ContinuousClock.now
        engine.stop()
        #expect(ContinuousClock.now - started < .seconds(40), "stop does not wait for the 120 s deadline")
        let outcome = await pending
        #expect(outcome.wasCancelled && outcome.failure == .error)
        engine.stop()
        #expect(!engine.probe(job) { _ in Issue.record("no completion after stop") })
        #expect(!engine.resolve("db.test", deadline: .now + .seconds(1)) { _ in Issue.record("none") })
        server.stop()
    }

    @Test func stopFromACompletionDoesNotDeadlock() async throws {
        let engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
        let outcome = await withCheckedContinuation { continuation in
            engine.resolve("198.18.0.1", deadline: .now + .seconds(1)) { outcome in
                engine.stop()  // on the engine thread: only signals
                continuation.resume(returning: outcome)
            }
        }
        #expect(outcome.addresses == [IPAddress("198.18.0.1")!])
        engine.stop()  // from here it waits for the thread, which has ended
    }

    @Test func completionCanSubmitTheNextStage() async throws {
        let engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
        let server = try TestHTTPServer(.respond(ProbeEngineTests.noContent))
        let url = try ProbeEngineTests.url("http://127.0.0.1:\(server.port)/")
        let outcome = await withCheckedContinuation { continuation in
            engine.resolve(url.host, deadline: .now + .seconds(30)) { resolved in
                let job = ProbeJob(url: url, address: resolved.addresses[0], deadline: .now + .seconds(30))
                engine.probe(job) { continuation.resume(returning: $0) }
            }
        }
        #expect(outcome.statusCode == 204)
        engine.stop()
    }

    @Test func engineDroppedWithoutStopEndsItsThread() async throws {
        var engine: ProbeEngine? = try ProbeEngine(
            resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
        weak let dropped = engine
        #expect(await engine!.resolve("::1").addresses == [IPAddress("::1")!])
        let server = try TestHTTPServer(.hang)
        let job = ProbeJob(
            url: try ProbeEngineTests.url("http://127.0.0.1:\(server.port)/"), address: IPAddress("127.0.0.1")!,
            deadline: .now + .seconds(30))
        let ended = Completion()
        engine!.probe(job) { ended.record($0) }
        try await waitUntil("the request is under way") { server.requests.count == 1 }
        engine = nil  // deinit stops and waits for the thread, which cancels the probe on its way out
        #expect(dropped == nil, "nothing else holds the engine")
        let outcome = ended.outcome
        #expect(
            outcome?.wasCancelled == true,
            "completed as cancelled before deinit returned: \(String(describing: outcome))")
        server.stop()
    }
}

/// What a completion was called with, read from another thread.
private final class Completion: Sendable {
    private let recorded = Mutex<ProbeOutcome?>(nil)

    func record(_ outcome: ProbeOutcome) { recorded.withLock { $0 = outcome } }

    var outcome: ProbeOutcome? { recorded.withLock { $0 } }
}

/// With nothing to do, the engine thread sleeps: no timer, no polling (reachd with no targets must
/// cost no wake-ups).
@Suite(.timeLimit(.minutes(1)))
struct ProbeEngineIdleTests {
    @Test func idleEngineDoesNotWakeUp() async throws {
        let engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
        _ = await engine.resolve("198.18.0.1")  // one round trip, then nothing
        await engine.caughtUp()
        let before = engine.statistics
        // The window is the engine's own timer: submitting it and its firing are the only wake-ups.
        await engine.timerFired(after: .seconds(1))
        var expected = before
        expected.wakeUps += 2
        #expect(engine.statistics == expected, "\(before) → \(engine.statistics)")
        #expect(before.resolutions == 1 && before.probes == 0)
        engine.stop()
    }

    @Test func finishedProbesLeaveNoTimerBehind() async throws {
        let engine = try ProbeEngine(resolver: ResolverConfiguration(resolvConfPath: "/nonexistent/resolv.conf"))
        let server = try TestHTTPServer(.respond(ProbeEngineTests.noContent))
        let job = ProbeJob(
            url: try ProbeEngineTests.url("http://127.0.0.1:\(server.port)/"), address: IPAddress("127.0.0.1")!,
            deadline: .now + .seconds(30))
        #expect(await engine.probe(job).statusCode == 204)
        await engine.caughtUp()
        let before = engine.statistics
        await engine.timerFired(after: .seconds(1))
        #expect(engine.statistics.wakeUps == before.wakeUps + 2, "only the timer's: \(before) → \(engine.statistics)")
        engine.stop()
    }
}
