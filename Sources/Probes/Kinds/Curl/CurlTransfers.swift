import CProbeLibraries
import Reachable

/// libcurl's transfers, as a driver of the engine loop, through curl's multi_socket API (curl's
/// `ephiperfifo.c` example): curl says which of its sockets to watch (`socketChanged`, on the
/// loop's epoll) and when its next timeout is (`timerChanged`); a ready socket or a due timeout
/// is handed back with `curl_multi_socket_action`, and each turn collects what finished.
/// Engine thread only.
final class CurlTransfers: EngineDriver, DescriptorOwner {
    /// `nil` if curl could not make one (out of memory): every transfer then fails. Cleaned up by
    /// `shutdown`, after which nothing is called.
    private let multi: UnsafeMutableRawPointer?
    private let loop: EventLoop
    private let trustedCertificates: String?
    private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
    /// When curl wants `CURL_SOCKET_TIMEOUT` next (`nil`: it waits for nothing).
    private var curlDeadline: ContinuousClock.Instant?

    init(settings: EngineSettings) {
        multi = reachd_curl_multi_init()
        loop = settings.loop
        trustedCertificates = settings.trustedCertificates
        guard let multi else { return }
        // Unretained: the multi handle is cleaned up in `shutdown`, before this object goes.
        let this = Unmanaged.passUnretained(self).toOpaque()
        reachd_curl_multi_setopt_socket_function(
            multi,
            { _, socket, what, data, _ in
                Unmanaged<CurlTransfers>.fromOpaque(data!).takeUnretainedValue().socketChanged(socket, what: what)
                return 0
            }, this)
        reachd_curl_multi_setopt_timer_function(
            multi,
            { _, milliseconds, data in
                Unmanaged<CurlTransfers>.fromOpaque(data!).takeUnretainedValue().timerChanged(milliseconds)
                return 0
            }, this)
    }

    /// Starts one TCP connect or HTTP(S) request of `url` (`nil`: the kind made none); `completion`
    /// is called once.
    func start(
        _ job: ProbeJob, url: String?, connectOnly: Bool, completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) {
        guard job.deadline > .now else {
            completion(.failed(.timeout, detail: "no time left to probe"))
            return
        }
        guard let multi else { return completion(.failed(.error, detail: "curl_multi_init failed")) }
        guard let url else { return completion(.failed(.error, detail: "no URL to probe")) }
        let transfer: Transfer
        do {
            transfer = try Transfer(
                job: job, url: url, connectOnly: connectOnly, trustedCertificates: trustedCertificates,
                completion: completion)
        } catch {
            completion(.failed(.error, detail: error.message))
            return
        }
        let added = reachd_curl_multi_add_handle(multi, transfer.easy)
        guard added == CURLM_OK else {
            transfer.complete(.failed(.error, detail: String(cString: reachd_curl_multi_strerror(added))))
            return
        }
        transfers[transfer.easy] = transfer
    }

    /// curl's socket callback: watch `socket` for what it wants, or no more.
    private func socketChanged(_ socket: curl_socket_t, what: Int32) {
        switch what {
        case CURL_POLL_REMOVE: loop.unwatch(socket, for: self)
        default:
            loop.watch(
                socket, reading: what & CURL_POLL_IN != 0, writing: what & CURL_POLL_OUT != 0, for: self)
        }
    }

    /// curl's timer callback: -1 deletes the timer; 0 asks for a timeout action at once (never
    /// from inside the callback: the loop's next turn does it).
    private func timerChanged(_ milliseconds: Int) {
        curlDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
    }

    func ready(_ descriptor: Int32, readable: Bool, writable: Bool) {
        guard let multi else { return }
        var running: Int32 = 0
        let events = (readable ? CURL_CSELECT_IN : 0) | (writable ? CURL_CSELECT_OUT : 0)
        reachd_curl_multi_socket_action(multi, descriptor, events, &running)
    }

    /// Lets curl time out what is due, then completes every transfer it finished.
    func processTimeouts(now: ContinuousClock.Instant) {
        guard let multi else { return }
        if let deadline = curlDeadline, deadline <= now {
            curlDeadline = nil
            var running: Int32 = 0
            reachd_curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
        }
        var left: Int32 = 0
        while let message = reachd_curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = transfers.removeValue(forKey: easy)
            else { continue }
            let code = reachd_curl_msg_result(message)  // read before the handle is removed
            reachd_curl_multi_remove_handle(multi, easy)
            transfer.finish(code: code)
        }
    }

    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { curlDeadline }

    func shutdown() {
        guard let multi else { return }
        for (easy, transfer) in transfers {
            reachd_curl_multi_remove_handle(multi, easy)
            transfer.complete(.engineStopped)
        }
        transfers = [:]
        // Closes the connections curl kept (its callback unwatches them): before this object goes.
        reachd_curl_multi_cleanup(multi)
    }
}
