#ifndef CACHESH_CZLIB_SHIM_H
#define CACHESH_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a macro, which Swift does not import: this one reads gzip members only
   (window bits 15, plus 16 for the gzip wrapper). */
static inline int cachesh_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
