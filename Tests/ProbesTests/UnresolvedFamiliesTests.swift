import Foundation
import Reachable
import Testing

@testable import Probes

/// The families a book's entry keeps when its name stops resolving (`unresolvedFamilies`, what
/// `/metrics` keeps a family's series for): those of the last successful resolution; a failed
/// resolution changes nothing, an answer without a family removes it.
@Suite struct UnresolvedFamiliesTests {
    static let v4 = TargetBookTests.v4
    static let v6 = TargetBookTests.v6
    static func at(_ seconds: Double) -> Date { TargetBookTests.at(seconds) }

    let evaluator = ThresholdEvaluator(failureThreshold: 3, successThreshold: 1)

    @Test func aTargetKeepsTheFamiliesItHadWhenItsNameStopsResolving() throws {
        var book = try TargetBookTests.book()
        book.record(
            TargetBookTests.resolved([TargetBookTests.family(Self.v4, nil), TargetBookTests.family(Self.v6, nil)]),
            evaluator: evaluator, at: Self.at(1))
        #expect(book.status.unresolvedFamilies.isEmpty, "every family shows its verdict")
        for second in 2...4 {
            book.record(ProbePipeline.Result(unresolved: .dns), evaluator: evaluator, at: Self.at(Double(second)))
        }
        var status = book.status
        #expect(status.reason == .dns && status.ipv4 == nil && status.ipv6 == nil)
        #expect(status.unresolvedFamilies == [.ipv4, .ipv6])
        book.record(ProbePipeline.Result(unresolved: .dns), evaluator: evaluator, at: Self.at(5))
        #expect(book.status.unresolvedFamilies == [.ipv4, .ipv6], "a failed resolution changes nothing")

        // A answers first (AAAA still awaited): IPv4 shows its verdict, IPv6 is still the one kept.
        book.record(
            TargetBookTests.part(covering: [.ipv4], [TargetBookTests.family(Self.v4, nil)], addresses: [Self.v4]),
            evaluator: evaluator, at: Self.at(6))
        status = book.status
        #expect(status.ipv4?.state == .reachable && status.unresolvedFamilies == [.ipv6])
        // AAAA answers without an address: the family is gone.
        book.record(
            TargetBookTests.part(covering: [.ipv6], [], addresses: []), evaluator: evaluator, at: Self.at(7))
        status = book.status
        #expect(status.ipv6 == nil && status.unresolvedFamilies.isEmpty)
    }

    @Test func aNameThatNeverResolvedKeepsNoFamily() throws {
        var book = try TargetBookTests.book()
        book.record(ProbePipeline.Result(unresolved: .dns), evaluator: evaluator, at: Self.at(1))
        #expect(book.status.state == .unreachable && book.status.unresolvedFamilies.isEmpty)
    }

    @Test func theConnectivityCheckKeepsTheFamiliesOfItsLastAnswer() throws {
        var book = try ConnectivityBookTests.book()
        _ = book.record(ProbePipeline.Result(unresolved: .dns), pathUnreachable: false, at: Self.at(1))
        #expect(book.status.state == .limited && book.status.unresolvedFamilies.isEmpty, "never resolved")
        _ = book.record(
            ProbePipeline.Result(
                addresses: [Self.v4, Self.v6],
                families: [ConnectivityBookTests.answer(Self.v4, 204), ConnectivityBookTests.answer(Self.v6, 204)]),
            pathUnreachable: false, at: Self.at(2))
        #expect(book.status.state == .full && book.status.unresolvedFamilies.isEmpty)
        _ = book.record(ProbePipeline.Result(unresolved: .dns), pathUnreachable: false, at: Self.at(3))
        #expect(book.status.state == .limited && book.status.reason == .dns)
        #expect(book.status.ipv4 == nil && book.status.ipv6 == nil)
        #expect(book.status.unresolvedFamilies == [.ipv4, .ipv6])

        // An answer without AAAA: IPv6 is no longer the check's.
        _ = book.record(
            ProbePipeline.Result(addresses: [Self.v4], families: [ConnectivityBookTests.answer(Self.v4, 204)]),
            pathUnreachable: false, at: Self.at(4))
        _ = book.record(ProbePipeline.Result(unresolved: .dns), pathUnreachable: false, at: Self.at(5))
        #expect(book.status.unresolvedFamilies == [.ipv4])
    }

    @Test func anUplinksCheckIsForEveryFamilyItIsAnUplinkOfUntilAnAnswerSaysOtherwise() throws {
        var books = try UplinkBooksTests.books()
        _ = books.follow(["wan1": [.ipv4, .ipv6]], unroutable: [], at: Self.at(0))
        #expect(books.statuses["wan1"]?.unresolvedFamilies == [.ipv4, .ipv6], "not checked yet")

        // Its DNS fails before it ever answered: both families, the check `limited`.
        var uplink = try #require(books[0])
        _ = uplink.book.record(ProbePipeline.Result(unresolved: .dns), pathUnreachable: false, at: Self.at(1))
        books[0] = uplink
        var status = try #require(books.statuses["wan1"])
        #expect(status.state == .limited && status.unresolvedFamilies == [.ipv4, .ipv6])

        // It answers with IPv4 only, then fails again: IPv4 alone is kept.
        uplink = try #require(books[0])
        _ = uplink.book.record(UplinkBooksTests.full([Self.v4]), pathUnreachable: false, at: Self.at(2))
        #expect(uplink.book.status.unresolvedFamilies.isEmpty)
        _ = uplink.book.record(ProbePipeline.Result(unresolved: .dns), pathUnreachable: false, at: Self.at(3))
        books[0] = uplink
        status = try #require(books.statuses["wan1"])
        #expect(status.unresolvedFamilies == [.ipv4])

        // An uplink of IPv4 alone is checked for IPv4 alone, whatever the host has.
        _ = books.follow(["wan0": [.ipv4]], unroutable: [], at: Self.at(4))
        #expect(books.statuses["wan0"]?.unresolvedFamilies == [.ipv4])
    }
}
