#ifndef REACHD_CSIGNALFD_SHIM_H
#define REACHD_CSIGNALFD_SHIM_H

// signalfd(2), which Glibc's module map leaves out: SIGTERM, SIGINT and SIGHUP are read from one
// as data (`SignalReader`), never caught by a handler. Part of glibc itself: nothing to link.
#include <sys/signalfd.h>

#endif
