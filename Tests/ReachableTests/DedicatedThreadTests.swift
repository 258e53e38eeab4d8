import CThreads
import Glibc
import Reachable
import Synchronization
import Testing

/// Where a thread made to work beside its maker (`TwoHalves`) runs: started off the maker's
/// core, then free to run on every core the maker may.
@Suite struct DedicatedThreadTests {
    @Test func aThreadMadeElsewhereStartsOffItsMakersCoreThenMayRunOnAllOfItsCores() throws {
        let makers = reachd_thread_core_count()
        try #require(makers > 1, "needs two cores")
        // Made again when the maker moved to another core meanwhile (then "its core" is moot).
        for _ in 0..<20 {
            let startedOn = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
            defer { startedOn.deallocate() }
            startedOn.pointee = -1
            let cores = Mutex<Int32>(-1)
            let here = reachd_thread_core()
            let thread = try DedicatedThread(elsewhere: true, startedOn: startedOn) {
                cores.withLock { $0 = reachd_thread_core_count() }
            }
            let stayed = reachd_thread_core() == here
            thread.join()
            guard stayed else { continue }
            #expect(startedOn.pointee >= 0)
            #expect(startedOn.pointee != here)
            #expect(cores.withLock { $0 } == makers)
            return
        }
        Issue.record("the maker moved between cores at every try")
    }

    @Test func aThreadMadeElsewhereByAMakerHeldToOneCoreRunsThere() throws {
        // Nowhere else to go: the thread is still made, and runs its work on the maker's core.
        let result = Mutex<(Int32, Int32)?>(nil)
        let maker = try DedicatedThread {
            let here = reachd_thread_hold_to_this_core()
            guard here >= 0 else { return }
            let startedOn = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
            defer { startedOn.deallocate() }
            startedOn.pointee = -1
            guard let inner = try? DedicatedThread(elsewhere: true, startedOn: startedOn, {}) else { return }
            inner.join()
            result.withLock { $0 = (here, startedOn.pointee) }
        }
        maker.join()
        let (here, ran) = try #require(result.withLock { $0 })
        // Made with pthread_create alone: nothing recorded where it started, and it ran on the one core.
        #expect(ran == -1)
        #expect(here >= 0)
    }

    @Test func aThreadMadeAsUsualRunsItsWork() throws {
        let ran = Mutex(false)
        let thread = try DedicatedThread { ran.withLock { $0 = true } }
        thread.join()
        #expect(ran.withLock { $0 })
    }
}
