#!/usr/bin/env bash
# Installs the system packages cachesh needs when they are missing (Debian; run as root or with sudo).
set -euo pipefail
need=()
pkg-config --exists libedit 2>/dev/null || need+=(libedit-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v tmux >/dev/null || need+=(tmux)
[ -e /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
# replay reads gzip-compressed traces through zlib (its headers, and libz.a for make release).
[ -e /usr/include/zlib.h ] || need+=(zlib1g-dev)
# ... and zstd-compressed ones through libzstd.
[ -e /usr/include/zstd.h ] || need+=(libzstd-dev)
# The replay tests compress their traces with gzip and zstd.
command -v zstd >/dev/null || need+=(zstd)
# The shard test runs replay's parts as separate processes with GNU parallel.
command -v parallel >/dev/null || need+=(parallel)
# The micro-benchmarks' instruction counts (make bench-micro) and compare-builds.py run valgrind.
command -v valgrind >/dev/null || need+=(valgrind)
command -v objcopy >/dev/null || need+=(binutils)
# The static archives the shipped build links in (make release, scripts/static-libs.sh).
lib=/usr/lib/$(cc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
[ -e "$lib/libtinfo.a" ] || need+=(libncurses-dev)
[ -e "$lib/libbsd.a" ] || need+=(libbsd-dev)
[ -e "$lib/libmd.a" ] || need+=(libmd-dev)
# make test-http runs the public HTTP cache test suite's origin server and client on node;
# make bench-http measures squid beside cachesh proxy, and the proxy benchmark loads both with wrk.
command -v node >/dev/null || need+=(nodejs)
command -v squid >/dev/null || need+=(squid)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -c 'import pexpect' 2>/dev/null || python3 -m pip install -q pexpect
# The interactive tests draw the shell on pyte, a terminal emulator that does not re-wrap on resize.
python3 -c 'import pyte' 2>/dev/null || python3 -m pip install -q pyte
# replay's comparison test and benchmark run libCacheSim's Python package (a wheel: quick).
python3 -c 'import libcachesim' 2>/dev/null || python3 -m pip install -q libcachesim==0.3.5
