// The self-check of tsan_mutex_annotations.c, built with `swiftc -sanitize=thread` by
// scripts/check-sanitizers.sh: two threads take one `Synchronization.Mutex` thousands of times,
// yielding while they hold it, so the other finds it taken and goes down the futex slow path.
//
//   ContendedMutex guarded     only the Mutex guards the counter: no race. Without the
//                              annotations TSan reports one anyway (it cannot see the slow path).
//   ContendedMutex unguarded   each thread also writes a variable with no lock at all, before
//                              taking the Mutex: a real race that TSan must still report with
//                              the annotations loaded.
import Glibc
import Synchronization

final class Shared: Sendable {
    let counter = Mutex(0)
}

let shared = Shared()
let unguarded = CommandLine.arguments.dropFirst().first == "unguarded"
nonisolated(unsafe) var unprotected = 0

func work() {
    if unguarded { unprotected += 1 }
    for _ in 0..<2000 {
        shared.counter.withLock { value in
            value += 1
            for _ in 0..<100 { sched_yield() }
        }
    }
}

func threadBody(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    work()
    return nil
}

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
