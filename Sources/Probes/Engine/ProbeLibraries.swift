import CProbeLibraries

/// libcurl and c-ares, loaded on first use and initialised once for the process (Swift runs a
/// static initialiser exactly once, thread-safely). A reachd without probes never loads them.
enum ProbeLibraries {
    /// `nil` when ready, else why not (which library or function is missing).
    static let failure: String? = {
        var message = [CChar](repeating: 0, count: 256)
        guard reachd_probe_libraries_load(&message, message.count) == 0 else {
            return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        guard reachd_curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK else { return "curl_global_init failed" }
        guard reachd_ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS else { return "ares_library_init failed" }
        return nil
    }()
}
