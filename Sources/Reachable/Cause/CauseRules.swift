import FoundationEssentials

/// The rules that name the cause: the first layer of `Cause.Layer`'s order that fails, as the
/// contract's table says ("The cause first"). Pure — a function of the document and the
/// monitor's `CauseMemory` — so every row is table-tested without a kernel (`CauseRulesTests`).
///
/// Within a layer a failure of both families comes before one family's, then IPv6's before
/// IPv4's, then the first subject in document order. `since` is the caller's: the returned cause
/// carries `status.changedAt`, and the monitor keeps the last one's while it is the same cause.
public enum CauseRules {
    public static func cause(of status: ReachabilityStatus, remembering memory: CauseMemory) -> Cause? {
        // The targets are surveyed only when no routing layer fails: a link-down's document need
        // not walk every target's entry to name its interface.
        let found = routing(status, memory) ?? aboveTheRoutes(status, memory)
        return found.map {
            Cause(layer: $0.layer, family: $0.family, subject: $0.subject, text: $0.text, since: status.changedAt)
        }
    }

    /// The layers from `dns` up, in order.
    private static func aboveTheRoutes(_ status: ReachabilityStatus, _ memory: CauseMemory) -> Finding? {
        let targets = TargetSurvey(status.targets, isPathFailure: isPathFailure)
        if let found = dns(status, targets) ?? path(status, targets) ?? portal(status) ?? check(status) {
            return found
        }
        return target(status, targets) ?? uplink(status) ?? quality(status, targets) ?? config(status, memory)
            ?? oneNameserver(status)
    }

    /// A cause before its `since`.
    struct Finding {
        var layer: Cause.Layer
        var family: AddressFamily?
        var subject: String?
        var text: String
    }

    /// IPv6 first, as everywhere a tie is broken.
    private static let familiesInOrder: [AddressFamily] = [.ipv6, .ipv4]

    private static func name(_ family: AddressFamily) -> String { family == .ipv4 ? "IPv4" : "IPv6" }

    private static func routable(_ status: ReachabilityStatus, _ family: AddressFamily) -> Bool {
        family == .ipv4 ? status.ipv4 : status.ipv6
    }

    /// Of one finding per failing family: the one for both when they agree, else IPv6's; `family`
    /// is `nil` when every family in scope fails the same way.
    private static func oneOf(_ findings: [Finding], inScope scope: Int) -> Finding? {
        guard var first = findings.first else { return nil }
        let same = findings.allSatisfy { $0.layer == first.layer && $0.subject == first.subject }
        if findings.count == scope && same {
            first.family = nil
            if findings.count > 1, let both = bothFamiliesText(first) { first.text = both }
        }
        return first
    }

    /// The words of a routing or path finding when it concerns both families.
    private static func bothFamiliesText(_ finding: Finding) -> String? {
        switch finding.layer {
        case .route: "no route out"
        case .address: finding.subject.map { "\($0) has no usable address" }
        case .path: "nothing answers past the gateway" + (finding.subject.map { " (\($0))" } ?? "")
        default: nil
        }
    }

    // MARK: link, address, route

    /// A needed family without a usable route out: its last interface (or the one the kernel
    /// points at now) down or gone → `link`; an interface without a usable address of the family
    /// → `address`; else `route`. While `state` is `unreachable` and no family was ever needed
    /// (reachd started without a way out), every family is.
    private static func routing(_ status: ReachabilityStatus, _ memory: CauseMemory) -> Finding? {
        guard status.state != .unknown else { return nil }
        // The common case, without an array: reachable, every needed family routed.
        if status.state == .reachable && (status.ipv4 || !memory.needs(.ipv4)) && (status.ipv6 || !memory.needs(.ipv6))
        {
            return nil
        }
        var needed = familiesInOrder.filter { memory.needs($0) }
        if status.state == .unreachable && !needed.contains(where: { !routable(status, $0) }) {
            needed = familiesInOrder
        }
        let findings = needed.filter { !routable(status, $0) }.map { routingTrouble(of: $0, status, memory) }
        // The lowest layer first: a link down explains a route missing in the other family.
        let lowest = findings.min { $0.layer.order < $1.layer.order }
        return oneOf(findings.filter { $0.layer == lowest?.layer }, inScope: needed.count)
    }

