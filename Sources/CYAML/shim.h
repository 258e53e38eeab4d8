#ifndef REACHD_CYAML_SHIM_H
#define REACHD_CYAML_SHIM_H

// libyaml's event parser, for the web config (`--web-config-file`). Linked directly: it is small
// (Yams, the Swift wrapper around the same C code, would bring all of Foundation with it: +43 MiB
// of binary and +5 MiB of idle RSS for every reachd, measured). Nothing here needs wrapping.
#include <yaml.h>

#endif
