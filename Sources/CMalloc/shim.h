#ifndef REACHD_CMALLOC_SHIM_H
#define REACHD_CMALLOC_SHIM_H

// mallopt(3), which Glibc's module map leaves out: how glibc's allocator keeps memory
// (`MemoryPolicy`). Part of glibc itself: nothing to link.
#include <malloc.h>

#endif
