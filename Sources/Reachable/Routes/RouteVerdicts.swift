/// A route gate's questions with the kernel's verdict on each: whether it has no usable route.
///
/// Kept in the order the gate asked them, so a gate that walks its own sources in that order
/// reads each verdict by place, without hashing: by value, a link-down hashed every question four
/// times over (the verdicts, each gate's share, the addresses by egress, each target's check) on
/// the netlink thread before the document (docs/scale.md). Read by value, the unroutable ones are
/// a set, for the gates with a few questions.
package struct RouteVerdicts: Sendable {
    /// What the gate asked, in its order.
    package let questions: [RouteQuestion]
    /// `unroutable[i]`: whether `questions[i]` has no usable route.
    private let unroutable: [Bool]
    private let unroutableCount: Int

    package init(questions: [RouteQuestion], unroutable: [Bool]) {
        precondition(questions.count == unroutable.count, "one verdict per question")
        self.questions = questions
        self.unroutable = unroutable
        unroutableCount = unroutable.lazy.filter { $0 }.count
    }

    /// No question asked, none unroutable.
    package static let none = RouteVerdicts(questions: [], unroutable: [])

    /// Whether every question has a usable route.
    package var isEmpty: Bool { unroutableCount == 0 }

    /// Whether at least half the questions have no usable route (a link-down): a gate may then
    /// make its whole part of the document anew rather than entry by entry.
    package var mostlyUnroutable: Bool { unroutableCount > 0 && unroutableCount * 2 >= questions.count }

    /// The verdict on `question` by its place, `index` in the order asked; `nil` when the place
    /// holds another question (the source changed after it asked: look it up by value instead).
    package func isUnroutable(_ question: RouteQuestion, at index: Int) -> Bool? {
        guard questions.indices.contains(index), questions[index] == question else { return nil }
        return unroutable[index]
    }

    /// Whether `question` is one of those without a usable route, looked up by reading them all:
    /// for a few lookups, cheaper than making `unroutableQuestions`.
    package func isUnroutable(_ question: RouteQuestion) -> Bool {
        guard unroutableCount > 0 else { return false }
        for (asked, gone) in zip(questions, unroutable) where gone && asked == question { return true }
        return false
    }

    /// The questions without a usable route.
    package var unroutableQuestions: Set<RouteQuestion> {
        var set = Set<RouteQuestion>(minimumCapacity: unroutableCount)
        for (question, gone) in zip(questions, unroutable) where gone { set.insert(question) }
        return set
    }

    /// The unroutable addresses asked out of `egress`: a source judges each of its families by
    /// its own way out.
    package func addresses(via egress: Egress) -> Set<IPAddress> {
        unroutableQuestions.addresses(via: egress)
    }
}
