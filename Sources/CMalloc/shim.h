#ifndef CACHESH_CMALLOC_SHIM_H
#define CACHESH_CMALLOC_SHIM_H
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <malloc.h>
#endif

/* glibc's malloc serves a block of at least its mmap threshold (128 KiB to start with) from a
   mapping of its own, given back to the system when freed. But when such a block is freed it
   raises the threshold to that block's size (up to 32 MiB): from then on the engine's tables
   (key and id indexes, expiry FIFOs, recency queues), which grow by copying into a larger block,
   come from the heap, and the old blocks they free stay resident, reused by nothing when the
   values are held in the records (some 25 bytes an entry at 1 M entries). Setting the threshold
   keeps it where it starts and turns the raise off, so every freed block of 128 KiB or more goes
   back to the system. A threshold the user set (MALLOC_MMAP_THRESHOLD_, or glibc.malloc.
   mmap_threshold in GLIBC_TUNABLES) is left as it is. Elsewhere (another C library) nothing. */
static inline void cachesh_malloc_return_large_blocks(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
    if (getenv("MALLOC_MMAP_THRESHOLD_") != NULL) return;
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (tunables != NULL && strstr(tunables, "mmap_threshold") != NULL) return;
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}
#endif