    private static func routingTrouble(
        of family: AddressFamily, _ status: ReachabilityStatus, _ memory: CauseMemory
    ) -> Finding {
        let facts = status.pathFacts
        var pointedAt: String?
        switch facts[family] {
        case .unusableInterface(let name), .withoutSource(let name), .out(let name): pointedAt = name
        case .noRoute: pointedAt = nil
        }
        for candidate in [memory.lastWayOut[family], pointedAt] {
            guard let candidate else { continue }
            guard let link = facts.links[candidate] else {
                return Finding(layer: .link, family: family, subject: candidate, text: "\(candidate) was removed")
            }
            switch link.trouble {
            case .down: return Finding(layer: .link, family: family, subject: candidate, text: "\(candidate) is down")
            case .noCarrier:
                return Finding(
                    layer: .link, family: family, subject: candidate, text: "\(candidate) is down (no carrier)")
            case nil: continue
            }
        }
        if case .withoutSource(let interface) = facts[family] {
            return Finding(
                layer: .address, family: family, subject: interface,
                text: "\(interface) has no usable \(name(family)) address")
        }
        if let last = memory.lastWayOut[family], let link = facts.links[last], !link.addressed.contains(family) {
            return Finding(
                layer: .address, family: family, subject: last, text: "\(last) has no usable \(name(family)) address")
        }
        return Finding(layer: .route, family: family, subject: nil, text: "no \(name(family)) route out")
    }

    // MARK: dns

    /// Every nameserver failing, or names that do not resolve (targets other than `dns://` ones,
    /// the connectivity check's host).
    private static func dns(_ status: ReachabilityStatus, _ targets: TargetSurvey) -> Finding? {
        if status.dns.state == .failing {
            let servers = status.dns.servers
            let text =
                servers.isEmpty
                ? "no nameserver in resolv.conf"
                : "no nameserver answers ("
                    + servers.map { "\($0.address) \($0.reason?.rawValue ?? "failing")" }.joined(separator: ", ") + ")"
            return Finding(layer: .dns, text: text)
        }
        var names = targets.unresolved.map { status.targets[$0].name }
        let detail = targets.unresolved.first.flatMap { index in
            let target = status.targets[index]
            return target.reason == .dns
                ? target.detail
                : familiesInOrder.lazy.compactMap { target[$0] }.first { $0.reason == .dns }?.detail
        }
        // The check's host not resolving, overall or for one family (a nameserver that answers A
        // but fails AAAA leaves the check `full` and its IPv6 `limited`).
        let connectivity = status.connectivity
        let checkFails = checkFamilies(connectivity).contains { $0.state == .limited && $0.reason == .dns }
        guard !names.isEmpty || checkFails else { return nil }
        if checkFails, let host = checkHost(connectivity) { names.append("the check's \(host)") }
        let shown = names.count > 3 ? names.prefix(3).joined(separator: ", ") + ", …" : names.joined(separator: ", ")
        return Finding(
            layer: .dns, text: "names do not resolve: \(shown)" + (detail.map { " (\($0))" } ?? ""))
    }

    /// Some nameservers failing while another answers: named only when nothing else fails; the
    /// subject is the nameserver when one alone fails.
    private static func oneNameserver(_ status: ReachabilityStatus) -> Finding? {
        guard status.dns.state == .degraded else { return nil }
        let failing = status.dns.servers.filter { $0.state == .failing }
        guard let first = failing.first else { return nil }
        let how = failing.map { "\($0.address)" + ($0.reason.map { " (\($0.rawValue))" } ?? "") }
        return Finding(
            layer: .dns, subject: failing.count == 1 ? first.address : nil,
            text: failing.count == 1
                ? "nameserver \(how[0]) fails while another answers"
                : "nameservers \(how.joined(separator: ", ")) fail while another answers")
    }

