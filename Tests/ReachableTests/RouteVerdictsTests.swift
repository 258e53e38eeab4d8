import Testing

@testable import Reachable

/// A batch's verdicts read by value: one by one (`isUnroutable`) and as a set
/// (`unroutableQuestions`) say the same of every question, of either family and either way out.
@Suite struct RouteVerdictsTests {
    private static let questions = [
        RouteQuestion(IPAddress("198.18.0.1")!), RouteQuestion(IPAddress("198.18.0.1")!, via: .pinned(to: "v0")),
        RouteQuestion(IPAddress("2001:db8::1")!), RouteQuestion(IPAddress("2001:db8::1")!, via: .pinned(to: "v0")),
        RouteQuestion(IPAddress("198.18.0.2")!), RouteQuestion(IPAddress("2001:db8::2")!),
    ]

    @Test func readingTheVerdictsOneByOneAgreesWithTheirSet() {
        let verdicts = RouteVerdicts(questions: Self.questions, unroutable: [true, false, false, true, true, false])
        let set = verdicts.unroutableQuestions
        #expect(set.count == 3)
        for question in Self.questions {
            #expect(verdicts.isUnroutable(question) == set.contains(question), "\(question)")
        }
        // Never asked: not unroutable by these verdicts.
        #expect(!verdicts.isUnroutable(RouteQuestion(IPAddress("198.18.0.9")!)))
        #expect(!verdicts.isUnroutable(RouteQuestion(IPAddress("2001:db8::2")!, via: .pinned(to: "v0"))))
    }

    @Test func noVerdictIsUnroutableWhenEveryQuestionHasARoute() {
        let verdicts = RouteVerdicts(questions: Self.questions, unroutable: Self.questions.map { _ in false })
        #expect(Self.questions.allSatisfy { !verdicts.isUnroutable($0) })
        #expect(!RouteVerdicts.none.isUnroutable(Self.questions[0]))
    }
}
