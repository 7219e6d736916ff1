# cachesh — build, demo and test. Every target installs what it needs on Debian.
SWIFT ?= swift
BIN_DEBUG := .build/debug/cachesh
BIN_RELEASE := .build/release/cachesh
PROXY_RELEASE := .build/release/cachesh-proxy

.PHONY: deps build release install demo test test-swift test-e2e test-interactive test-transcripts test-live-app test-replay test-http test-http-peers bench bench-micro bench-micro-update bench-replay bench-replay-jobs bench-replay-shards bench-http bench-proxy bench-explore bench-attach attack attack-smoke clean

# System packages a fresh Debian machine with Swift lacks.
deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The shipped build: Swift's libraries, SQLite, libedit and libstdc++ linked in (scripts/static-libs.sh);
# no $ORIGIN run path, as it loads no library of its own (the loader does not look beside it).
# Its two executables by name: a build of every product would also link GRDB's dynamic library,
# which --static-swift-stdlib cannot. cachesh-proxy is `cachesh proxy`, which cachesh runs from beside itself.
SHIPPED_BUILD = CACHESH_STATIC_LIBS=$$(./scripts/static-libs.sh) $(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath
release: deps
	$(SHIPPED_BUILD) --product cachesh
	$(SHIPPED_BUILD) --product cachesh-proxy

# Installs the shipped build: cachesh and cachesh-proxy (the executable `cachesh proxy` runs, found
# beside cachesh) in $(PREFIX)/bin, the man page in $(PREFIX)/share/man/man1; DESTDIR stages it.
PREFIX ?= /usr/local
install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN_RELEASE) $(PROXY_RELEASE) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/cachesh.1 $(DESTDIR)$(PREFIX)/share/man/man1/

# Builds cachesh and runs the guided tour of every behaviour, each command and comment shown before its reply.
demo: release
	$(BIN_RELEASE) --echo Examples/tour.cachesh

# Every test: unit and end-to-end (Swift Testing), transcripts, the live example, the interactive shell in a terminal.
# The Swift tests' temporary files go to one directory of their own (TMPDIR), removed when they
# end, passed or not, so that runs leave nothing behind in /tmp. Like /tmp, anyone may make files
# in it (sticky): a test runs cachesh as another user on a store there.
test: deps
	$(SWIFT) build
	@scratch=$$(mktemp -d "$${TMPDIR:-/tmp}/cachesh-test.XXXXXX") && trap 'rm -rf "$$scratch"' EXIT && \
	chmod 1777 "$$scratch" && echo "TMPDIR=$$scratch $(SWIFT) test" && TMPDIR=$$scratch $(SWIFT) test
	$(MAKE) --no-print-directory test-transcripts
	$(MAKE) --no-print-directory test-live-app
	$(MAKE) --no-print-directory test-interactive
	$(MAKE) --no-print-directory test-replay
	$(MAKE) --no-print-directory test-http
	$(MAKE) --no-print-directory test-http-peers

test-transcripts:
	$(BIN_DEBUG) --verify Examples/*.transcript README.md
	$(BIN_DEBUG) --verify --safe Examples/races/*.transcript
	$(BIN_DEBUG) --verify --safe Examples/har/*.transcript

# The live example: its API on a free loopback port, a recorded user session verified, then the
# committed Examples/live-app/session.transcript (`Examples/live-app/run.sh --update` replaces it).
test-live-app:
	SWIFT=$(SWIFT) CACHESH_BIN=$(BIN_DEBUG) Examples/live-app/run.sh

test-interactive:
	CACHESH_BIN=$(BIN_DEBUG) python3 Tests/interactive/test_interactive.py

# The reliability suite (kill -9, corruption, two processes, hostile scripts, libFuzzer): minutes.
attack: build
	python3 Tests/attack/attack.py $(BIN_DEBUG)

# A few trials of each attack, for CI.
attack-smoke: build
	python3 Tests/attack/attack.py $(BIN_DEBUG) --smoke

# Real HAR files (mitmproxy) and a second RFC 9111 cache (hishel), each in its own pinned Python
# environment under .build/peer-venvs, against replay FILE.har; docs/http-conformance.md lists
# every exchange where the two decide differently, with its RFC reason.
test-http-peers:
	Tests/http-peers/venvs.sh
	CACHESH_BIN=$(BIN_DEBUG) python3 Tests/http-peers/run.py

# replay's and the engine's (ns policy=) hit counts against libcachesim's on three seeded traces.
test-replay:
	CACHESH_BIN=$(BIN_DEBUG) python3 Tests/replay/compare_libcachesim.py
	CACHESH_BIN=$(BIN_DEBUG) python3 Tests/replay/compare_engine.py

bench: deps
	$(SWIFT) run -c release --package-path Benchmarks CoreBenchmarks

# The core's micro-benchmarks against their checked-in allocation and instruction counts
# (Benchmarks/Micro/Thresholds): exit 2 when one got worse, 4 when one got better past its margin.
bench-micro: deps
	cd Benchmarks/Micro && $(SWIFT) package benchmark thresholds check

# After an intended change: measures them again and rewrites Benchmarks/Micro/Thresholds.
bench-micro-update: deps
	SWIFT=$(SWIFT) Benchmarks/Micro/update-thresholds.sh

# cachesh attach on a running app (release builds): keys' time to answer, a change's delay to
# watch, and the inspector's cost per cache call (callgrind's instructions), each beside its baseline.
bench-attach: deps
	python3 Benchmarks/attach-bench.py

# replay against libcachesim on the same 1M-request trace: requests/s and peak memory.
bench-replay: deps
	python3 Benchmarks/replay-bench.py

# explore on every Examples/explore scenario (release build): time to the first failure under its
# naive switch, the shrunk transcript's length, the default policy to depth 6 with and without
# partial-order reduction, schedules a second forked beside the setup run again (Benchmarks/README.md).
bench-explore: deps
	$(SWIFT) build -c release --product cachesh
	python3 Benchmarks/explore-bench.py

# replay jobs=2 against jobs=1 on a 4 policies x 8 sizes sweep: wall time, CPU, peak memory.
bench-replay-jobs: deps
	python3 Benchmarks/replay-jobs-bench.py

# A sweep over a zstd corpus as one process and as parts (shard=I/N) merged: wall, CPU, peak memory.
bench-replay-shards: deps
	python3 Benchmarks/replay-shards-bench.py

# The public HTTP cache test suite (../shared/cache-tests, its origin server on node) against
# `cachesh proxy`, both on free loopback ports: fails when a test listed in
# Tests/http/expected-pass.txt does not pass (a regression).
test-http:
	CACHESH_BIN=$(BIN_DEBUG) python3 Benchmarks/http-suite.py --cache cachesh --expected Tests/http/expected-pass.txt --attach

# The suite against no cache, Debian's squid and `cachesh proxy` (the release build), counts
# side by side with a table of failures by section.
bench-http: release
	CACHESH_BIN=$(BIN_RELEASE) python3 Benchmarks/http-suite.py --cache none --cache squid --cache cachesh

# cachesh proxy's hit throughput and added latency beside squid's, wrk on one loopback origin
# (apt-get install nodejs squid wrk; the release build).
bench-proxy: deps
	$(SWIFT) build -c release
	python3 Benchmarks/proxy-bench.py --runs 3

clean:
	rm -rf .build Benchmarks/.build Examples/live-app/client/.build
