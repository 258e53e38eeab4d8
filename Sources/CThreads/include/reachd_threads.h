#ifndef REACHD_THREADS_H
#define REACHD_THREADS_H

#include <pthread.h>

// A thread made to work beside its maker (`LargeDocuments.runInParts`): started on a core other than the one the
// maker runs on, then free to run on every core the maker may. In C because the cpu_set_t
// macros (CPU_CLR, CPU_COUNT) are not visible to Swift.

// pthread_create(thread, NULL, start, context), but started on a core the caller may run on
// other than the one it runs on now; where there is no other (or the cores cannot be read), where
// the kernel puts it. `started_on` (may be NULL) gets the core it started on, before `start` runs
// (for the tests: read it after joining). Returns what pthread_create returned.
int reachd_thread_create_elsewhere(pthread_t *thread, void *(*start)(void *), void *context, int *started_on);

// The core the calling thread runs on now (sched_getcpu), or -1.
int reachd_thread_core(void);

// How many cores the calling thread may run on.
int reachd_thread_core_count(void);

// How many cores the process may run on: its main thread's CPU affinity (`taskset`, a container's
// cpuset), whichever thread asks.
int reachd_process_core_count(void);

// Holds the calling thread to the core it runs on now; returns that core, or -1.
int reachd_thread_hold_to_this_core(void);

#endif
