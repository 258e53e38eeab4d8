import CProbeLibraries
import Reachable

/// libcurl's transfers on the engine's multi handle, as a driver of the engine loop: curl waits
/// on its own descriptors and timers inside `curl_multi_poll`, so this driver only starts
/// transfers and, each turn of the loop, lets curl work and collects what finished.
/// Engine thread only.
final class CurlTransfers: EngineDriver {
    private let multi: UnsafeMutableRawPointer
    private let trustedCertificates: String?
    private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]

    init(settings: EngineSettings) {
        multi = settings.multi
        trustedCertificates = settings.trustedCertificates
    }

    /// Starts one TCP connect or HTTP(S) request; `completion` is called once.
    func start(_ job: ProbeJob, connectOnly: Bool, completion: @escaping @Sendable (ProbeOutcome) -> Void) {
        guard job.deadline > .now else {
            completion(.failed(.timeout, detail: "no time left to probe"))
            return
        }
        let transfer: Transfer
        do {
            transfer = try Transfer(
                job: job, connectOnly: connectOnly, trustedCertificates: trustedCertificates, completion: completion)
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

    /// Lets curl read, write and time out, then completes every transfer it finished.
    func processTimeouts(now: ContinuousClock.Instant) {
        var running: Int32 = 0
        reachd_curl_multi_perform(multi, &running)
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

    /// curl adds its own descriptors to `curl_multi_poll`.
    func appendWaitDescriptors(to descriptors: inout [curl_waitfd]) {}

    /// curl shortens the poll to its own timers.
    func nextWakeUp(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { nil }

    /// Ready descriptors of curl's are handled by the next `processTimeouts` (`curl_multi_perform`).
    func process(_ descriptors: [curl_waitfd]) {}

    func shutdown() {
        let cancelled = ProbeOutcome.engineStopped
        for (easy, transfer) in transfers {
            reachd_curl_multi_remove_handle(multi, easy)
            transfer.complete(cancelled)
        }
        transfers = [:]
    }
}
