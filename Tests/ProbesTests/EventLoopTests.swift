import Dispatch
import Glibc
import Testing

@testable import Probes

/// The engine loop's epoll: a ready descriptor is told to the owner that watches it, and only
/// that one; a number closed and reused belongs to its new owner; `wake` ends a wait from another
/// thread. Real pipes, no engine around it.
@Suite struct EventLoopTests {
    /// Records what it was told.
    final class Recorder: DescriptorOwner {
        var told: [(descriptor: Int32, readable: Bool, writable: Bool)] = []
        func ready(_ descriptor: Int32, readable: Bool, writable: Bool) {
            told.append((descriptor, readable, writable))
        }
    }

    /// A pipe's two ends, closed when the test ends.
    final class Pipe {
        let read: Int32
        let write: Int32
        init() {
            var ends: [Int32] = [0, 0]
            precondition(pipe(&ends) == 0)
            for end in ends { _ = fcntl(end, F_SETFL, O_NONBLOCK) }
            (read, write) = (ends[0], ends[1])
        }
        func send() { _ = Glibc.write(write, "x", 1) }
        deinit {
            close(read)
            close(write)
        }
    }

    @Test func aReadyDescriptorIsToldToItsOwnerAlone() throws {
        let loop = try EventLoop()
        let (owner, other) = (Recorder(), Recorder())
        let pipe = Pipe()
        loop.watch(pipe.read, reading: true, writing: false, for: owner)
        #expect(loop.wait(timeout: 0))
        #expect(owner.told.isEmpty, "nothing to read yet")
        pipe.send()
        #expect(loop.wait(timeout: 1_000))
        #expect(owner.told.count == 1 && owner.told.first?.readable == true)
        // Another owner cannot unwatch it: level-triggered, the unread byte is told again.
        loop.unwatch(pipe.read, for: other)
        #expect(loop.wait(timeout: 1_000))
        #expect(owner.told.count == 2 && other.told.isEmpty)
        loop.unwatch(pipe.read, for: owner)
        #expect(loop.wait(timeout: 0))
        #expect(owner.told.count == 2, "no longer watched")
    }

    @Test func watchingAgainChangesWhatIsWatched() throws {
        let loop = try EventLoop()
        let owner = Recorder()
        let pipe = Pipe()
        loop.watch(pipe.write, reading: false, writing: true, for: owner)
        #expect(loop.wait(timeout: 1_000))
        #expect(owner.told.last?.writable == true, "an empty pipe can be written")
        loop.watch(pipe.write, reading: true, writing: false, for: owner)
        let before = owner.told.count
        #expect(loop.wait(timeout: 0))
        #expect(owner.told.count == before, "reading a pipe's write end never becomes ready")
    }

    @Test func aNumberClosedUnseenAndReusedIsItsNewOwners() throws {
        let loop = try EventLoop()
        let (first, second) = (Recorder(), Recorder())
        let old = Pipe()
        let fresh = Pipe()
        let number = old.read
        loop.watch(number, reading: true, writing: false, for: first)
        // The number now names another pipe's read end; the one `first` watched is closed unseen
        // (epoll forgets it, the loop still thinks the number `first`'s). `dup2`: no other test can
        // take the number in between.
        #expect(dup2(fresh.read, number) == number)
        loop.watch(number, reading: true, writing: false, for: second)
        loop.unwatch(number, for: first)  // the old owner's late unwatch changes nothing
        fresh.send()
        #expect(loop.wait(timeout: 1_000))
        #expect(second.told.count == 1 && first.told.isEmpty)
    }

    /// The wait blocks this thread; the wake comes from a Dispatch thread (not the test's
    /// cooperative pool, which a blocked wait may leave without a thread to run it).
    @Test func wakeEndsAWaitFromAnotherThread() throws {
        let loop = try EventLoop()
        let started = ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { loop.wake() }
        #expect(loop.wait(timeout: 10_000))
        #expect(ContinuousClock.now - started < .seconds(5), "woken, not timed out (generous bound)")
    }
}
