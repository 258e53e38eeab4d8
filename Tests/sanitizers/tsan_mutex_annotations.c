// Teaches ThreadSanitizer the one lock it cannot see: Swift's `Synchronization.Mutex` on Linux.
//
// Mutex's fast paths (one compare-and-swap to lock, one to unlock) are inlined into our code and
// instrumented, so TSan sees them. Its slow paths are not: `_lockSlow` spins with plain
// `cmpxchg` and then sleeps in `futex(FUTEX_LOCK_PI)`, `_unlockSlow` hands the lock over with
// `futex(FUTEX_UNLOCK_PI)`, both inside the uninstrumented libswiftSynchronization.so. A thread
// that gets the lock that way has, as far as TSan knows, no happens-before edge with the thread
// that released it, and every access under the lock is reported as a race (a two-thread counter
// under a contended Mutex is enough to show it). Suppressing those reports would hide real
// races in the same code, so instead this library, preloaded into the TSan test run only, wraps
// the three slow-path entry points and tells TSan what they did: an acquire on the lock word
// after the lock is taken, a release before it is handed over. The fast paths' atomics act on
// the same address, so both paths meet in one TSan sync object. scripts/check-sanitizers.sh
// checks both halves first with ContendedMutex.swift: a contended Mutex is clean with this
// library, and a real race beside it is still reported.
//
// The wrappers use Swift's calling convention: `self` (the address of the `_MutexHandle`, an
// address-only type) arrives in the context register (`swift_context` = LLVM `swiftself`), as
// the disassembly of libswiftSynchronization.so shows. The TSan entry points are weak, so the
// library does nothing harmful in a process that is not instrumented (the `swift test` driver,
// `ip`, dnsmasq): there the wrappers only forward.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))

typedef SWIFTCALL void (*LockSlow)(uint32_t selfId, void *SWIFT_SELF handle);
typedef SWIFTCALL bool (*TryLockSlow)(void *SWIFT_SELF handle);
typedef SWIFTCALL void (*UnlockSlow)(void *SWIFT_SELF handle);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

/// The real functions in libswiftSynchronization.so, looked up once at load time (before any
/// thread exists). A process without Swift (`ip`, dnsmasq) has none and never calls them.
static LockSlow real_lock_slow;
static TryLockSlow real_try_lock_slow;
static UnlockSlow real_unlock_slow;

__attribute__((constructor)) static void find_real_functions(void) {
    real_lock_slow = (LockSlow)dlsym(RTLD_NEXT, LOCK_SLOW);
    real_try_lock_slow = (TryLockSlow)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    real_unlock_slow = (UnlockSlow)dlsym(RTLD_NEXT, UNLOCK_SLOW);
}

/// Called in place of a function that was not found: going on would corrupt the lock.
static void missing(const char *name) {
    fprintf(stderr, "tsan_mutex_annotations: %s not found in libswiftSynchronization.so\n", name);
    abort();
}

SWIFTCALL void lock_slow(uint32_t selfId, void *SWIFT_SELF handle) __asm__(LOCK_SLOW);
SWIFTCALL void lock_slow(uint32_t selfId, void *SWIFT_SELF handle) {
    if (real_lock_slow == NULL) missing(LOCK_SLOW);
    real_lock_slow(selfId, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFTCALL bool try_lock_slow(void *SWIFT_SELF handle) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool try_lock_slow(void *SWIFT_SELF handle) {
    if (real_try_lock_slow == NULL) missing(TRY_LOCK_SLOW);
    bool locked = real_try_lock_slow(handle);
    if (locked && __tsan_acquire) __tsan_acquire(handle);
    return locked;
}

SWIFTCALL void unlock_slow(void *SWIFT_SELF handle) __asm__(UNLOCK_SLOW);
SWIFTCALL void unlock_slow(void *SWIFT_SELF handle) {
    if (real_unlock_slow == NULL) missing(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    real_unlock_slow(handle);
}
