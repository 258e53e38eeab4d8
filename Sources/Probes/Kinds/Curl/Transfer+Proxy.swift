import CProbeLibraries
import Reachable

/// A web probe through an HTTP proxy: libcurl does the proxying (a `CONNECT` tunnel for
/// `https://`, an absolute-URI request for `http://`); reachd chose the proxy and resolved and
/// routed it (`ProxyChoice`, `ProbeEndpoint`), so curl is told exactly that and nothing else.
extension Transfer {
    /// Sends the request through `proxy`, at the address the pipeline routed.
    func setProxy(_ proxy: ProxyURL) throws(TransferSetupError) {
        // The routed address, not the proxy's name: curl connects where the route question was asked.
        try set(CURLOPT_PROXY, proxy.curlURL(at: job.address))
        try set(CURLOPT_PROXYTYPE, Int(CURLPROXY_HTTP.rawValue))
        // curl would read `no_proxy` from the environment again: reachd has decided already.
        try set(CURLOPT_NOPROXY, "")
        // Apart, not in the URL: no escaping to get wrong, and the URL curl holds has no secret.
        if let username = proxy.username { try set(CURLOPT_PROXYUSERNAME, username) }
        if let password = proxy.password { try set(CURLOPT_PROXYPASSWORD, password) }
    }

    /// `proxy answered 403 to CONNECT dual.test:8443` when the proxy would not open the tunnel
    /// (any answer but 2xx to the `CONNECT`), else `nil`.
    func proxyRefusal() -> String? {
        guard job.proxy != nil else { return nil }
        var code = 0
        _ = reachd_curl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &code)
        guard code != 0, !(200...299).contains(code), let authority = job.url.authority else { return nil }
        return "proxy answered \(code) to CONNECT \(authority)"
    }
}
