// Loads libcurl, c-ares and the allocator they use, mimalloc, on first use (see
// reachd_probe_libraries.h for why) and forwards every reachd_ function to the library's own.
#include "reachd_probe_libraries.h"

#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

// Debian's sonames (libcurl4 / libcurl3-gnutls both provide the ABI; c-ares 1.x is .so.2).
static const char *const curl_names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", NULL};
static const char *const ares_names[] = {"libcares.so.2", NULL};
// Debian's libmimalloc2.0.
static const char *const mimalloc_names[] = {"libmimalloc.so.2", NULL};

#define REACHD_POINTER(type, name, params, args) type(*name) params;
#define REACHD_POINTER_VOID(name, params, args) void(*name) params;
static struct {
    REACHD_CURL_FUNCTIONS(REACHD_POINTER, REACHD_POINTER_VOID)
    REACHD_ARES_FUNCTIONS(REACHD_POINTER, REACHD_POINTER_VOID)
    CURLcode (*curl_easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*curl_easy_getinfo)(CURL *, CURLINFO, ...);
    CURLMcode (*curl_multi_setopt)(CURLM *, CURLMoption, ...);
    CURLcode (*curl_global_init_mem)(long, curl_malloc_callback, curl_free_callback, curl_realloc_callback,
                                     curl_strdup_callback, curl_calloc_callback);
    int (*ares_library_init_mem)(int, void *(*)(size_t), void (*)(void *), void *(*)(void *, size_t));
} library;

// mimalloc's malloc family, what both libraries allocate with.
static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*realloc)(void *, size_t);
    char *(*strdup)(const char *);
    void *(*calloc)(size_t, size_t);
} heap;
// mimalloc's mi_option_get, for reachd_mimalloc_decommit_delay.
static long (*mimalloc_option_get)(int);
#undef REACHD_POINTER
#undef REACHD_POINTER_VOID

// mimalloc's option `decommit_delay` (named `purge_delay` since 2.1, the same number): how many
// milliseconds a page left empty stays committed. Its default (25 ms) is checked only when the
// heap is next used, so the pages of a round of 1,000 transfers stayed resident between rounds:
// at rest with 1,000 `http://` targets mimalloc held 13.9 MB, and reachd's RSS fell by 12 MB at 0.
enum { mimalloc_option_decommit_delay = 15 };
static const char *const mimalloc_delay_variables[] = {"MIMALLOC_DECOMMIT_DELAY", "MIMALLOC_PURGE_DELAY",
                                                       "MIMALLOC_RESET_DELAY", NULL};

// Empty pages go back to the kernel at once, unless the operator set the delay.
static void set_mimalloc_options(void (*option_set)(int, long)) {
    for (const char *const *name = mimalloc_delay_variables; *name; name++)
        if (getenv(*name)) return;
    option_set(mimalloc_option_decommit_delay, 0);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_error[256];

static void *open_first(const char *const *names) {
    for (const char *const *name = names; *name; name++) {
        void *handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (handle) return handle;
    }
    snprintf(load_error, sizeof load_error, "cannot load %s: %s", names[0], dlerror());
    return NULL;
}

static int resolve(void *handle, const char *name, void **slot) {
    *slot = dlsym(handle, name);
    if (*slot) return 0;
    snprintf(load_error, sizeof load_error, "%s is missing from the loaded library", name);
    return -1;
}

static void load(void) {
    void *curl = open_first(curl_names);
    if (!curl) return;
    void *ares = open_first(ares_names);
    if (!ares) return;
    void *mimalloc = open_first(mimalloc_names);
    if (!mimalloc) return;
#define REACHD_RESOLVE_CURL(type, name, params, args) \
    if (resolve(curl, #name, (void **)&library.name)) return;
#define REACHD_RESOLVE_CURL_VOID(name, params, args) REACHD_RESOLVE_CURL(void, name, params, args)
#define REACHD_RESOLVE_ARES(type, name, params, args) \
    if (resolve(ares, #name, (void **)&library.name)) return;
#define REACHD_RESOLVE_ARES_VOID(name, params, args) REACHD_RESOLVE_ARES(void, name, params, args)
    REACHD_CURL_FUNCTIONS(REACHD_RESOLVE_CURL, REACHD_RESOLVE_CURL_VOID)
    REACHD_ARES_FUNCTIONS(REACHD_RESOLVE_ARES, REACHD_RESOLVE_ARES_VOID)
    if (resolve(curl, "curl_easy_setopt", (void **)&library.curl_easy_setopt)) return;
    if (resolve(curl, "curl_easy_getinfo", (void **)&library.curl_easy_getinfo)) return;
    if (resolve(curl, "curl_multi_setopt", (void **)&library.curl_multi_setopt)) return;
    if (resolve(curl, "curl_global_init_mem", (void **)&library.curl_global_init_mem)) return;
    if (resolve(ares, "ares_library_init_mem", (void **)&library.ares_library_init_mem)) return;
    if (resolve(mimalloc, "mi_malloc", (void **)&heap.malloc)) return;
    if (resolve(mimalloc, "mi_free", (void **)&heap.free)) return;
    if (resolve(mimalloc, "mi_realloc", (void **)&heap.realloc)) return;
    if (resolve(mimalloc, "mi_strdup", (void **)&heap.strdup)) return;
    if (resolve(mimalloc, "mi_calloc", (void **)&heap.calloc)) return;
    void (*option_set)(int, long);
    if (resolve(mimalloc, "mi_option_set", (void **)&option_set)) return;
    if (resolve(mimalloc, "mi_option_get", (void **)&mimalloc_option_get)) return;
    set_mimalloc_options(option_set);
    load_status = 0;
}

int reachd_probe_libraries_load(char *error, size_t error_size) {
    pthread_once(&once, load);
    if (load_status != 0 && error && error_size > 0) snprintf(error, error_size, "%s", load_error);
    return load_status;
}

#define REACHD_FORWARD(type, name, params, args) \
    type reachd_##name params { return library.name args; }
#define REACHD_FORWARD_VOID(name, params, args) \
    void reachd_##name params { library.name args; }
REACHD_CURL_FUNCTIONS(REACHD_FORWARD, REACHD_FORWARD_VOID)
REACHD_ARES_FUNCTIONS(REACHD_FORWARD, REACHD_FORWARD_VOID)

CURLcode reachd_curl_global_init(long flags) {
    return library.curl_global_init_mem(flags, heap.malloc, heap.free, heap.realloc, heap.strdup, heap.calloc);
}
int reachd_ares_library_init(int flags) {
    return library.ares_library_init_mem(flags, heap.malloc, heap.free, heap.realloc);
}
long reachd_mimalloc_decommit_delay(void) { return mimalloc_option_get(mimalloc_option_decommit_delay); }

CURLcode reachd_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return library.curl_easy_setopt(handle, option, value);
}
CURLcode reachd_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return library.curl_easy_setopt(handle, option, value);
}
CURLcode reachd_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return library.curl_easy_setopt(handle, option, value);
}
CURLcode reachd_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *list) {
    return library.curl_easy_setopt(handle, option, list);
}
CURLcode reachd_curl_easy_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return library.curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}
CURLcode reachd_curl_easy_setopt_sockopt_function(CURL *handle, curl_sockopt_callback callback) {
    return library.curl_easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, callback);
}
CURLMcode reachd_curl_multi_setopt_socket_function(CURLM *multi, curl_socket_callback callback, void *data) {
    CURLMcode code = library.curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
    return code != CURLM_OK ? code : library.curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, data);
}
CURLMcode reachd_curl_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback callback, void *data) {
    CURLMcode code = library.curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
    return code != CURLM_OK ? code : library.curl_multi_setopt(multi, CURLMOPT_TIMERDATA, data);
}
CURLcode reachd_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return library.curl_easy_getinfo(handle, info, value);
}
CURLcode reachd_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return library.curl_easy_getinfo(handle, info, value);
}

