import CProbeLibraries

/// Asks libcurl's own URL parser whether it takes a URL, so a spec accepted at start is never one
/// the engine cannot even set (which would only show up as `error` at the first probe).
enum CurlURLCheck {
    /// Without libcurl (not installed) nothing is checked here: the engine then refuses to start,
    /// saying which library is missing, which is the more useful message.
    static func accepts(_ url: String) -> Bool {
        guard ProbeLibraries.failure == nil else { return true }
        guard let handle = reachd_curl_url() else { return false }
        defer { reachd_curl_url_cleanup(handle) }
        return reachd_curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK
    }
}
