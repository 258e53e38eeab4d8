import CMnl
import Glibc
import Synchronization

@testable import Reachable

/// The real netlink system calls with faults a test switches on: the next event receives fail,
/// socket opens fail, or route-lookup requests fail. Everything not faulted reaches the kernel.
final class FaultyNetlink: Sendable {
    private struct Plan {
        var eventReceiveErrors: [Int32] = []
        var openFailures = 0
        var openError: Int32 = EMFILE
        var lookupSendErrors: [Int32] = []
        var injected = 0
    }

    private let plan = Mutex(Plan())

    /// The next `count` receives on the event socket fail with `code` (once it has data).
    func failEventReceives(_ count: Int = 1, with code: Int32 = EIO) {
        plan.withLock { $0.eventReceiveErrors += Array(repeating: code, count: count) }
    }

    /// The next `count` socket opens fail with `code` (reopening after a failure, mostly).
    func failOpens(_ count: Int, with code: Int32 = EMFILE) {
        plan.withLock {
            $0.openFailures = count
            $0.openError = code
        }
    }

    /// The next `count` route-lookup requests (not dumps) fail with `code` when sent.
    func failLookups(_ count: Int, with code: Int32 = EBUSY) {
        plan.withLock { $0.lookupSendErrors += Array(repeating: code, count: count) }
    }

    /// Faults that actually happened.
    var injected: Int { plan.withLock { $0.injected } }

    var calls: NetlinkSystemCalls {
        let live = NetlinkSystemCalls.live
        return NetlinkSystemCalls(
            open: { [self] role in
                let code = plan.withLock { plan -> Int32? in
                    guard plan.openFailures > 0 else { return nil }
                    plan.openFailures -= 1
                    plan.injected += 1
                    return plan.openError
                }
                if let code {
                    errno = code
                    return nil
                }
                return live.open(role)
            },
            receive: { [self] role, handle, buffer in
                let code = plan.withLock { plan -> Int32? in
                    guard role == .events, !plan.eventReceiveErrors.isEmpty else { return nil }
                    plan.injected += 1
                    return plan.eventReceiveErrors.removeFirst()
                }
                if let code {
                    errno = code
                    return -1
                }
                return live.receive(role, handle, buffer)
            },
            send: { [self] role, handle, bytes in
                let isDump = bytes.load(fromByteOffset: 6, as: UInt16.self) & UInt16(NLM_F_DUMP) != 0
                let code = plan.withLock { plan -> Int32? in
                    guard role == .requests, !isDump, !plan.lookupSendErrors.isEmpty else { return nil }
                    plan.injected += 1
                    return plan.lookupSendErrors.removeFirst()
                }
                if let code {
                    errno = code
                    return -1
                }
                return live.send(role, handle, bytes)
            }
        )
    }
}
