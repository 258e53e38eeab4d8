import Foundation
import Reachable
import Testing

@testable import ReachableServer

/// The document is held once: `/status` serves its slice of the SSE frame, not a copy of it.
struct StatusSnapshotTests {
    static func status(sequence: UInt64, state: NetworkPath.State) -> ReachabilityStatus {
        ReachabilityStatus(path: NetworkPath(state: state, ipv4: true), sequence: sequence, changedAt: Date())
    }

    /// Whether `slice`'s bytes lie inside `frame`'s storage (the same memory, not equal bytes).
    static func lies(_ slice: ArraySlice<UInt8>, within frame: [UInt8]) -> Bool {
        slice.withUnsafeBytes { inner in
            frame.withUnsafeBytes { outer in
                guard let start = inner.baseAddress, let outerStart = outer.baseAddress else { return false }
                return start >= outerStart && start + inner.count <= outerStart + outer.count
            }
        }
    }

    @Test func theStatusBodyIsTheDocumentsPlaceInTheFrame() {
        let first = Self.status(sequence: 3, state: .reachable)
        let snapshot = StatusSnapshot(first)
        let frame = snapshot.frame
        #expect(frame == Array("id: 3\nevent: status\ndata: ".utf8) + first.jsonBytes() + Array("\n\n".utf8))
        #expect(Array(snapshot.response.body) == first.jsonBytes())
        #expect(Self.lies(snapshot.response.body, within: frame))

        let next = Self.status(sequence: 4, state: .unreachable)
        let published = snapshot.update(next)
        #expect(published == Array("id: 4\nevent: status\ndata: ".utf8) + next.jsonBytes() + Array("\n\n".utf8))
        #expect(Array(snapshot.json) == next.jsonBytes())
        #expect(Self.lies(snapshot.response.body, within: published))
        #expect(Self.lies(snapshot.json, within: published))
    }

    /// The frame's room is the last document's size and a quarter more (a link-down's document is
    /// larger than the one before it), not a guess per target.
    @Test func aFrameIsReservedFromTheLastDocumentsSize() {
        let status = Self.status(sequence: 9, state: .reachable)
        let frame = EventFrame.status(status, expectedSize: 100_000)
        #expect(frame.bytes.capacity >= 100_000)
        #expect(frame.bytes.capacity < 130_000)
        #expect(Array(frame.document) == status.jsonBytes())
    }
}
