import FoundationEssentials
import Reachable

/// What reachd knows of one target between probes: what its name resolved to, each family's
/// evaluation, and the document entry derived from them. Pure: the prober and the route gate both
/// change it only through these methods, so every path to the document keeps the same rules.
struct TargetBook: Sendable {
    /// One family: its evaluation, and what was probed.
    struct Family: Sendable {
        var evaluation: TargetEvaluation
        var address: IPAddress?
        var interface: String?
        /// The last probes' quality and the impairments it shows.
        var quality = QualityWindow()
    }

    let spec: TargetSpec
    /// What carries its probes (`ProxyChoice`); `nil`: probed directly. Its addresses are then the proxy's.
    let proxy: ProxyURL?
    /// Last resolved (kept while a failure is still tolerated): what the route questions ask about.
    private(set) var addresses: [IPAddress] {
        didSet {
            guard addresses != oldValue else { return }
            addressTexts = addresses.map(\.description)
            unroutableAtLastJudgement = false
        }
    }
    /// `addresses` as the document writes them, made once per change of them (the document's entry
    /// shares the array): a link-down then does not format every address again (docs/scale.md).
    private var addressTexts: [String]
    private var families = PerFamily<Family>()
    /// The evaluation while no family has addresses (never resolved, or the name stopped resolving).
    private var unresolved: TargetEvaluation
    /// Whether the route gate's last judgement found every one of `addresses` without a usable
    /// route (false once they change): a run after that batch would only take those verdicts and
    /// record `no-route` again (`ProbeScheduler.AnsweredByChange`). Marked while judging, so the
    /// engine reads one flag a target instead of asking each address again (a set of every
    /// target's route questions, made and searched on the engine thread: docs/scale.md).
    var unroutableAtLastJudgement = false  // beside `overall.state`: no padding of its own
    /// The families the name had when it stopped resolving (every family gave up), until a result
    /// covers them again: the document's `unresolvedFamilies`, which keep their series.
    private var familiesBeforeFailure: AddressFamilies = []
    /// The document entry's overall state as last derived, and since when: all of the entry that
    /// is not made from the rest (`status` makes the entry when asked; a copy of it kept here was
    /// 233 bytes a target, and copied again at every judgement).
    private var overall: (state: TargetStatus.State, since: Date)

    init(spec: TargetSpec, since: Date, proxy: ProxyURL? = nil) {
        self.spec = spec
        self.proxy = proxy
        let literal = proxy == nil ? spec.url.literal : proxy?.literal
        addresses = literal.map { [$0] } ?? []
        addressTexts = addresses.map(\.description)
        unresolved = .unknown(since: since)
        overall = (.unknown, since)
        // An IP literal's one family is known before any probe: its address, and that family
        // `unknown`, from the first document on.
        if let literal {
            families[literal.addressFamily] = Family(evaluation: .unknown(since: since))
        }
    }

    /// One run's result (or the part of it for the families it covers), judged by `evaluator`.
    ///
    /// - Returns: how many families were judged failed for their lookup alone (reason `dns`).
    @discardableResult
    mutating func record(
        _ result: ProbePipeline.Result, evaluator: ThresholdEvaluator, quality limits: QualityLimits = QualityLimits(),
        at now: Date
    ) -> Int {
        var failedLookups = 0
        if let failure = result.unresolved {
            recordUnresolved(failure, detail: result.unresolvedDetail, evaluator: evaluator, at: now)
        } else {
            // The families the result does not cover stay as they are (the other family of a run
            // whose answer is still awaited). Each family is changed in place: a copy changed and
            // put back made its quality window's arrays anew at every probe.
            var kept = addresses.filter { !result.covers.contains($0.addressFamily) }
            for family in AddressFamily.allCases where result.covers.contains(family) {
                if let probed = result.families.first(where: { $0.family == family }) {
                    if !families.has(family) { families[family] = Family(evaluation: seed(since: now)) }
                    families.modify(family) { entry in
                        let evaluation = evaluator.next(
                            after: entry.evaluation, failure: probed.outcome.failure, detail: probed.outcome.detail,
                            at: now)
                        // While a failure is still tolerated the family stays as it was seen last.
                        if !(evaluation.state == .reachable && probed.outcome.failure != nil) {
                            entry.address = probed.address
                            entry.interface = probed.interface
                        }
                        entry.evaluation = evaluation
                        entry.quality.record(probed.outcome.quality, limits: limits)
                    }
                    continue
                }
                // Its query failed while the other family resolved: a family that had addresses at
                // the last resolution has a failed probe (reason dns) and keeps them while shown;
                // one that had none has none (`null`).
                let last = result.failedLookups.contains(family) ? addresses.filter { $0.addressFamily == family } : []
                guard !last.isEmpty else {
                    families[family] = nil
                    continue
                }
                if !families.has(family) { families[family] = Family(evaluation: seed(since: now)) }
                families.modify(family) { entry in
                    entry.evaluation = evaluator.next(
                        after: entry.evaluation, failure: .dns, detail: result.lookupDetails[family], at: now)
                }
                kept += last
                failedLookups += 1
            }
            // Assigned only when changed: the array the document's entry shares stays.
            let resolved = (kept + result.addresses).sorted()
            if resolved != addresses { addresses = resolved }
            unresolved = .unknown(since: now)
            for family in result.covers { familiesBeforeFailure.remove(family) }
        }
        derive(at: now)
        return failedLookups
    }