    // MARK: path, portal, check

    /// The reasons that say the network past the gateway does not answer.
    private static func isPathFailure(_ reason: ProbeFailureReason?) -> Bool {
        reason == .timeout || reason == .hostUnreachable || reason == .noRoute
    }

    /// Each family of the connectivity check with its state and reason; the overall ones (family
    /// `nil`) while no family shows a verdict.
    private static func checkFamilies(
        _ connectivity: ConnectivityStatus
    ) -> [(family: AddressFamily?, state: ConnectivityStatus.State, reason: ProbeFailureReason?, detail: String?)] {
        let families = familiesInOrder.compactMap { family in
            connectivity[family].map { (Optional(family), $0.state, $0.reason, $0.detail) }
        }
        return families.isEmpty ? [(nil, connectivity.state, connectivity.reason, nil)] : families
    }

    /// The check (or, without one, every unpinned target of a family) fails in a way that says
    /// nothing answers past the gateway, while the family's route exists.
    private static func path(_ status: ReachabilityStatus, _ targets: TargetSurvey) -> Finding? {
        let routed = familiesInOrder.filter { routable(status, $0) }
        // The families that have a say, and those of them that fail.
        var considered = routed
        var failing: [AddressFamily] = []
        if status.connectivity.state != .disabled {
            let checks = checkFamilies(status.connectivity)
            if checks.first?.family != nil { considered = checks.compactMap(\.family) }
            for check in checks {
                let fails = check.state == .none || (check.state == .limited && isPathFailure(check.reason))
                guard fails else { continue }
                guard let family = check.family else {
                    failing = routed
                    break
                }
                // A family without a route out here was never needed (a needed one is a lower
                // layer's): its check has no way to its host, as a target family's `no-route`.
                if routed.contains(family) || check.state == .none { failing.append(family) }
            }
        } else {
            failing = routed.filter { targets.darkFamilies.contains($0) }
        }
        let findings = failing.map { family in
            let interface = status.pathFacts.interface(of: family)
            return Finding(
                layer: .path, family: family, subject: interface,
                text: interface.map { "\(name(family)) gets no answer past the gateway (\($0))" }
                    ?? "\(name(family)) has no way to \(checkHost(status.connectivity) ?? "the check's host")")
        }
        return oneOf(findings, inScope: considered.count)
    }

    private static func portal(_ status: ReachabilityStatus) -> Finding? {
        let portals = checkFamilies(status.connectivity).filter { $0.state == .portal }
        guard let first = portals.first else { return nil }
        let host = checkHost(status.connectivity).map { " at \($0)" } ?? ""
        let family =
            portals.count == 1 && status.connectivity.ipv4 != nil && status.connectivity.ipv6 != nil
            ? first.family : nil
        return Finding(layer: .portal, family: family, text: "captive portal\(host)")
    }

    /// The check's own server (or proxy) misbehaves: `limited` for any reason that is neither
    /// DNS nor the path.
    private static func check(_ status: ReachabilityStatus) -> Finding? {
        let failing = checkFamilies(status.connectivity).filter {
            $0.state == .limited && $0.reason != .dns && !isPathFailure($0.reason)
        }
        guard let first = failing.first else { return nil }
        let host = checkHost(status.connectivity) ?? "the connectivity check"
        let why = first.detail ?? first.reason?.rawValue ?? "failing"
        let withFamilies = [status.connectivity.ipv4, status.connectivity.ipv6].compactMap { $0 }.count
        return Finding(
            layer: .check, family: failing.count == 1 && withFamilies == 2 ? first.family : nil,
            text: "\(host) fails the connectivity check (\(why))")
    }

    /// The host of the connectivity URL as written.
    private static func checkHost(_ connectivity: ConnectivityStatus) -> String? {
        guard let url = connectivity.url, let start = url.firstRange(of: "://")?.upperBound else { return nil }
        let authority = url[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last ?? authority[...]
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") { return String(host[...end]) }
        return String(host.prefix { $0 != ":" })
    }

    // MARK: target, uplink, quality, config

    /// The first target that fails in every family, else the first whose IPv6 fails, else IPv4.
    private static func target(_ status: ReachabilityStatus, _ targets: TargetSurvey) -> Finding? {
        if let index = targets.firstUnreachable {
            let target = status.targets[index]
            let why = [target.reason?.rawValue, target.detail].compactMap { $0 }.joined(separator: ": ")
            return Finding(
                layer: .target, subject: target.name,
                text: "\(target.name) is unreachable" + (why.isEmpty ? "" : " (\(why))"))
        }
        for family in familiesInOrder {
            guard let index = targets.firstFailingFamily[family], let verdict = status.targets[index][family] else {
                continue
            }
            let name = status.targets[index].name
            let why = [verdict.reason?.rawValue, verdict.detail].compactMap { $0 }.joined(separator: ": ")
            return Finding(
                layer: .target, family: family, subject: name,
                text: "\(name) is unreachable over \(Self.name(family))" + (why.isEmpty ? "" : " (\(why))"))
        }
        return nil
    }

    /// With `--per-uplink`: an uplink the kernel does not choose now whose own check is not `full`.
    private static func uplink(_ status: ReachabilityStatus) -> Finding? {
        let chosen = Set(familiesInOrder.compactMap { status.pathFacts.interface(of: $0) })
        for interface in status.interfaces where !chosen.contains(interface.name) {
            guard let connectivity = interface.connectivity,
                [.none, .limited, .portal].contains(connectivity.state) || connectivity.degraded
            else { continue }
            let bad = familiesInOrder.filter { family in
                connectivity[family].map { $0.state != .full && $0.state != .unknown } ?? false
            }
            let withFamilies = familiesInOrder.filter { connectivity[$0] != nil }.count
            let family = bad.count == 1 && withFamilies == 2 ? bad[0] : nil
            let state =
                family.flatMap { connectivity[$0] }.map { ($0.state, $0.reason) }
                ?? (connectivity.state, connectivity.reason)
            let reason = state.1.map { " (\($0.rawValue))" } ?? ""
            return Finding(
                layer: .uplink, family: family, subject: interface.name,
                text: "uplink \(interface.name) is \(state.0.rawValue)"
                    + (family.map { " over \(name($0))" } ?? "") + reason)
        }
        return nil
    }

    private static func quality(_ status: ReachabilityStatus, _ targets: TargetSurvey) -> Finding? {
        for family in familiesInOrder {
            guard let index = targets.firstImpaired[family], let verdict = status.targets[index][family] else {
                continue
            }
            let target = status.targets[index]
            let words = verdict.impairments.map(\.rawValue).joined(separator: ", ")
            let families = familiesInOrder.filter { target[$0] != nil }
            let every = families.allSatisfy { target[$0].map { !$0.impairments.isEmpty } ?? false }
            return Finding(
                layer: .quality, family: every ? nil : family, subject: target.name,
                text:
                    "\(target.name) is impaired over \(every && families.count == 2 ? "both families" : name(family)): \(words)"
            )
        }
        return nil
    }

    private static func config(_ status: ReachabilityStatus, _ memory: CauseMemory) -> Finding? {
        if let file = status.targetsFile, let error = file.error {
            return Finding(layer: .config, text: "targets file \(file.path) not applied: \(error)")
        }
        if let refusal = memory.webConfigRefusal {
            return Finding(layer: .config, text: "web config \(refusal.file) not applied: \(refusal.error)")
        }
        return nil
    }
}

extension Cause.Layer {
    /// Its place in the table, lowest first.
    var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
