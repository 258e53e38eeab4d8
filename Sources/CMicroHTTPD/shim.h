#ifndef REACHD_CMICROHTTPD_SHIM_H
#define REACHD_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <microhttpd.h>

// Swift cannot call C variadics nor import function-like or cast macros: these wrap the few
// libmicrohttpd entry points and constants reachd needs.

/// MHD_SIZE_UNKNOWN: a response of unknown length (sent chunked).
static const uint64_t reachd_mhd_size_unknown = MHD_SIZE_UNKNOWN;

/// MHD_CONTENT_READER_END_OF_STREAM: the reader's "done, send the final chunk".
static const ssize_t reachd_mhd_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;

/// MHD_CONTENT_READER_END_WITH_ERROR: the reader's "abort this connection".
static const ssize_t reachd_mhd_end_with_error = MHD_CONTENT_READER_END_WITH_ERROR;

/// MHD_RESPMEM_MUST_COPY: the importer renames this enum's cases unpredictably; one spelling.
static const enum MHD_ResponseMemoryMode reachd_mhd_must_copy = MHD_RESPMEM_MUST_COPY;

/// The request header a value is looked up in (MHD_HEADER_KIND), for the same reason.
static inline const char *reachd_mhd_request_header(struct MHD_Connection *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

/// MHD_set_connection_option is variadic: sets one connection's idle timeout in seconds.
static inline void reachd_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

/// MHD_get_connection_info is variadic: a connection's socket, or -1.
static inline int reachd_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// MHD_get_connection_info is variadic: a TLS connection's GnuTLS session, or NULL.
static inline void *reachd_mhd_connection_tls_session(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return info ? info->tls_session : NULL;
}

/// Whether a connection notification is MHD_CONNECTION_NOTIFY_STARTED.
static inline int reachd_mhd_is_connection_start(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/// Whether a connection notification is MHD_CONNECTION_NOTIFY_CLOSED.
static inline int reachd_mhd_is_connection_close(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_CLOSED;
}

/// ioctl is variadic: bytes in a TCP socket's send queue not yet acknowledged (SIOCOUTQ), or -1.
static inline int reachd_socket_unsent_bytes(int socket) {
    int unsent = 0;
    return ioctl(socket, SIOCOUTQ, &unsent) == 0 ? unsent : -1;
}

/// MHD_set_response_options is variadic: a response sent without chunks and without a length
/// (MHD_RF_HTTP_1_0_COMPATIBLE_STRICT: the connection closes after it).
static inline void reachd_mhd_set_unframed(struct MHD_Response *response) {
    MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END);
}

/// MHD_start_daemon is variadic; every option is passed as one MHD_OPTION_ARRAY instead.
static inline struct MHD_Daemon *reachd_mhd_start(unsigned int flags,
                                                  MHD_AcceptPolicyCallback accept_policy,
                                                  MHD_AccessHandlerCallback handler,
                                                  void *cls,
                                                  struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, accept_policy, cls, handler, cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

#endif