    /// The families `result` starts failing — their last probe succeeded, this one fails (a missing
    /// route aside) — each with the interface it went out of (`StallRecheck`). Asked before
    /// `record`, which forgets the last probe's success.
    func familiesStartingToFail(
        _ result: ProbePipeline.Result
    ) -> [(family: AddressFamily, interface: String?)] {
        var failing: [(family: AddressFamily, interface: String?)] = []
        for family in AddressFamily.allCases {
            let failure: ProbeFailureReason?
            var interface: String?
            if let unresolved = result.unresolved {
                failure = unresolved
            } else if let probed = result.families.first(where: { $0.family == family }) {
                failure = probed.outcome.failure
                interface = probed.interface
            } else {
                failure = result.failedLookups.contains(family) ? .dns : nil
            }
            let starts = families.withValue(of: family) { entry in
                interface = interface ?? entry.interface
                return StallRecheck.startsFailing(after: entry.evaluation, failure: failure)
            }
            if starts == true { failing.append((family, interface)) }
        }
        return failing
    }

    /// The kernel has no usable route to `unroutable` now: each family whose every last known
    /// address is among them is `no-route` at once (the route gate, and a run's own pre-check).
    ///
    /// - Returns: whether any family was judged (else the entry is as it was).
    @discardableResult
    mutating func routesGone(_ unroutable: Set<IPAddress>, evaluator: ThresholdEvaluator, at now: Date) -> Bool {
        guard !unroutable.isEmpty else { return false }
        return routesGone(evaluator: evaluator, at: now) { _, address in unroutable.contains(address) } != nil
    }

    /// The same, asking `isUnroutable` about each last known address with its place in `addresses`
    /// (the route gate reads its verdicts by place).
    ///
    /// - Returns: the new entry when any family was judged.
    mutating func routesGone(
        evaluator: ThresholdEvaluator, at now: Date, _ isUnroutable: (_ place: Int, IPAddress) -> Bool
    ) -> TargetStatus? {
        var judged = false
        for family in AddressFamily.allCases {
            var known = false
            var allGone = true
            for (place, address) in addresses.enumerated() where address.addressFamily == family {
                known = true
                if !isUnroutable(place, address) {
                    allGone = false
                    break
                }
            }
            guard known, allGone else { continue }
            if !families.has(family) { families[family] = Family(evaluation: seed(since: now)) }
            families.modify(family) { entry in
                entry.evaluation = evaluator.next(
                    after: entry.evaluation, failure: .noRoute, detail: TargetFamilyStatus.noRouteDetail, at: now)
                entry.address = nil
                entry.interface = nil
            }
            judged = true
        }
        return judged ? derive(at: now) : nil
    }

    /// The name did not resolve (or, `no-route`, none of the last addresses is routable).
    private mutating func recordUnresolved(
        _ failure: ProbeFailureReason, detail: String?, evaluator: ThresholdEvaluator, at now: Date
    ) {
        if failure == .noRoute, !addresses.isEmpty {
            routesGone(Set(addresses), evaluator: evaluator, at: now)
            return
        }
        guard !families.isEmpty else {
            unresolved = evaluator.next(after: unresolved, failure: failure, detail: detail, at: now)
            return
        }
        for family in families.present {
            families[family]!.evaluation = evaluator.next(
                after: families[family]!.evaluation, failure: failure, detail: detail, at: now)
        }
        // Every family has given up: the name itself is what fails now.
        if families.present.allSatisfy({ families[$0]!.evaluation.state == .unreachable }) {
            unresolved = TargetEvaluation(
                state: .unreachable, reason: failure, detail: detail, since: now,
                consecutiveFailures: evaluator.failureThreshold)
            familiesBeforeFailure = AddressFamilies(families.present)
            families = PerFamily()
            addresses = literal.map { [$0] } ?? []
        }
    }

