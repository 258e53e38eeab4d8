import CProbeLibraries
import Glibc
import Reachable

/// One probe job on its libcurl easy handle: the options that make it a probe, the bounded body
/// check, and the outcome read back when curl is done. Lives on the engine thread only.
final class Transfer {
    let easy: UnsafeMutableRawPointer
    let job: ProbeJob
    /// `tcp://`: the handshake is the whole probe.
    private let connectOnly: Bool
    private let completion: @Sendable (ProbeOutcome) -> Void
    /// Owned by this transfer: curl keeps pointers to both until the handle is cleaned up.
    private var connectTo: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    /// The interface a pinned job's sockets are bound to, for `bindToInterface`; freed with the transfer.
    private var pinnedInterface: UnsafeMutablePointer<CChar>?
    /// Body bytes compared with the expected prefix so far.
    private var compared = 0
    private var prefixMatched: Bool?
    /// The write callback stopped the transfer on purpose (reading more would change nothing).
    private var stoppedReading = false
    private var finished = false

    /// Creates and configures the easy handle.
    ///
    /// - Throws: when curl refuses an option (the job would otherwise run without it).
    init(
        job: ProbeJob, url: String, connectOnly: Bool, trustedCertificates: String?,
        completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) throws(TransferSetupError) {
        guard let easy = reachd_curl_easy_init() else { throw TransferSetupError("curl_easy_init failed") }
        self.easy = easy
        self.job = job
        self.connectOnly = connectOnly
        self.completion = completion
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try configure(url: url)
        if let trustedCertificates { try set(CURLOPT_CAINFO, trustedCertificates) }
    }

    deinit {
        reachd_curl_easy_cleanup(easy)
        reachd_curl_slist_free_all(connectTo)
        errorBuffer.deallocate()
        free(pinnedInterface)
    }

