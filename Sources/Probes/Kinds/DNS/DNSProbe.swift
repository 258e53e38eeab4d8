import Glibc
import Reachable

extension TargetURL.Scheme {
    /// A nameserver answers a query with the records wanted.
    public static let dns: Self = "dns"
}

/// `dns://SERVER[:PORT]/NAME[?type=T][&expect=V]`: one query to a nameserver the system may not
/// list (a cluster's DNS service, a split-horizon server), asked alone, once, with no search
/// list, through the nameserver check's c-ares channels on the engine loop. SERVER is an IP
/// literal, so the pipeline resolves nothing and routes SERVER: its one family is SERVER's.
public enum DNSProbe: ProbeKind {
    public static let schemes: [TargetURL.Scheme] = [.dns]

    public static func parts(
        _ scheme: TargetURL.Scheme, port: UInt16?, remainder: String
    ) -> Result<(port: UInt16?, path: String), SpecError.Problem> {
        DNSTargetQuery.parse(remainder).map { _ in (port ?? 53, remainder) }
    }

    /// SERVER is asked, not resolved: a name there would need a nameserver to find the nameserver.
    public static func refusal(of url: TargetURL) -> SpecError.Problem? {
        url.literal == nil
            ? .kindRule("the server must be an IP address (IPv6 in brackets: dns://[2001:db8::53]/NAME)") : nil
    }

    public static func probe(
        _ job: ProbeJob, on engine: ProbeEngine, completion: @escaping @Sendable (ProbeOutcome) -> Void
    ) -> Bool {
        guard case .success(let query) = DNSTargetQuery.parse(job.url.path) else {
            completion(.failed(.error, detail: "not a dns:// query"))  // refused at start: never here
            return true
        }
        let way = ResolverWay(
            job.egress, ipv4Source: job.address.isIPv6 ? nil : job.sourceAddress,
            ipv6Source: job.address.isIPv6 ? job.sourceAddress : nil)
        let question = NameserverQuestion(
            server: job.address, port: job.url.port, name: query.name, type: query.type.number,
            way: job.egress.interface == nil ? ResolverWay() : way, hearsRouterErrors: true)
        let timeout = max(job.deadline - .now, .milliseconds(1))
        return engine.askNameserver(question, timeout: timeout) { answer in
            completion(outcome(of: answer, for: query))
        }
    }

    /// What one answer means for the target: `dns` with the contract's detail for an answer that
    /// is not the one wanted, the socket's reason when none came.
    static func outcome(of answer: NameserverAnswer, for query: DNSTargetQuery) -> ProbeOutcome {
        if answer.wasCancelled { return ProbeOutcome(failure: .error, detail: answer.detail, wasCancelled: true) }
        guard let bytes = answer.message else {
            switch (answer.failure, answer.socketError) {
            case (.timeout, _): return .failed(.timeout, detail: "no answer within the timeout")
            case (_, ECONNREFUSED): return .failed(.refused, detail: FailureDetail.errno(ECONNREFUSED))
            case (_, EHOSTUNREACH), (_, ENETUNREACH):
                return .failed(.hostUnreachable, detail: FailureDetail.errno(answer.socketError))
            case (_, let code) where code != 0: return .failed(.error, detail: FailureDetail.errno(code))
            default: return .failed(.error, detail: answer.detail)
            }
        }
        guard let message = DNSMessage(bytes, type: query.type) else {
            return .failed(.error, detail: "a malformed answer from \(answer.server)")
        }
        switch message.rcode {
        case 0: break
        case 3: return .failed(.dns, detail: "NXDOMAIN from \(answer.server)")
        default: return .failed(.dns, detail: rcodeNames[message.rcode] ?? "rcode \(message.rcode)")
        }
        guard !message.values.isEmpty else { return .failed(.dns, detail: "no \(query.type.rawValue) records") }
        guard let expected = query.expected, !message.values.contains(expected) else { return .succeeded }
        return .failed(.dns, detail: "\(listed(message.values)), expected \(expected)")
    }

    /// The values found, sorted (a server that rotates its records must not change the detail,
    /// and so the document, on every probe), at most three, each cut at 100 characters (a TXT
    /// record may hold 64 KiB, and the server chooses it).
    static func listed(_ values: [DNSValue]) -> String {
        let sorted = Set(values).sorted()
        let shown = sorted.prefix(3).map { value in
            let text = value.description
            return text.count > 100 ? text.prefix(100) + "…" : text
        }.joined(separator: ", ")
        return sorted.count > 3 ? "\(shown) and \(sorted.count - 3) more" : shown
    }

    private static let rcodeNames: [UInt8: String] = [1: "FORMERR", 2: "SERVFAIL", 4: "NOTIMP", 5: "REFUSED"]
}
