#ifndef REACHD_PROBE_LIBRARIES_H
#define REACHD_PROBE_LIBRARIES_H

// libcurl (Debian 12: 7.88.1) and c-ares (1.18.1) for the outbound probes, loaded with dlopen
// the first time a target or connectivity check needs them — not linked. Linked, their ~20
// dependencies (OpenSSL, Kerberos, LDAP, SSH, …) cost every reachd process about 3.6 MiB of RSS
// even with no probe configured; loaded on demand, a reachd without targets pays nothing.
//
// Swift calls the reachd_-prefixed functions declared below; each forwards to the library's own
// function through a pointer resolved once with dlsym. The library headers provide the types.
//
// Both allocate from mimalloc (libmimalloc.so.2, loaded with them), not from glibc's malloc:
// reachd_curl_global_init and reachd_ares_library_init hand them mimalloc's functions
// (curl_global_init_mem, ares_library_init_mem). A transfer in flight holds about 11 KB of
// curl's (measured: 1,000 connected transfers); from glibc's arena, a round of 1,000 at once left
// those blocks as holes among the targets' long-lived ones, resident for good (the fleet bench's
// RSS per target, the fleet bench). mimalloc keeps them apart and gives freed pages back: at once, as
// reachd sets it (decommit_delay 0), unless a MIMALLOC_*_DELAY variable says otherwise.
#include <ares.h>
#include <curl/curl.h>
#include <netdb.h>
#include <stddef.h>
#include <sys/socket.h>

/// Loads the three libraries and resolves every function reachd uses. Thread-safe; loads once.
/// Returns 0, or -1 with a message (which library or symbol is missing) in `error`. Nothing
/// below may be called unless this returned 0.
int reachd_probe_libraries_load(char *error, size_t error_size);

// The functions reachd calls, as X(return type, name, parameters, arguments); V(...) for void.
#define REACHD_CURL_FUNCTIONS(X, V)                                                              \
    X(CURL *, curl_easy_init, (void), ())                                                        \
    V(curl_easy_cleanup, (CURL * handle), (handle))                                              \
    X(const char *, curl_easy_strerror, (CURLcode code), (code))                                 \
    X(CURLM *, curl_multi_init, (void), ())                                                      \
    X(CURLMcode, curl_multi_cleanup, (CURLM * multi), (multi))                                   \
    X(CURLMcode, curl_multi_add_handle, (CURLM * multi, CURL * handle), (multi, handle))         \
    X(CURLMcode, curl_multi_remove_handle, (CURLM * multi, CURL * handle), (multi, handle))      \
    X(CURLMcode, curl_multi_socket_action,                                                       \
      (CURLM * multi, curl_socket_t socket, int events, int *running),                           \
      (multi, socket, events, running))                                                          \
    X(CURLMsg *, curl_multi_info_read, (CURLM * multi, int *left), (multi, left))                \
    X(const char *, curl_multi_strerror, (CURLMcode code), (code))                               \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist * list, const char *text),      \
      (list, text))                                                                              \
    V(curl_slist_free_all, (struct curl_slist * list), (list))                                   \
    X(CURLU *, curl_url, (void), ())                                                             \
    V(curl_url_cleanup, (CURLU * url), (url))                                                    \
    X(CURLUcode, curl_url_set, (CURLU * url, CURLUPart part, const char *content, unsigned int flags), \
      (url, part, content, flags))

#define REACHD_ARES_FUNCTIONS(X, V)                                                              \
    X(int, ares_init_options, (ares_channel * channel, struct ares_options * options, int mask), \
      (channel, options, mask))                                                                  \
    V(ares_destroy, (ares_channel channel), (channel))                                           \
    V(ares_getaddrinfo,                                                                          \
      (ares_channel channel, const char *name, const char *service,                              \
       const struct ares_addrinfo_hints *hints, ares_addrinfo_callback callback, void *context), \
      (channel, name, service, hints, callback, context))                                        \
    V(ares_freeaddrinfo, (struct ares_addrinfo * info), (info))                                  \
    V(ares_process_fd, (ares_channel channel, ares_socket_t read_fd, ares_socket_t write_fd),    \
      (channel, read_fd, write_fd))                                                              \
    X(struct timeval *, ares_timeout,                                                            \
      (ares_channel channel, struct timeval * max, struct timeval * result),                     \
      (channel, max, result))                                                                    \
    X(const char *, ares_strerror, (int code), (code))                                          \
    V(ares_query,                                                                                \
      (ares_channel channel, const char *name, int dnsclass, int type, ares_callback callback,   \
       void *context),                                                                           \
      (channel, name, dnsclass, type, callback, context))                                        \
    X(int, ares_set_servers_ports, (ares_channel channel, struct ares_addr_port_node * servers), \
      (channel, servers))                                                                        \
    X(int, ares_get_servers_ports, (ares_channel channel, struct ares_addr_port_node * *servers), \
      (channel, servers))                                                                        \
    V(ares_free_data, (void *data), (data))                                                      \
    V(ares_set_local_dev, (ares_channel channel, const char *name), (channel, name))            \
    V(ares_set_local_ip4, (ares_channel channel, unsigned int local_ip), (channel, local_ip))    \
    V(ares_set_local_ip6, (ares_channel channel, const unsigned char *local_ip6),               \
      (channel, local_ip6))                                                                      \
    X(int, ares_parse_a_reply,                                                                   \
      (const unsigned char *answer, int length, struct hostent **host,                           \
       struct ares_addrttl *addresses, int *count),                                              \
      (answer, length, host, addresses, count))                                                  \
    V(ares_set_socket_functions,                                                                 \
      (ares_channel channel, const struct ares_socket_functions *functions, void *user_data),    \
      (channel, functions, user_data))

