import CCurl

/// Asks libcurl's own URL parser whether it takes a URL, so a spec accepted at start is never one
/// the engine cannot even set (which would only show up as `error` at the first probe).
enum CurlURLCheck {
    static func accepts(_ url: String) -> Bool {
        guard let handle = curl_url() else { return false }
        defer { curl_url_cleanup(handle) }
        return curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK
    }
}
