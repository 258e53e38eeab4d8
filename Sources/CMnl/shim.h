#ifndef REACHD_CMNL_SHIM_H
#define REACHD_CMNL_SHIM_H

// libmnl plus the kernel's rtnetlink headers: everything the netlink source parses.
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/if.h>
#include <errno.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>

// Interface flags: some come from an enum and some from macros depending on the headers
// included; one spelling for Swift.
static const uint32_t reachd_iff_up = IFF_UP;
static const uint32_t reachd_iff_loopback = IFF_LOOPBACK;
static const uint32_t reachd_iff_running = IFF_RUNNING;
static const uint32_t reachd_iff_lower_up = IFF_LOWER_UP;
static const uint32_t reachd_iff_dormant = IFF_DORMANT;

// Function-like macros do not import into Swift; these wrap the ones the parser needs.

/// RTNH_OK: is this next hop of an RTA_MULTIPATH attribute complete within `remaining` bytes?
static inline int reachd_rtnh_ok(const struct rtnexthop *rtnh, int remaining) {
    return RTNH_OK(rtnh, remaining);
}

/// RTNH_NEXT: the next hop after this one.
static inline const struct rtnexthop *reachd_rtnh_next(const struct rtnexthop *rtnh) {
    return RTNH_NEXT(rtnh);
}

/// RTNH_ALIGN'd size of a next hop, for the caller's remaining-length bookkeeping.
static inline int reachd_rtnh_size(const struct rtnexthop *rtnh) {
    return RTNH_ALIGN(rtnh->rtnh_len);
}

#endif
