// The child that valgrind runs to count a benchmark's instructions (CORE_MICRO_COUNT set; see
// ValgrindCount in CoreMicro.swift) does its work here, as the executable loads, and exits before
// main. The harness's main parks the main thread in libdispatch's rt_sigsuspend, on a signal mask
// in read-only memory that valgrind 3.19 writes to, and valgrind dies of it; a count done first
// never gets there.
#include <stdlib.h>

// Defined in CoreMicro.swift (@_cdecl); weak so that this target links on its own.
extern void core_micro_count(const char *spec) __attribute__((weak));

__attribute__((constructor)) static void core_micro_count_hook(void) {
    const char *spec = getenv("CORE_MICRO_COUNT");
    if (spec != NULL && core_micro_count != NULL) {
        core_micro_count(spec);  // does not return
    }
}
