import FoundationEssentials
import Reachable

/// The nameservers of resolv.conf, as the system's resolver (glibc) reads them: `nameserver`
/// lines in order, the first three (`MAXNS`), IP literals only; comments start with `#` or `;`.
enum ResolvConf {
    /// glibc's `MAXNS`: later `nameserver` lines are ignored by the system's resolver.
    static let maximumServers = 3

    /// The nameservers in `text`, de-duplicated, in order.
    static func nameservers(in text: String) -> [IPAddress] {
        var servers: [IPAddress] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            // A link-local IPv6 server may carry its zone (`fe80::1%eth0`): the address is before it.
            let literal = words[1].split(separator: "%", maxSplits: 1).first.map(String.init) ?? ""
            guard let address = IPAddress(literal), !servers.contains(address) else { continue }
            servers.append(address)
            if servers.count == maximumServers { break }
        }
        return servers
    }

    /// The nameservers of the file at `path`; none when it cannot be read (DNS is then `failing`
    /// with `no-servers`, as the system's resolver would have no server to ask either).
    static func nameservers(atPath path: String) -> [IPAddress] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return nameservers(in: String(decoding: data, as: UTF8.self))
    }
}
