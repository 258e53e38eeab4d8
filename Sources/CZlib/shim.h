#ifndef REACHD_CZLIB_SHIM_H
#define REACHD_CZLIB_SHIM_H

// zlib's one-shot compress2/uncompress, for the changes `/changes` keeps (`KeptChange`): JSON
// that repeats its field names, kept for hours. Nothing here needs wrapping.
#include <zlib.h>

#endif
