#ifndef REACHD_CCRYPT_SHIM_H
#define REACHD_CCRYPT_SHIM_H

// libxcrypt's crypt_r, which verifies bcrypt hashes ($2a$, $2b$, $2y$) for basic auth. Nothing
// here needs wrapping: the header is imported as it is.
#include <crypt.h>

#endif
