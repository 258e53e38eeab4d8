import Glibc
public import Reachable
import Synchronization

/// SIGTERM, SIGINT and SIGHUP for the whole process: blocked in every thread and read from a
/// signalfd by one, never caught by a handler.
///
/// A handler runs on whichever thread does not block the signal. libdispatch's (behind
/// ServiceLifecycle's `UnixSignals`) passed it on to one thread of its own, where under load it
/// could be lost: a reachd kept serving after SIGTERM, until a second one. Blocked everywhere, a
/// signal stays pending for the process until the reading thread takes it, whatever the other
/// threads are doing.
///
/// What a signal does is decided once the command line is read. Until then each is held.
/// `reachd serve` and `reachd wait` then claim them (`claim()`): SIGTERM and SIGINT ask for the
/// graceful shutdown and SIGHUP for a reload — never the end of the process — those held first
/// included. Every other command leaves them their default action (`leaveToDefaultActions()`):
/// Ctrl-C ends `reachd watch`, one ignored from the start (`nohup`) stays ignored.
public struct ProcessSignals: ~Copyable {
    /// The signals read; every other keeps its handler or default action.
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Who answers the signals read.
    private enum Answer {
        /// The command line is being read: kept, in order, for whoever will answer.
        case undecided(held: [Int32])
        /// `reachd serve` or `reachd wait`.
        case requests(ControlRequests)
        case defaultActions
    }

    private static let answer = Mutex(Answer.undecided(held: []))

    private let reader: SignalReader

    /// Blocks the signals in the calling thread — and so in every thread made after it, each
    /// inheriting its maker's signal mask — and opens the signalfd they are read from.
    public init() throws(SystemError) {
        var blocked = sigset_t(containing: Self.handled)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        reader = try SignalReader(Self.handled)
    }

    /// Reads the signals on the calling thread for the rest of the process's life.
    public consuming func readForever() -> Never {
        while true {
            do {
                Self.deliver(try reader.next())
            } catch {
                // A blocking read of a signalfd fails only with EINTR, which `systemCall` retries.
                fatalError("cannot read the process's signals: \(error)")
            }
        }
    }

    /// `reachd serve` and `reachd wait`, before anything else: from now on SIGTERM and SIGINT ask
    /// the requests returned for the graceful shutdown and SIGHUP for a reload, those held while
    /// the command line was read first; each is kept until the application runs. The same
    /// requests for every call.
    public static func claim() -> ControlRequests {
        answer.withLock { answer in
            if case .requests(let requests) = answer { return requests }
            let requests = ControlRequests()
            if case .undecided(let held) = answer {
                for signal in held { ask(requests, for: signal) }
            }
            answer = .requests(requests)
            return requests
        }
    }

    /// Every command but serving and waiting, once the command line is read: each signal has the
    /// action it would have had unblocked, those held meanwhile first.
    public static func leaveToDefaultActions() {
        answer.withLock { answer in
            guard case .undecided(let held) = answer else { return }
            for signal in held { takeDefaultAction(signal) }
            answer = .defaultActions
        }
    }

    /// To whoever answers it; held until that is decided. Under the lock, so none overtakes those
    /// held before it.
    private static func deliver(_ signal: Int32) {
        answer.withLock { answer in
            switch answer {
            case .undecided(let held): answer = .undecided(held: held + [signal])
            case .requests(let requests): ask(requests, for: signal)
            case .defaultActions: takeDefaultAction(signal)
            }
        }
    }

    private static func ask(_ requests: ControlRequests, for signal: Int32) {
        if signal == SIGHUP {
            requests.reload()
        } else {
            requests.shutDown()
        }
    }

    /// Unblocked in the calling thread and sent to it again: the default action of all three ends
    /// the process (as it would have without reachd's blocking); one ignored from the start is
    /// dropped.
    private static func takeDefaultAction(_ signal: Int32) {
        var one = sigset_t(containing: [signal])
        pthread_sigmask(SIG_UNBLOCK, &one, nil)
        raise(signal)
        pthread_sigmask(SIG_BLOCK, &one, nil)
    }
}
