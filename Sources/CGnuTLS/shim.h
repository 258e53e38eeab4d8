#ifndef REACHD_CGNUTLS_SHIM_H
#define REACHD_CGNUTLS_SHIM_H

// GnuTLS, which libmicrohttpd's TLS is built on: reachd reads the web config's certificates and
// keys with it (so a mismatch is refused before it is served) and sets each new connection's
// credentials, client-certificate request and protocol versions on libmicrohttpd's session.
// The client commands use it for --tls.
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gnutls/crypto.h>

/// GNUTLS_E_AGAIN and GNUTLS_E_INTERRUPTED: a non-blocking call to repeat (macros Swift imports
/// as plain Int32 constants, named here once so the intent is explicit).
static inline int reachd_gnutls_should_retry(int code) {
    return code == GNUTLS_E_AGAIN || code == GNUTLS_E_INTERRUPTED;
}

/// gnutls_free is a function-like macro over a function pointer: this calls the pointer.
static inline void reachd_gnutls_free(void *pointer) {
    (gnutls_free)(pointer);
}

#endif
