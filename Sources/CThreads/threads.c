#define _GNU_SOURCE
#include "reachd_threads.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

struct start {
    cpu_set_t all;
    void *(*start)(void *);
    void *context;
    int *started_on;
};

static void *run_anywhere(void *argument) {
    struct start start = *(struct start *)argument;
    free(argument);
    if (start.started_on) *start.started_on = sched_getcpu();
    (void)pthread_setaffinity_np(pthread_self(), sizeof start.all, &start.all);
    return start.start(start.context);
}

int reachd_thread_create_elsewhere(pthread_t *thread, void *(*start)(void *), void *context, int *started_on) {
    struct start *given = malloc(sizeof *given);
    int here = sched_getcpu();
    if (given == NULL || here < 0 || sched_getaffinity(0, sizeof given->all, &given->all) != 0) {
        free(given);
        return pthread_create(thread, NULL, start, context);
    }
    cpu_set_t others = given->all;
    CPU_CLR(here, &others);
    pthread_attr_t attributes;
    if (CPU_COUNT(&others) == 0 || pthread_attr_init(&attributes) != 0) {
        free(given);
        return pthread_create(thread, NULL, start, context);
    }
    given->start = start;
    given->context = context;
    given->started_on = started_on;
    int created = pthread_attr_setaffinity_np(&attributes, sizeof others, &others) == 0
        ? pthread_create(thread, &attributes, run_anywhere, given)
        : pthread_create(thread, NULL, run_anywhere, given);
    pthread_attr_destroy(&attributes);
    if (created != 0) free(given);
    return created;
}

int reachd_thread_core(void) { return sched_getcpu(); }

int reachd_thread_core_count(void) {
    cpu_set_t cores;
    return sched_getaffinity(0, sizeof cores, &cores) == 0 ? CPU_COUNT(&cores) : -1;
}

int reachd_process_core_count(void) {
    cpu_set_t cores;
    return sched_getaffinity(getpid(), sizeof cores, &cores) == 0 ? CPU_COUNT(&cores) : -1;
}

int reachd_thread_hold_to_this_core(void) {
    int here = sched_getcpu();
    if (here < 0) return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(here, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0 ? here : -1;
}