// c-ares' socket calls as it makes them itself (ares__open_socket with configure_socket and
// TCP_NODELAY, ares__connect_socket, socket_recvfrom, socket_write), each keeping a failure's
// errno: errno itself is left as the call set it, so c-ares decides as before.
static void record_errno(void *user_data) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != EINPROGRESS)
        ((struct reachd_ares_sockets *)user_data)->last_errno = errno;
}
static ares_socket_t owned_socket(int domain, int type, int protocol, void *user_data) {
    const struct reachd_ares_sockets *sockets = user_data;
    int descriptor = socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
    if (descriptor < 0) {
        record_errno(user_data);
        return ARES_SOCKET_BAD;
    }
    int on = 1;
    if (type == SOCK_STREAM) setsockopt(descriptor, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (type == SOCK_DGRAM && sockets->hear_router_errors) {
        if (domain == AF_INET) setsockopt(descriptor, IPPROTO_IP, IP_RECVERR, &on, sizeof on);
        if (domain == AF_INET6) setsockopt(descriptor, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof on);
    }
    // As c-ares: a device that cannot be bound is not fatal (the caller checked it exists).
    if (sockets->device[0])
        setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, sockets->device, (socklen_t)strlen(sockets->device));
    int bound = 0;
    if (domain == AF_INET && sockets->has_source4) {
        struct sockaddr_in source = {.sin_family = AF_INET};
        memcpy(&source.sin_addr, sockets->source4, 4);
        bound = bind(descriptor, (const struct sockaddr *)&source, sizeof source);
    } else if (domain == AF_INET6 && sockets->has_source6) {
        struct sockaddr_in6 source = {.sin6_family = AF_INET6};
        memcpy(&source.sin6_addr, sockets->source6, 16);
        bound = bind(descriptor, (const struct sockaddr *)&source, sizeof source);
    }
    if (bound < 0) {
        record_errno(user_data);
        close(descriptor);
        return ARES_SOCKET_BAD;
    }
    return descriptor;
}
static int owned_close(ares_socket_t descriptor, void *user_data) {
    (void)user_data;
    return close(descriptor);
}
static int owned_connect(ares_socket_t descriptor, const struct sockaddr *address, ares_socklen_t length,
                         void *user_data) {
    int result = connect(descriptor, address, length);
    if (result < 0) record_errno(user_data);
    return result;
}
static ares_ssize_t owned_recvfrom(ares_socket_t descriptor, void *buffer, size_t length, int flags,
                                   struct sockaddr *from, ares_socklen_t *from_length, void *user_data) {
    ssize_t count = recvfrom(descriptor, buffer, length, flags, from, from_length);
    if (count < 0) record_errno(user_data);
    return count;
}
static ares_ssize_t owned_sendv(ares_socket_t descriptor, const struct iovec *vector, int count, void *user_data) {
    ssize_t sent = writev(descriptor, vector, count);
    if (sent < 0) record_errno(user_data);
    return sent;
}
static const struct ares_socket_functions owned_functions = {
    owned_socket, owned_close, owned_connect, owned_recvfrom, owned_sendv,
};

void reachd_ares_own_sockets(ares_channel channel, struct reachd_ares_sockets *sockets) {
    library.ares_set_socket_functions(channel, &owned_functions, sockets);
}
