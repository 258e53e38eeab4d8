/*
 * An LD_PRELOAD shim for reachd's black-box fault tests: while the file named by
 * $REACHD_FAULT_FILE exists, every recvmsg(2) on a netlink socket fails with EIO. libmnl's
 * mnl_socket_recvfrom calls recvmsg through the C library, so this is where reachd meets the
 * kernel. Everything else passes through untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);

static int is_netlink(int fd) {
    struct sockaddr_storage address;
    socklen_t length = sizeof(address);
    return getsockname(fd, (struct sockaddr *)&address, &length) == 0 && address.ss_family == AF_NETLINK;
}

ssize_t recvmsg(int fd, struct msghdr *message, int flags) {
    static recvmsg_fn real;
    if (!real) real = (recvmsg_fn)dlsym(RTLD_NEXT, "recvmsg");
    const char *trigger = getenv("REACHD_FAULT_FILE");
    if (trigger && access(trigger, F_OK) == 0 && is_netlink(fd)) {
        errno = EIO;
        return -1;
    }
    return real(fd, message, flags);
}
