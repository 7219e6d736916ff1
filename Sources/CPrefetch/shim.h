#ifndef CACHESH_CPREFETCH_SHIM_H
#define CACHESH_CPREFETCH_SHIM_H

/* A hint to the processor to bring the cache line at `address` closer, issued without waiting
   for it (one instruction, `prefetcht0` on x86-64, `prfm` on arm64): no fault, whatever the
   address; nothing changes but timing. The engine names the lines the next eviction will read
   (the next victim's entry and its key's bucket), so that their misses overlap the work of the
   put before it instead of each waiting on the last (Benchmarks/README.md). Where the compiler
   has no such built-in, nothing. */
static inline void cachesh_prefetch(const void *address) {
#if defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
    __builtin_prefetch(address, 0, 3);
#endif
#endif
}

#endif
