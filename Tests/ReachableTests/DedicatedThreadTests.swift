import CThreads
import Glibc
import Reachable
import Synchronization
import Testing

/// Where a thread made to work beside its maker (`LargeDocuments.runInParts`) runs: started off the maker's
/// core, then free to run on every core the maker may.
@Suite struct DedicatedThreadTests {
    @Test(.enabled(if: reachd_thread_core_count() > 1, "needs two cores"))
    func aThreadMadeElsewhereStartsOffItsMakersCoreThenMayRunOnAllOfItsCores() throws {
        let makers = reachd_thread_core_count()
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
        // Nowhere else to go: the thread is still made (as usual: nothing recorded where it
        // started), and runs its work on the maker's one core.
        let result = Mutex<(here: Int32, startedOn: Int32, ranOn: Int32)?>(nil)
        let maker = try DedicatedThread {
            let here = reachd_thread_hold_to_this_core()
            guard here >= 0 else { return }
            let startedOn = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
            defer { startedOn.deallocate() }
            startedOn.pointee = -1
            let ranOn = Mutex<Int32>(-1)
            guard
                let inner = try? DedicatedThread(
                    elsewhere: true, startedOn: startedOn, { ranOn.withLock { $0 = reachd_thread_core() } })
            else { return }
            inner.join()
            result.withLock { $0 = (here, startedOn.pointee, ranOn.withLock { $0 }) }
        }
        maker.join()
        let seen = try #require(result.withLock { $0 })
        #expect(seen.startedOn == -1)
        #expect(seen.ranOn == seen.here)
    }

    @Test func aThreadMadeAsUsualRunsItsWork() throws {
        let ran = Mutex(false)
        let thread = try DedicatedThread { ran.withLock { $0 = true } }
        thread.join()
        #expect(ran.withLock { $0 })
    }
}
