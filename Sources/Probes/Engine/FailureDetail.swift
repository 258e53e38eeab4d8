import CProbeLibraries
import Glibc
import Reachable

/// A failed probe in the document's words (`detail`): short, and the same for the same kind of
/// failure — never a duration or a counter, since a change of `detail` alone is a change of
/// the document.
enum FailureDetail {
    /// A finished transfer that failed.
    ///
    /// - Parameters:
    ///   - socketErrno: curl's `CURLINFO_OS_ERRNO`, 0 when it recorded none.
    ///   - message: curl's own message (`CURLOPT_ERRORBUFFER`), empty when it wrote none.
    static func transfer(
        _ failure: ProbeFailureReason, code: CURLcode, statusCode: Int?, socketErrno: Int32, message: String,
        timings: ProbeTimings, usesTLS: Bool
    ) -> String {
        switch failure {
        case .httpStatus:
            return "HTTP \(statusCode ?? 0)"
        case .proxy:
            return "proxy answered \(statusCode ?? 0)\(statusCode == 407 ? ": proxy authentication required" : "")"
        case .timeout:
            if timings.connect == .zero { return "no connection within the timeout" }
            if usesTLS && timings.appConnect == .zero { return "no TLS handshake within the timeout" }
            return "no answer within the timeout"
        case .tls:
            // OpenSSL's verification result reads "SSL certificate problem: certificate has expired".
            let prefix = "SSL certificate problem: "
            if message.hasPrefix(prefix) { return String(message.dropFirst(prefix.count)) }
            return message.isEmpty ? curlWords(code) : message
        default:
            if socketErrno != 0 { return errno(socketErrno) }
            return message.isEmpty ? curlWords(code) : message
        }
    }

    /// `ECONNREFUSED: connection refused`: the name a person searches for, and its words.
    static func errno(_ code: Int32) -> String {
        let words = String(cString: strerror(code))
        let lowered = (words.first.map { String($0).lowercased() } ?? "") + words.dropFirst()
        guard let name = errnoNames[code] else { return "errno \(code): \(lowered)" }
        return "\(name): \(lowered)"
    }

    /// A name that did not resolve, by c-ares' status, and who said so (the nameservers asked).
    static func dns(status: Int32, servers: [String]) -> String {
        let what: String
        switch status {
        case ARES_ENOTFOUND, ARES_ENONAME: what = "NXDOMAIN"
        case ARES_ENODATA: what = "no address for the name"
        case ARES_ESERVFAIL: what = "SERVFAIL"
        case ARES_EREFUSED: what = "REFUSED"
        case ARES_EFORMERR: what = "FORMERR"
        case ARES_ENOTIMP: what = "NOTIMP"
        case ARES_EBADRESP: what = "a malformed answer"
        case ARES_ETIMEOUT: what = "no answer within the timeout"
        case ARES_EBADNAME: return "not a valid name"
        // c-ares 1.18 reports every socket error so (a closed port, no route, a router's ICMP
        // error): which one is not known, and ECONNREFUSED would name one that may not be it.
        case ARES_ECONNREFUSED:
            return servers.isEmpty ? "could not contact the nameservers" : "could not contact \(list(servers))"
        default: what = String(cString: reachd_ares_strerror(status))
        }
        return servers.isEmpty ? what : "\(what) from \(list(servers))"
    }

    /// A name that did not resolve because the kernel has no usable route to any of the
    /// nameservers: nothing could be sent, whatever c-ares made of it.
    static func noRoute(toNameservers servers: [IPAddress]) -> String {
        let nameservers = servers.count == 1 ? "the nameserver" : "the nameservers"
        return "no route to \(nameservers) \(list(servers.map(\.description)))"
    }

    private static func list(_ servers: [String]) -> String {
        servers.joined(separator: ", ")
    }

    private static func curlWords(_ code: CURLcode) -> String {
        String(cString: reachd_curl_easy_strerror(code))
    }

    /// The errnos a connect or a transfer reports.
    private static let errnoNames: [Int32: String] = [
        ECONNREFUSED: "ECONNREFUSED", EHOSTUNREACH: "EHOSTUNREACH", ENETUNREACH: "ENETUNREACH",
        EHOSTDOWN: "EHOSTDOWN", ENONET: "ENONET", ENOPROTOOPT: "ENOPROTOOPT", ETIMEDOUT: "ETIMEDOUT",
        ECONNRESET: "ECONNRESET", ECONNABORTED: "ECONNABORTED", EPIPE: "EPIPE", EADDRNOTAVAIL: "EADDRNOTAVAIL",
        EACCES: "EACCES", EPERM: "EPERM", ENETDOWN: "ENETDOWN", EMSGSIZE: "EMSGSIZE",
    ]
}
