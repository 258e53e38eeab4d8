import Foundation
import Synchronization
import Testing

@testable import ReachableServer

/// The verifier: one bcrypt at a time on its own thread, requests with the same header sharing
/// one, a bounded queue, and nothing left waiting once it stops.
struct PasswordVerifierTests {
    /// "rasmuslerdorf" at cost 10: about 50 ms a verification, long enough to queue behind.
    static let slowUsers = ["bob": "$2b$10$" + "uksSK9gqmkdf2NFzjFhdtesWzKt22l0XGzU3XGuqVO6VpLGOyPmaC"]

    static func settled(_ ticket: VerificationTicket, within seconds: Double = 10) -> VerificationTicket.Outcome? {
        let done = DispatchSemaphore(value: 0)
        ticket.whenSettled { done.signal() }
        _ = done.wait(timeout: .now() + seconds)
        return ticket.outcome
    }

    @Test func aRightAndAWrongPasswordAreSettledAndCached() throws {
        let auth = try #require(BasicAuth(users: BasicAuthTests.users))
        let verifier = PasswordVerifier()
        defer { verifier.stop() }
        let right = BasicAuthTests.header("prometheus:secret")
        let wrong = BasicAuthTests.header("prometheus:nope")
        guard case .pending(let good) = auth.check(right, verifier: verifier),
            case .pending(let bad) = auth.check(wrong, verifier: verifier)
        else {
            Issue.record("a header never seen was not handed to the verifier")
            return
        }
        #expect(Self.settled(good) == .allowed)
        #expect(Self.settled(bad) == .refused)
        guard case .allowed = auth.check(right, verifier: verifier) else {
            Issue.record("the good header was not cached")
            return
        }
        guard case .refused = auth.check(wrong, verifier: verifier) else {
            Issue.record("the wrong header was not cached")
            return
        }
    }

    @Test func missingAndMalformedHeadersAreRefusedWithoutTheVerifier() throws {
        let auth = try #require(BasicAuth(users: BasicAuthTests.users))
        let verifier = PasswordVerifier()
        defer { verifier.stop() }
        for header in [nil, "", "Bearer x", "Basic !!!"] as [String?] {
            guard case .refused = auth.check(header, verifier: verifier) else {
                Issue.record("\(String(describing: header)) was not refused at once")
                continue
            }
        }
    }

    /// Twenty requests with one new header cost one bcrypt, not twenty.
    @Test func requestsWithTheSameHeaderShareOneVerification() throws {
        let auth = try #require(BasicAuth(users: Self.slowUsers))
        let verifier = PasswordVerifier()
        defer { verifier.stop() }
        let header = BasicAuthTests.header("bob:nope")
        let clock = ContinuousClock()
        let start = clock.now
        let tickets = (0..<20).compactMap { _ -> VerificationTicket? in
            if case .pending(let ticket) = auth.check(header, verifier: verifier) { ticket } else { nil }
        }
        #expect(tickets.count == 20)
        for ticket in tickets { #expect(Self.settled(ticket) == .refused) }
        // One verification at cost 10 is ~50 ms; twenty in a row would be ~1 s.
        #expect(clock.now - start < .milliseconds(600))
    }

    /// Past the queue's bound a new header is shed at once; a cached one still passes.
    @Test func pastTheBoundNewHeadersAreShedAndCachedOnesPass() throws {
        let auth = try #require(BasicAuth(users: Self.slowUsers))
        let verifier = PasswordVerifier()
        let right = BasicAuthTests.header("bob:rasmuslerdorf")
        #expect(auth.allows(right))
        var pending: [VerificationTicket] = []
        var shed = 0
        for index in 0..<(PasswordVerifier.queueLimit + 10) {
            switch auth.check(BasicAuthTests.header("bob:guess\(index)"), verifier: verifier) {
            case .pending(let ticket): pending.append(ticket)
            case .shed: shed += 1
            default: Issue.record("guess \(index) was decided without bcrypt")
            }
        }
        // The first may already be running, so up to one more than the bound is taken.
        #expect(pending.count >= PasswordVerifier.queueLimit && pending.count <= PasswordVerifier.queueLimit + 1)
        #expect(shed == PasswordVerifier.queueLimit + 10 - pending.count)
        guard case .allowed = auth.check(right, verifier: verifier) else {
            Issue.record("a cached good header waited behind the guesses")
            return
        }
        // Stopping settles every waiting request (as shed, but the one being verified).
        verifier.stop()
        for ticket in pending { #expect(ticket.outcome != nil) }
        #expect(pending.filter { $0.outcome == .shed }.count >= pending.count - 2)
    }

    /// After `stop`, nothing waits: a new header is shed at once.
    @Test func afterStopNothingWaits() throws {
        let auth = try #require(BasicAuth(users: BasicAuthTests.users))
        let verifier = PasswordVerifier()
        verifier.stop()
        guard case .shed = auth.check(BasicAuthTests.header("prometheus:secret"), verifier: verifier) else {
            Issue.record("a header was queued after stop")
            return
        }
    }

    /// A ticket settled before anyone waits for it wakes its waiter at once; only the first
    /// outcome counts, and the waiter is woken once.
    @Test func aTicketWakesOnceWhateverTheOrder() {
        let early = VerificationTicket()
        early.settle(.allowed)
        let wakes = Atomic(0)
        early.whenSettled { wakes.add(1, ordering: .relaxed) }
        #expect(wakes.load(ordering: .relaxed) == 1)
        let late = VerificationTicket()
        late.whenSettled { wakes.add(1, ordering: .relaxed) }
        #expect(wakes.load(ordering: .relaxed) == 1)
        late.settle(.refused)
        late.settle(.allowed)
        #expect(wakes.load(ordering: .relaxed) == 2)
        #expect(late.outcome == .refused)
    }
}
