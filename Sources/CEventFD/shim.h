#ifndef REACHD_CEVENTFD_SHIM_H
#define REACHD_CEVENTFD_SHIM_H

// eventfd(2), which Glibc's module map leaves out: the wake-up counter the threads that sleep in
// poll(2) are stopped with (`WakeUpEvent`). Part of glibc itself: nothing to link.
#include <sys/eventfd.h>

#endif
