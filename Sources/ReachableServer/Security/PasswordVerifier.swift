import Dispatch
import Reachable
import Synchronization

/// Runs the bcrypt verifications basic auth needs on one thread of its own, one at a time, so a
/// flood of guessed passwords never occupies the threads that answer requests: the health
/// endpoints, a cached good header and open streams are answered as if there were no flood.
///
/// A request that needs a verification is suspended (`RequestRouter`, `DaemonCallbacks`) and
/// resumed when its `VerificationTicket` is settled. Requests with the same header (and the same
/// configuration) share one verification. While more than `queueLimit` verifications wait, a new
/// one is refused at once (`429`): a guesser cannot make the queue, and with it every honest
/// newcomer's wait, grow without bound.
final class PasswordVerifier: Sendable {
    /// One verification to run, and every request waiting for it. Unchecked `Sendable`: `tickets`
    /// changes only under the verifier's lock.
    private final class Job: @unchecked Sendable {
        let auth: BasicAuth
        let key: BasicAuth.Digest
        let user: String
        let password: [UInt8]
        var tickets: [VerificationTicket]

        init(auth: BasicAuth, key: BasicAuth.Digest, user: String, password: [UInt8], ticket: VerificationTicket) {
            self.auth = auth
            self.key = key
            self.user = user
            self.password = password
            tickets = [ticket]
        }
    }

    private struct State: ~Copyable {
        var waiting: [Job] = []
        /// The job being verified now: joined by a request with the same header meanwhile.
        var running: Job?
        var thread: DedicatedThread?
        var isStopped = false
        /// When shedding was last logged.
        var lastShedWarning: ContinuousClock.Instant?
    }

    /// Verifications allowed to wait; past this, `429`.
    static let queueLimit = 64

    private let state = Mutex(State())
    /// Counts the jobs added to `waiting` (and one more to stop): the thread sleeps on it.
    private let work = DispatchSemaphore(value: 0)
    /// Told (at most once a minute) that verifications are being shed.
    private let shedding: @Sendable () -> Void

    init(shedding: @escaping @Sendable () -> Void = {}) {
        self.shedding = shedding
    }

    /// What happened to a request that asked for a verification.
    enum Submission {
        /// Settled later: the request waits for the ticket.
        case queued(VerificationTicket)
        /// Too many wait already (or the server is stopping): answer `429` now.
        case shed
    }

    /// Asks for `password` of `user` to be checked against `auth`'s users; the outcome is also
    /// kept in `auth`'s cache under `key`.
    func submit(auth: BasicAuth, key: BasicAuth.Digest, user: String, password: [UInt8]) -> Submission {
        let ticket = VerificationTicket()
        let now = ContinuousClock.now
        let (submission, warn, added) = state.withLock { state -> (Submission, warn: Bool, added: Bool) in
            if state.isStopped { return (.shed, false, false) }
            if let running = state.running, running.auth === auth, running.key == key {
                running.tickets.append(ticket)
                return (.queued(ticket), false, false)
            }
            if let same = state.waiting.first(where: { $0.auth === auth && $0.key == key }) {
                same.tickets.append(ticket)
                return (.queued(ticket), false, false)
            }
            guard state.waiting.count < Self.queueLimit else {
                let warn = state.lastShedWarning.map { now - $0 >= .seconds(60) } ?? true
                if warn { state.lastShedWarning = now }
                return (.shed, warn, false)
            }
            // Made under the lock, so `stop` always finds the thread it must join.
            if state.thread == nil {
                guard let thread = try? DedicatedThread({ [self] in run() }) else { return (.shed, false, false) }
                state.thread = thread
            }
            state.waiting.append(Job(auth: auth, key: key, user: user, password: password, ticket: ticket))
            return (.queued(ticket), false, true)
        }
        if warn { shedding() }
        if added { work.signal() }
        return submission
    }

    /// Stops taking verifications and settles every request still waiting as shed, after the one
    /// being verified now: the daemon may stop only once no request is left suspended.
    func stop() {
        let (thread, unstarted) = state.withLock { state -> (DedicatedThread?, [Job]) in
            state.isStopped = true
            defer { state.waiting = [] }
            return (state.thread, state.waiting)
        }
        for job in unstarted {
            for ticket in job.tickets { ticket.settle(.shed) }
        }
        work.signal()
        thread?.join()
    }

    /// The thread is made with the first verification: a reachd without basic auth has none.
    private func run() {
        while true {
            work.wait()
            let job = state.withLock { state -> Job?? in
                if state.isStopped { return .some(nil) }
                guard !state.waiting.isEmpty else { return nil }
                let job = state.waiting.removeFirst()
                state.running = job
                return job
            }
            guard let job else { continue }
            guard let job else { return }
            let allowed = job.auth.verify(user: job.user, password: job.password, key: job.key)
            let tickets = state.withLock { state in
                state.running = nil
                return job.tickets
            }
            for ticket in tickets { ticket.settle(allowed ? .allowed : .refused) }
        }
    }
}
