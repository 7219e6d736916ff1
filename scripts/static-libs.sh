#!/usr/bin/env bash
# Makes DIR (default .build/static-libs) hold links to the static archives the shipped build of
# cachesh links in: SQLite, libedit with what it needs (ncurses' tinfo, libbsd, libmd), zlib, libzstd and
# libstdc++. The linker looks in DIR before the system's folders (Package.swift, CACHESH_STATIC_LIBS),
# so each of these is linked from its archive instead of loaded at every start.
#
#   scripts/static-libs.sh [DIR]     prints DIR's absolute path
set -euo pipefail
dir=${1:-.build/static-libs}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
multiarch=$(${CC:-cc} -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
missing=()
for pair in sqlite3:libsqlite3-dev edit:libedit-dev tinfo:libncurses-dev bsd:libbsd-dev md:libmd-dev z:zlib1g-dev zstd:libzstd-dev; do
    name=${pair%%:*}
    archive=/usr/lib/$multiarch/lib$name.a
    if [[ -f $archive ]]; then ln -sf "$archive" "$dir/lib$name.a"; else missing+=("${pair#*:}"); fi
done
# The Swift toolchain's clang++ knows where GCC's libstdc++.a is when no c++ is installed.
stdcxx=""
for cxx in "${CXX:-c++}" clang++ g++; do
    found=$("$cxx" -print-file-name=libstdc++.a 2>/dev/null || true)
    if [[ $found == /* && -f $found ]]; then stdcxx=$found; break; fi
done
if [[ -n $stdcxx ]]; then ln -sf "$stdcxx" "$dir/libstdc++.a"; else missing+=("libstdc++-dev"); fi
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "static-libs.sh: missing static libraries; install: ${missing[*]}" >&2
    exit 1
fi
echo "$dir"