    /// A family that (re)appears starts where the target stands: unknown after start, or
    /// unreachable (so `--target-successes` still applies) when the name had stopped resolving.
    private func seed(since now: Date) -> TargetEvaluation {
        guard unresolved.state == .unreachable else { return .unknown(since: now) }
        return TargetEvaluation(
            state: .unreachable, reason: unresolved.reason, detail: unresolved.detail, since: unresolved.since)
    }

    /// When to probe again: soon while any family's verdict (or the name's) is being confirmed
    /// (`ThresholdEvaluator.confirmationDelay`), else `interval`.
    func nextDelay(evaluator: ThresholdEvaluator, interval: Duration) -> Duration {
        let evaluations = families.isEmpty ? [unresolved] : families.present.map { families[$0]!.evaluation }
        return evaluations.map { evaluator.confirmationDelay(after: $0, interval: interval) }.min() ?? interval
    }

    /// Moves the overall state on after a change: `since` is the change's time when the state is
    /// not what it was.
    @discardableResult
    private mutating func derive(at now: Date) -> TargetStatus {
        var entry = entry(state: overall.state, since: overall.since)
        if entry.state != overall.state {
            overall = (entry.state, now)
            entry.since = now
        }
        return entry
    }

    /// The document's entry, made from the book.
    var status: TargetStatus { entry(state: overall.state, since: overall.since) }

    /// The entry with `state` and `since` as the last derivation left them (`deriveOverall` keeps
    /// `since` unless the state changes).
    private func entry(state: TargetStatus.State, since: Date) -> TargetStatus {
        var status = TargetStatus(
            name: spec.name, url: spec.url.text, via: spec.egress.interface, proxy: proxy?.shown, state: state,
            since: since)
        for family in AddressFamily.allCases {
            status[family] = families.withValue(of: family) {
                TargetFamilyStatus(
                    state: $0.evaluation.state, reason: $0.evaluation.reason,
                    detail: $0.evaluation.state == .unreachable ? $0.evaluation.detail : nil,
                    address: $0.address?.description, interface: $0.interface,
                    impairments: $0.evaluation.state == .reachable ? $0.quality.impairments : [])
            }
        }
        let unresolvedFailure = unresolved.reasonIfUnreachable.map { (reason: $0, detail: unresolved.detail) }
        status.deriveOverall(unresolved: families.isEmpty ? unresolvedFailure : nil, at: since)
        if !familiesBeforeFailure.isEmpty {
            status.unresolvedFamilies = familiesBeforeFailure.subtracting(
                AddressFamilies(AddressFamily.allCases.filter { families.has($0) }))
        }
        // A name not probed yet has resolved to nothing the document could show; a literal is its address.
        status.addresses = status.state == .unknown && literal == nil ? [] : addressTexts
        return status
    }

    /// The IP literal it connects to, if it is one: the proxy's host through a proxy, else the URL's.
    private var literal: IPAddress? { proxy == nil ? spec.url.literal : proxy?.literal }
}

extension [TargetBook] {
    /// The route gate's judgement of every book: `verdicts` answer the questions asked book by
    /// book, each book's `addresses` in turn, and are read by place; a book whose addresses
    /// changed since it was asked (a probe recorded in between) is looked up by value.
    ///
    /// - Returns: the judged books' new entries: when most questions lost their route (a
    ///   link-down), as every book's entry in order (`JudgedTargets`).
    mutating func routesGone(
        _ verdicts: RouteVerdicts, evaluator: ThresholdEvaluator, at now: Date
    ) -> JudgedTargets {
        guard verdicts.mostlyUnroutable else {
            var entries: [(index: Int, status: TargetStatus)] = []
            withUnsafeMutableBufferPointer { books in
                books.routesGone(0..<books.count, askedBefore: 0, verdicts, evaluator: evaluator, at: now) {
                    index, entry in
                    if let entry { entries.append((index, entry)) }
                }
            }
            return JudgedTargets(entries: entries)
        }
        // A link-down: every book's entry in order, written in place into a list reserved at once
        // (not grown by copying: docs/scale.md), in parts by two threads at once.
        let parts = LargeDocuments.parts(for: count)
        // How many questions the books before each part asked (the verdicts are read by place).
        var askedBefore = [0]
        var asked = 0
        for part in 0..<(parts - 1) {
            for index in LargeDocuments.range(of: part, in: parts, count: count) {
                asked += self[index].addresses.count
            }
            askedBefore.append(asked)
        }
        var unjudged = [[Int]](repeating: [], count: parts)
        let list = withUnsafeMutableBufferPointer { books in
            [TargetStatus](unsafeUninitializedCapacity: books.count) { list, initialized in
                let place = list.baseAddress!
                unjudged.withUnsafeMutableBufferPointer { unjudged in
                    LargeDocuments.runInParts(parts) { part in
                        let range = LargeDocuments.range(of: part, in: parts, count: books.count)
                        books.routesGone(range, askedBefore: askedBefore[part], verdicts, evaluator: evaluator, at: now)
                        {
                            index, entry in
                            if let entry {
                                (place + index).initialize(to: entry)
                            } else {
                                (place + index).initialize(to: books[index].status)
                                unjudged[part].append(index)
                            }
                        }
                    }
                }
                initialized = books.count
            }
        }
        return JudgedTargets(list: list, unjudged: unjudged.flatMap { $0 })
    }

