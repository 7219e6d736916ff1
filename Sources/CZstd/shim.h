#ifndef CACHESH_CZSTD_SHIM_H
#define CACHESH_CZSTD_SHIM_H
#include <zstd.h>
#endif
