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
        var probes: [String] = []
        if !status.targets.isEmpty { probes.append(targetsSummary(status.targets)) }
        if status.connectivity.state != .disabled {
            probes.append("connectivity " + stateText(status.connectivity.state.rawValue, status.connectivity.reason))
        }
        return visible(([parts.joined(separator: " ")] + probes).joined(separator: ", "))
    }

    /// `targets 2/3 reachable (db no-route)`: the count, and which are not reachable (the first
    /// few), so that a change of one target's reason still reads as a different line.
    package static func targetsSummary(_ targets: [TargetStatus]) -> String {
        let reachable = targets.count { $0.state == .reachable }
        let others = targets.filter { $0.state != .reachable }
        var text = "targets \(reachable)/\(targets.count) reachable"
        if !others.isEmpty {
            let shown = others.prefix(3).map { "\($0.name) \($0.reason?.rawValue ?? $0.state.rawValue)" }
            let more = others.count > shown.count ? ["+\(others.count - shown.count) more"] : []
            text += " (" + (shown + more).joined(separator: ", ") + ")"
        }
        return visible(text)
    }

    /// `  target db tcp://db.internal:5432 reachable via eth0 [198.18.1.10]`, or
    /// `… unreachable (no-route) [198.18.1.10]`.
    package static func line(_ target: TargetStatus) -> String {
        var parts = ["  target", target.name, target.url, stateText(target.state.rawValue, target.reason)]
        if let interface = target.interface { parts.append("via \(interface)") }
        if !target.addresses.isEmpty { parts.append(addressList(target.addresses)) }
        return visible(parts.joined(separator: " "))
    }

    /// `  connectivity full http://check.example/generate_204`, or `… limited (timeout) …`.
    package static func line(_ connectivity: ConnectivityStatus) -> String {
        let state = stateText(connectivity.state.rawValue, connectivity.reason)
        return visible((["  connectivity", state] + (connectivity.url.map { [$0] } ?? [])).joined(separator: " "))
    }

    /// `unreachable (no-route)`, or just the state when there is no reason.
    private static func stateText(_ state: String, _ reason: ProbeFailureReason?) -> String {
        reason.map { "\(state) (\($0.rawValue))" } ?? state
    }

    /// `[198.18.1.10, 2001:db8::10]`; a name with dozens of addresses shows the first four.
    private static func addressList(_ addresses: [String]) -> String {
        let shown = addresses.prefix(4)
        let more = addresses.count > shown.count ? ["+\(addresses.count - shown.count) more"] : []
        return "[" + (Array(shown) + more).joined(separator: ", ") + "]"
    }

    package static func line(_ interface: InterfaceStatus) -> String {
        let route = interface.isDefaultRoute ? " default-route" : ""
        let addresses = interface.addresses.isEmpty ? "" : " " + interface.addresses.joined(separator: " ")
        return visible(
            "  \(interface.name) (\(interface.kind ?? interface.transport.rawValue)) \(interface.operState)\(route)\(addresses)"
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
