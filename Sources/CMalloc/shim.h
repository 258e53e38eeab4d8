#ifndef REACHD_CMALLOC_SHIM_H
#define REACHD_CMALLOC_SHIM_H

// mallopt(3) and malloc_trim(3), which Glibc's module map leaves out: how glibc's allocator keeps memory
// (`LargeDocuments.applyAllocatorPolicy`) and gives it back (`LargeDocuments.trimAfterPublishing`). Part of glibc itself: nothing to link.
#include <malloc.h>

#endif
