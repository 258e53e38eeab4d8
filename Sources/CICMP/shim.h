#ifndef REACHD_CICMP_SHIM_H
#define REACHD_CICMP_SHIM_H

// The kernel's ICMP types and socket error queue for `icmp://` probes (`ICMPEchoes`): headers
// Glibc's module map leaves out. Part of glibc and the kernel headers: nothing to link.
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>

// setsockopt(SOL_RAW, ICMP_FILTER) on a raw IPv4 socket: linux/icmp.h's value, which cannot be
// included beside netinet/ip_icmp.h (both define struct icmphdr).
static const int reachd_icmp_filter_option = 1;

// ICMP6_FILTER_SETBLOCKALL / ICMP6_FILTER_SETPASS are macros, which Swift cannot call.
static inline void reachd_icmp6_filter_pass_only(struct icmp6_filter *filter, int type) {
    ICMP6_FILTER_SETBLOCKALL(filter);
    ICMP6_FILTER_SETPASS(type, filter);
}

#endif
