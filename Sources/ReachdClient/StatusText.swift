import FoundationEssentials
package import Reachable

/// Human-readable status lines. Every line shows control characters escaped (`\x1b`): names in
/// the document come from the kernel, which allows them in an interface name, and a terminal
/// must not take one for a command.
package enum StatusText {
    package static func summary(_ status: ReachabilityStatus) -> String {
        let path = status.path
        let transports = Transport.allCases.filter { path.transport.contains($0) }.map(\.rawValue)
        var parts = [
            ReachabilityStatus.timestampStyle.format(status.changedAt), "#\(status.sequence)", path.state.rawValue,
        ]
        if path.isReachable {
            parts.append([path.ipv4 ? "ipv4" : nil, path.ipv6 ? "ipv6" : nil].compactMap { $0 }.joined(separator: "+"))
            parts.append("via " + (transports.isEmpty ? "-" : transports.joined(separator: ",")))
            if path.isDataMetered { parts.append("metered") }
        }
        // The cause right after the state: `unreachable — eth0 is down (no carrier)`.
        if let cause = status.cause { parts.append("— \(cause.text)") }
        var probes: [String] = []
        if !status.targets.isEmpty { probes.append(targetsSummary(status.targets)) }
        if status.connectivity.state != .disabled { probes.append(connectivitySummary(status.connectivity)) }
        if let uplinks = uplinksSummary(status.interfaces) { probes.append(uplinks) }
        if status.dns.state != .disabled { probes.append(dnsSummary(status.dns)) }
        return visible(([parts.joined(separator: " ")] + probes).joined(separator: ", "))
    }

    /// `targets 2/3 reachable (db no-route, web degraded: ipv6 timeout)`: the count, and which
    /// are not reachable or lost a family (the first few), so that a change of one target's reason
    /// still reads as a different line.
    package static func targetsSummary(_ targets: [TargetStatus]) -> String {
        let reachable = targets.count { $0.state == .reachable }
        let others = targets.filter { $0.state != .reachable } + targets.filter(\.degraded)
        var text = "targets \(reachable)/\(targets.count) reachable"
        if !others.isEmpty {
            let shown = others.prefix(3).map { target in
                target.degraded
                    ? "\(target.name) degraded: " + deadFamilies(target).joined(separator: ", ")
                    : "\(target.name) \(target.reason?.rawValue ?? target.state.rawValue)"
            }
            let more = others.count > shown.count ? ["+\(others.count - shown.count) more"] : []
            text += " (" + (shown + more).joined(separator: ", ") + ")"
        }
        return visible(text)
    }

    /// `connectivity limited (timeout)`, or `connectivity full degraded: ipv6 limited (timeout)`.
    package static func connectivitySummary(_ connectivity: ConnectivityStatus) -> String {
        var text = "connectivity " + stateText(connectivity.state.rawValue, connectivity.reason)
        if connectivity.degraded {
            let dead = AddressFamily.allCases.compactMap { family in
                connectivity[family].flatMap { $0.state == .full ? nil : familyText(family, $0) }
            }
            text += " degraded: " + dead.joined(separator: ", ")
        }
        return visible(text)
    }

    /// `uplinks 1/2 full (wan1 limited (timeout))` under `--per-uplink` (a degraded uplink is not
    /// counted full: `wan1 full degraded: ipv6 limited (timeout)`); `nil` without any uplink checked.
    package static func uplinksSummary(_ interfaces: [InterfaceStatus]) -> String? {
        let checked = interfaces.compactMap { interface in interface.connectivity.map { (interface.name, $0) } }
        guard !checked.isEmpty else { return nil }
        let full = checked.count { $0.1.state == .full && !$0.1.degraded }
        let others = checked.filter { $0.1.state != .full || $0.1.degraded }.map { name, connectivity in
            connectivity.degraded
                ? "\(name) " + connectivitySummary(connectivity).dropFirst("connectivity ".count)
                : "\(name) " + stateText(connectivity.state.rawValue, connectivity.reason)
        }
        return "uplinks \(full)/\(checked.count) full"
            + (others.isEmpty ? "" : " (" + others.joined(separator: ", ") + ")")
    }

    /// `dns ok`, or which servers fail: `dns degraded (10.96.0.11 timeout)`,
    /// `dns failing (no-servers)`.
    package static func dnsSummary(_ dns: DNSStatus) -> String {
        var text = "dns \(dns.state.rawValue)"
        let failing = dns.servers.filter { $0.state == .failing }
        if !failing.isEmpty {
            let shown = failing.prefix(3).map { "\($0.address) \($0.reason?.rawValue ?? $0.state.rawValue)" }
            let more = failing.count > shown.count ? ["+\(failing.count - shown.count) more"] : []
            text += " (" + (shown + more).joined(separator: ", ") + ")"
        } else if let reason = dns.reason {
            text += " (\(reason.rawValue))"
        }
        return visible(text)
    }

    /// `  target db tcp://db.internal:5432 reachable via eth0 [198.18.1.10] since …`, or
    /// `… unreachable (no-route) [198.18.1.10] since …`; with each family once they are known, the
    /// address it probed and its interface: `… reachable degraded via eth0 [198.18.1.10,
    /// 2001:db8::10] since …; ipv4 reachable 198.18.1.10 via eth0, ipv6 unreachable (timeout)
    /// 2001:db8::10 via eth0`. A pinned target is named as it was given: `db@wan1`; one probed
    /// through a proxy says so before the proxy's interface and addresses: `… reachable through
    /// http://198.18.0.1:3128 via eth0 [198.18.0.1] …`.
    package static func line(_ target: TargetStatus) -> String {
        var parts = [
            "  target", target.via.map { "\(target.name)@\($0)" } ?? target.name, target.url,
            stateText(target.state.rawValue, target.reason, target.detail),
        ]
        if target.degraded { parts.append("degraded") }
        if let proxy = target.proxy { parts.append("through \(proxy)") }
        if let interface = target.interface { parts.append("via \(interface)") }
        if !target.addresses.isEmpty { parts.append(addressList(target.addresses)) }
        parts.append(sinceText(target.since))
        let families = AddressFamily.allCases.compactMap { family in target[family].map { familyText(family, $0) } }
        let text = parts.joined(separator: " ") + (families.isEmpty ? "" : "; " + families.joined(separator: ", "))
        return visible(text)
    }

    /// `  targets file /etc/reachd/targets applied 2026-11-27T06:00:00.000Z`, and when its last
    /// read was refused: `… not applied: line 3: invalid target "oops"`.
    package static func line(_ file: TargetsFileStatus) -> String {
        var text = "  targets file \(file.path) applied \(ReachabilityStatus.timestampStyle.format(file.appliedAt))"
        if let error = file.error { text += "; last read not applied: \(error)" }
        return visible(text)
    }

    /// `  connectivity full http://check.example/generate_204 since …`, or `… limited (timeout)
    /// …`; with each family once checked: `…; ipv4 full, ipv6 limited (timeout)`; through a proxy
    /// `… http://check.example/generate_204 through http://198.18.0.1:3128 since …`.
    package static func line(_ connectivity: ConnectivityStatus) -> String {
        var parts = ["  connectivity", stateText(connectivity.state.rawValue, connectivity.reason)]
        if connectivity.degraded { parts.append("degraded") }
        if let url = connectivity.url { parts.append(url) }
        if let proxy = connectivity.proxy { parts.append("through \(proxy)") }
        parts.append(sinceText(connectivity.since))
        let families = AddressFamily.allCases.compactMap { family in
            connectivity[family].map { familyText(family, $0) }
        }
        let text = parts.joined(separator: " ") + (families.isEmpty ? "" : "; " + families.joined(separator: ", "))
        return visible(text)
    }

    /// `  dns degraded kubernetes.default.svc.cluster.local. since …`, or `  dns failing
    /// (no-servers) … since …`; each nameserver on a line of its own after it.
    package static func line(_ dns: DNSStatus) -> String {
        var parts = ["  dns", dns.state.rawValue]
        if let reason = dns.reason { parts.append("(\(reason.rawValue))") }
        if let name = dns.name { parts.append(name) }
        parts.append(sinceText(dns.since))
        return visible(parts.joined(separator: " "))
    }

    /// `    nameserver 10.96.0.10 failing (timeout) since …`.
    package static func line(_ server: NameserverStatus) -> String {
        var parts = ["    nameserver", server.address, server.state.rawValue]
        if let reason = server.reason { parts.append("(\(reason.rawValue))") }
        parts.append(sinceText(server.since))
        return visible(parts.joined(separator: " "))
    }

    /// `since 2026-11-21T22:00:00.123Z`: when the thing's state last changed.
    private static func sinceText(_ since: Date) -> String {
        "since " + ReachabilityStatus.timestampStyle.format(since)
    }

    /// The families of a degraded target that are down or impaired: `ipv6 timeout`, `ipv4 loss mtu`.
    private static func deadFamilies(_ target: TargetStatus) -> [String] {
        AddressFamily.allCases.compactMap { family in
            target[family].flatMap { status in
                if status.state == .unreachable {
                    return "\(family.rawValue) \(status.reason?.rawValue ?? status.state.rawValue)"
                }
                guard status.state == .reachable, !status.impairments.isEmpty else { return nil }
                return "\(family.rawValue) " + status.impairments.map(\.rawValue).joined(separator: " ")
            }
        }
    }

    /// `ipv6 unreachable (timeout) 2001:db8::10 via eth0`: the address probed and its interface
    /// when the family has a routable one; `ipv4 reachable impaired: loss, mtu …` when its path is.
    private static func familyText(_ family: AddressFamily, _ status: TargetFamilyStatus) -> String {
        var parts = [family.rawValue, stateText(status.state.rawValue, status.reason, status.detail)]
        if !status.impairments.isEmpty {
            parts.append("impaired: " + status.impairments.map(\.rawValue).joined(separator: ", "))
        }
        if let address = status.address { parts.append(address) }
        if let interface = status.interface { parts.append("via \(interface)") }
        return parts.joined(separator: " ")
    }

    /// `ipv6 limited (timeout)`.
    private static func familyText(_ family: AddressFamily, _ status: ConnectivityFamilyStatus) -> String {
        "\(family.rawValue) " + stateText(status.state.rawValue, status.reason, status.detail)
    }

    /// `unreachable (no-route)`, or just the state when there is no reason.
    /// With the failure in words when there is one: `unreachable (refused: ECONNREFUSED: connection refused)`.
    private static func stateText(_ state: String, _ reason: ProbeFailureReason?, _ detail: String? = nil) -> String {
        guard let reason else { return state }
        return "\(state) (\(reason.rawValue)" + (detail.map { ": \($0)" } ?? "") + ")"
    }

    /// `[198.18.1.10, 2001:db8::10]`; a name with dozens of addresses shows the first four.
    private static func addressList(_ addresses: [String]) -> String {
        let shown = addresses.prefix(4)
        let more = addresses.count > shown.count ? ["+\(addresses.count - shown.count) more"] : []
        return "[" + (Array(shown) + more).joined(separator: ", ") + "]"
    }

    /// `  wan1 (veth) up default-route 198.18.2.2/24, connectivity limited (timeout)`: an uplink's
    /// own check (`--per-uplink`) after its addresses.
    package static func line(_ interface: InterfaceStatus) -> String {
        let route = interface.isDefaultRoute ? " default-route" : ""
        let addresses = interface.addresses.isEmpty ? "" : " " + interface.addresses.joined(separator: " ")
        let checked = interface.connectivity.map { ", " + connectivitySummary($0) } ?? ""
        return visible(
            "  \(interface.name) (\(interface.kind ?? interface.transport.rawValue)) \(interface.operState)\(route)\(addresses)\(checked)"
        )
    }

    /// `text` with C0 and C1 control characters and DEL written as `\xHH`.
    package static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + (hex.count < 2 ? "0" : "") + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
