#ifndef REACHD_CMALLOC_SHIM_H
#define REACHD_CMALLOC_SHIM_H

// mallopt(3) and malloc_trim(3), which Glibc's module map leaves out: how glibc's allocator keeps memory
// (`MemoryPolicy`) and gives it back (`AllocatorTrim`). Part of glibc itself: nothing to link.
#include <malloc.h>

#endif
