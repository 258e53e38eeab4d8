// The self-check of tsan_mutex_annotations.c, built with `swiftc -sanitize=thread` by
// scripts/check-sanitizers.sh: two threads take one `Synchronization.Mutex` thousands of times
// and hold it a few microseconds each time, so the other often finds it taken and goes down the
// slow path (spinning, then the futex). Busy holding, not `sched_yield`: on a loaded machine each
// yield can give the CPU away for a whole time slice, and the check then took minutes.
//
//   ContendedMutex guarded     only the Mutex guards the counter: no race. Without the
//                              annotations TSan reports one anyway (it cannot see the slow path).
//   ContendedMutex unguarded   each thread also writes a variable with no lock at all, before
//                              taking the Mutex: a real race that TSan must still report with
//                              the annotations loaded.
//
// Both threads wait for each other before they start, so they contend from the first iteration.
// Run with TSAN_OPTIONS history_size=7 (as the script does): with the default history TSan
// often drops the deliberate race, whose first access is thousands of events back by then.
import Glibc
import Synchronization

final class Shared: Sendable {
    let counter = Mutex(0)
}

let shared = Shared()
let unguarded = CommandLine.arguments.dropFirst().first == "unguarded"
nonisolated(unsafe) var unprotected = 0
nonisolated(unsafe) var bothStarted = pthread_barrier_t()

func holdFor(microseconds: Int) {
    var start = timespec()
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    repeat {
        clock_gettime(CLOCK_MONOTONIC, &now)
    } while (now.tv_sec - start.tv_sec) * 1_000_000_000 + (now.tv_nsec - start.tv_nsec) < microseconds * 1000
}

func work() {
    pthread_barrier_wait(&bothStarted)
    if unguarded { unprotected += 1 }
    for _ in 0..<2000 {
        shared.counter.withLock { value in
            value += 1
            holdFor(microseconds: 5)
        }
    }
}

func threadBody(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    work()
    return nil
}

pthread_barrier_init(&bothStarted, nil, 2)
var threads: [pthread_t] = []
for _ in 0..<2 {
    var thread = pthread_t()
    guard pthread_create(&thread, nil, threadBody, nil) == 0 else { exit(2) }
    threads.append(thread)
}
for thread in threads { pthread_join(thread, nil) }
let total = shared.counter.withLock { $0 }
print("ContendedMutex: counter \(total) (expected 4000)")
exit(total == 4000 ? 0 : 1)
