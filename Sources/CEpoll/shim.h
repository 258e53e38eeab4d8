#ifndef REACHD_CEPOLL_SHIM_H
#define REACHD_CEPOLL_SHIM_H

// epoll(7), which Glibc's module map leaves out: the probe engine's loop sleeps in epoll_wait on
// every driver's descriptors (`EventLoop`). Part of glibc itself: nothing to link.
#include <sys/epoll.h>

#endif
