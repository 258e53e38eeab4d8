#ifndef REACHD_CARES_SHIM_H
#define REACHD_CARES_SHIM_H

// c-ares (Debian 12: 1.18.1) for the resolver: ares_getaddrinfo on a channel the probe engine's
// thread drives with ares_process_fd. No wrappers are needed (c-ares has no variadics); the
// constants below are macros that Swift imports with the wrong type or not at all.
#include <ares.h>
#include <netdb.h>
#include <sys/socket.h>

/// ARES_SOCKET_BAD: "no descriptor" for ares_process_fd, which then only handles timeouts.
static const ares_socket_t reachd_ares_socket_bad = ARES_SOCKET_BAD;

#endif