    /// Binds each socket curl opens to the pinned interface (its name is the callback's data).
    /// A failure fails the transfer: it must never leave through another interface.
    private static let bindToInterface: curl_sockopt_callback = { data, descriptor, _ in
        guard let name = data?.assumingMemoryBound(to: CChar.self) else { return CURL_SOCKOPT_ERROR }
        let bound = setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(strlen(name) + 1))
        return bound == 0 ? CURL_SOCKOPT_OK : CURL_SOCKOPT_ERROR
    }

    /// - Parameter url: the URL curl is given (`CurlProbeKind.requestURL`).
    private func configure(url: String) throws(TransferSetupError) {
        guard let port = job.url.port else { throw TransferSetupError("no URL to probe") }
        let remaining = max(1, (job.deadline - .now).roundedUpMilliseconds)
        try set(CURLOPT_URL, url)
        if let proxy = job.proxy {
            try setProxy(proxy)
        } else {
            // Connect to exactly the routed address, whatever the URL's host: an empty HOST and PORT
            // match this handle's only URL. A literal needs no resolver, so curl never asks DNS itself.
            connectTo = reachd_curl_slist_append(nil, "::\(job.address.urlHost):\(port)")
            guard connectTo != nil else { throw TransferSetupError("curl_slist_append failed") }
            try set(CURLOPT_CONNECT_TO, slist: connectTo)
            // A proxy from the environment would defeat pinning: reachd chose none (`ProxyChoice`).
            try set(CURLOPT_PROXY, "")
        }
        // Nothing worth caching: the address is a literal. curl 7.88 keeps every "address:port" it
        // looked up in the multi handle's DNS cache for 60 s and walks the whole cache before each
        // transfer to prune it — with many targets that walk was most of reachd's CPU
        // (docs/scale.md). With 0 an entry lives only while its transfer uses it, so the walk is
        // over what is in flight.
        try set(CURLOPT_DNS_CACHE_TIMEOUT, 0)
        // Total time, connect and TLS included. curl's default connect timeout (300 s) is longer.
        try set(CURLOPT_TIMEOUT_MS, Int(remaining))
        // Threads and signals: never let curl use SIGALRM (it is not the process's only thread).
        try set(CURLOPT_NOSIGNAL, 1)
        // Only web probes: a server cannot redirect (not followed anyway) or trick us into FILE, FTP…
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_FOLLOWLOCATION, 0)
        // Every probe makes its own connection: a reused one would hide a network that broke since.
        try set(CURLOPT_FRESH_CONNECT, 1)
        try set(CURLOPT_FORBID_REUSE, 1)
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        try set(CURLOPT_USERAGENT, "reachd")
        // A probe reads a status line and at most a short body prefix: curl's smallest receive
        // buffer (1 KiB, not 16) — every transfer of a round is in flight at once (docs/scale.md).
        try set(CURLOPT_BUFFERSIZE, 1024)
        if let interface = job.egress.interface {
            if let source = job.sourceAddress {
                // Pinned from a source address, so that rules selecting a table by source apply:
                // curl binds the address (`host!`), the socket callback binds the interface
                // (`SO_BINDTODEVICE`, before curl's bind); curl 7.88 has no `ifhost!` for both.
                pinnedInterface = strdup(interface)
                try set(CURLOPT_INTERFACE, "host!\(source)")
                try check(reachd_curl_easy_setopt_sockopt_function(easy, Transfer.bindToInterface))
                try set(CURLOPT_SOCKOPTDATA, pointer: UnsafeMutableRawPointer(pinnedInterface!))
            } else {
                // Pinned: the socket is bound to the interface (`SO_BINDTODEVICE`; `if!` never
                // takes the name for an address or host name).
                try set(CURLOPT_INTERFACE, "if!\(interface)")
            }
        }
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        if connectOnly {
            try set(CURLOPT_CONNECT_ONLY, 1)
        } else {
            try check(reachd_curl_easy_setopt_write_function(easy, Transfer.write))
            try set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(self).toOpaque())
        }
    }

    /// Receives body bytes. Keeps nothing but a comparison position: returns early (which makes curl
    /// end the transfer with `CURLE_WRITE_ERROR`) as soon as the answer is decided, so a 10 MB body is
    /// never read, let alone buffered.
    private static let write: curl_write_callback = { data, size, count, context in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        guard let expected = transfer.job.expectedBodyPrefix, transfer.prefixMatched == nil, let data else {
            transfer.stoppedReading = true
            return 0  // the status line is all a target needs
        }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        for byte in bytes {
            if byte != expected[transfer.compared] {
                transfer.prefixMatched = false
                break
            }
            transfer.compared += 1
            if transfer.compared == expected.count {
                transfer.prefixMatched = true
                break
            }
        }
        if transfer.prefixMatched != nil {
            transfer.stoppedReading = true
            return 0
        }
        return length
    }

    /// Builds the outcome from curl's result code and calls the completion (once).
    func finish(code: CURLcode) {
        let answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && stoppedReading)
        var socketErrno = 0
        if !answered { _ = reachd_curl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &socketErrno) }
        var outcome = ProbeOutcome(
            failure: answered ? nil : CurlFailure.reason(for: code, socketErrno: Int32(clamping: socketErrno)),
            timings: timings())
        // The TCP handshake is the round trip of a tcp or http probe (the name was never looked up
        // by curl: the engine pinned the address).
        let handshake = outcome.timings.connect - outcome.timings.nameLookup
        if outcome.timings.connect > .zero, handshake >= .zero { outcome.quality.roundTrips = [handshake] }
        if answered, !connectOnly {
            var status = 0
            _ = reachd_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            outcome.statusCode = status
            if !(200...399).contains(status) { outcome.failure = .httpStatus }
            // The proxy's own refusal of a request it would relay (an `https://` one is a `CONNECT`).
            if job.proxy != nil, status == 407 { outcome.failure = .proxy }
            if job.expectedBodyPrefix != nil { outcome.bodyPrefixMatched = prefixMatched ?? false }
        }
        if let refusal = proxyRefusal() {
            outcome.failure = .proxy
            outcome.detail = refusal
        } else if let failure = outcome.failure {
            outcome.detail = FailureDetail.transfer(
                failure, code: code, statusCode: outcome.statusCode, socketErrno: Int32(clamping: socketErrno),
                message: String(cString: errorBuffer), timings: outcome.timings, usesTLS: job.url.scheme == .https)
        }
        complete(outcome)
    }

    /// Ends the job without curl's verdict (the deadline passed before it started, or the engine stops).
    func complete(_ outcome: ProbeOutcome) {
        guard !finished else { return }
        finished = true
        completion(outcome)
    }

    private func timings() -> ProbeTimings {
        func read(_ info: CURLINFO) -> Duration {
            var microseconds: curl_off_t = 0
            _ = reachd_curl_easy_getinfo_off_t(easy, info, &microseconds)
            return .microseconds(microseconds)
        }
        return ProbeTimings(
            nameLookup: read(CURLINFO_NAMELOOKUP_TIME_T), connect: read(CURLINFO_CONNECT_TIME_T),
            appConnect: read(CURLINFO_APPCONNECT_TIME_T), total: read(CURLINFO_TOTAL_TIME_T))
    }

    func set(_ option: CURLoption, _ value: Int) throws(TransferSetupError) {
        try check(reachd_curl_easy_setopt_long(easy, option, value))
    }

    func set(_ option: CURLoption, _ value: String) throws(TransferSetupError) {
        try check(reachd_curl_easy_setopt_string(easy, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) throws(TransferSetupError) {
        try check(reachd_curl_easy_setopt_pointer(easy, option, pointer))
    }

    func set(_ option: CURLoption, slist: UnsafeMutablePointer<curl_slist>?) throws(TransferSetupError) {
        try check(reachd_curl_easy_setopt_slist(easy, option, slist))
    }

    func check(_ code: CURLcode) throws(TransferSetupError) {
        guard code == CURLE_OK else { throw TransferSetupError(String(cString: reachd_curl_easy_strerror(code))) }
    }
}

/// A job that could not even be set up (reported to its completion as `error`).
struct TransferSetupError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