#define REACHD_DECLARE(type, name, params, args) type reachd_##name params;
#define REACHD_DECLARE_VOID(name, params, args) void reachd_##name params;
REACHD_CURL_FUNCTIONS(REACHD_DECLARE, REACHD_DECLARE_VOID)
REACHD_ARES_FUNCTIONS(REACHD_DECLARE, REACHD_DECLARE_VOID)
#undef REACHD_DECLARE
#undef REACHD_DECLARE_VOID

/// curl_global_init, with mimalloc's functions for every allocation curl makes (once, first).
CURLcode reachd_curl_global_init(long flags);
/// ares_library_init, with mimalloc's functions for every allocation c-ares makes (once, first).
int reachd_ares_library_init(int flags);
/// How long, in milliseconds, mimalloc keeps an empty page committed (its option decommit_delay).
long reachd_mimalloc_decommit_delay(void);

// curl_easy_setopt and curl_easy_getinfo are C variadics, which Swift cannot call. Each wrapper
// fixes one argument type, so the compiler checks what the option expects; the option itself
// stays a parameter. Passing the wrong kind of option is still a bug curl reports, as in C.

/// curl_easy_setopt for options that take a `long` (timeouts, flags, CONNECT_ONLY, …).
CURLcode reachd_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
/// … a C string (URL, PROTOCOLS_STR, PROXY, USERAGENT); curl copies it.
CURLcode reachd_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
/// … an opaque pointer (WRITEDATA, ERRORBUFFER); curl does not copy what it points to.
CURLcode reachd_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
/// … a string list (CONNECT_TO); not copied: it must outlive the transfer.
CURLcode reachd_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *list);
/// CURLOPT_WRITEFUNCTION, typed so that Swift can pass a `@convention(c)` closure.
CURLcode reachd_curl_easy_setopt_write_function(CURL *handle, curl_write_callback callback);
/// CURLOPT_SOCKOPTFUNCTION, typed so that Swift can pass a `@convention(c)` closure.
CURLcode reachd_curl_easy_setopt_sockopt_function(CURL *handle, curl_sockopt_callback callback);
/// curl_multi_setopt's CURLMOPT_SOCKETFUNCTION and its CURLMOPT_SOCKETDATA: curl says through
/// `callback` which of its sockets to watch for what (the engine's epoll loop).
CURLMcode reachd_curl_multi_setopt_socket_function(CURLM *multi, curl_socket_callback callback, void *data);
/// curl_multi_setopt's CURLMOPT_TIMERFUNCTION and its CURLMOPT_TIMERDATA: curl says through
/// `callback` when it next wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`.
CURLMcode reachd_curl_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback callback, void *data);
/// curl_easy_getinfo for `long` answers (RESPONSE_CODE).
CURLcode reachd_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
/// curl_easy_getinfo for `curl_off_t` answers: the *_TIME_T timings, in microseconds.
CURLcode reachd_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

/// CURLMsg keeps its result in a union; read through a function so the importer's naming of it
/// does not matter.
static inline CURLcode reachd_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

/// How the sockets of a channel given `reachd_ares_own_sockets` are made, and the errno of the
/// last socket call that failed.
struct reachd_ares_sockets {
    /// The errno of the last socket call that failed (EAGAIN and EINPROGRESS aside); 0 while none has.
    int last_errno;
    /// Non-zero: UDP sockets set IP_RECVERR / IPV6_RECVERR, so that a router's destination
    /// unreachable (EHOSTUNREACH, ENETUNREACH) fails the next receive instead of being dropped
    /// as a soft error — only a port unreachable (ECONNREFUSED) does without it.
    int hear_router_errors;
    /// SO_BINDTODEVICE, when not empty.
    char device[16];
    /// The source address to bind to, of each family, when `has_source4` / `has_source6`.
    int has_source4;
    unsigned char source4[4];
    int has_source6;
    unsigned char source6[16];
};

/// Gives `channel` socket functions that make its sockets as c-ares' own would (non-blocking,
/// close-on-exec, TCP_NODELAY, bound to `sockets`' device and source: c-ares configures none of
/// that for sockets it does not make) and record in `sockets->last_errno` the errno of the last
/// socket call that failed. c-ares 1.18 reports every socket error as ARES_ECONNREFUSED; this
/// tells an ICMP port unreachable (ECONNREFUSED) from a router's host or network unreachable
/// (EHOSTUNREACH, ENETUNREACH). `sockets` must outlive the channel.
void reachd_ares_own_sockets(ares_channel channel, struct reachd_ares_sockets *sockets);

/// ARES_SOCKET_BAD: "no descriptor" for ares_process_fd, which then only handles timeouts.
static const ares_socket_t reachd_ares_socket_bad = ARES_SOCKET_BAD;

#endif