    /// What the route gate asks: each book's last known addresses, out of its egress, in order.
    var routeQuestions: [RouteQuestion] {
        var questions: [RouteQuestion] = []
        questions.reserveCapacity(count)
        // By index: a book is not copied (a copy of every book at a link-down: docs/scale.md).
        for index in indices {
            for address in self[index].addresses {
                questions.append(RouteQuestion(address, via: self[index].spec.egress))
            }
        }
        return questions
    }
}

extension UnsafeMutableBufferPointer<TargetBook> {
    /// The route gate's judgement of the books in `range` (`[TargetBook].routesGone`): `each`
    /// gets every book's place and its new entry, `nil` when nothing was judged. `askedBefore`:
    /// how many questions the books before `range` asked (the verdicts are read by place).
    func routesGone(
        _ range: Range<Int>, askedBefore: Int, _ verdicts: RouteVerdicts, evaluator: ThresholdEvaluator, at now: Date,
        _ each: (_ index: Int, _ entry: TargetStatus?) -> Void
    ) {
        var asked = askedBefore
        var byValue: [Egress: Set<IPAddress>]?
        for index in range {
            let first = asked
            let egress = self[index].spec.egress
            asked += self[index].addresses.count
            var routable = false
            let entry = self[index].routesGone(evaluator: evaluator, at: now) { place, address in
                let question = RouteQuestion(address, via: egress)
                let unroutable: Bool
                if let verdict = verdicts.isUnroutable(question, at: first + place) {
                    unroutable = verdict
                } else {
                    if byValue == nil { byValue = verdicts.unroutableQuestions.addressesByEgress }
                    unroutable = byValue?[egress]?.contains(address) == true
                }
                if !unroutable { routable = true }
                return unroutable
            }
            // Every address is asked about unless one was routable (each family stops at its first).
            self[index].unroutableAtLastJudgement = !routable && !self[index].addresses.isEmpty
            each(index, entry)
        }
    }
}

extension ThresholdEvaluation {
    var reasonIfUnreachable: Reason? { state == .unreachable ? reason : nil }
}

/// One value for each address family, or none: what a dictionary keyed by the two families held,
/// without hashing a key or copying a value out to read one of its fields (a link-down derives
/// every book's two families: docs/scale.md).
struct PerFamily<Value: Sendable>: Sendable {
    private var ipv4: Value?
    private var ipv6: Value?

    subscript(family: AddressFamily) -> Value? {
        get { family == .ipv4 ? ipv4 : ipv6 }
        set { if family == .ipv4 { ipv4 = newValue } else { ipv6 = newValue } }
    }

    /// `body` of the family's value, read in place; `nil` when it has none. (`Optional.map`
    /// lends its payload: `ipv4!` copied a whole `TargetBook.Family` out, for every book a
    /// link-down judges: docs/scale.md.)
    func withValue<Result>(of family: AddressFamily, _ body: (borrowing Value) -> Result) -> Result? {
        switch family {
        case .ipv4: ipv4.map { body($0) }
        case .ipv6: ipv6.map { body($0) }
        }
    }

    /// Changes the family's value in place (a copy taken out and put back retained every field);
    /// nothing when it has none.
    mutating func modify(_ family: AddressFamily, _ body: (inout Value) -> Void) {
        switch family {
        case .ipv4: if ipv4 != nil { body(&ipv4!) }
        case .ipv6: if ipv6 != nil { body(&ipv6!) }
        }
    }

    /// Whether the family has a value (read without copying it out).
    func has(_ family: AddressFamily) -> Bool {
        family == .ipv4 ? ipv4 != nil : ipv6 != nil
    }

    /// The families that have a value, IPv4 first.
    var present: [AddressFamily] { AddressFamily.allCases.filter { self[$0] != nil } }

    var isEmpty: Bool { ipv4 == nil && ipv6 == nil }
}
