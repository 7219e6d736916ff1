# cachesh — build, demo and test. Every target installs what it needs on Debian.
SWIFT ?= swift
BIN_DEBUG := .build/debug/cachesh
BIN_RELEASE := .build/release/cachesh

.PHONY: deps build release demo test test-swift test-e2e test-interactive test-transcripts test-live-app bench clean

# System packages a fresh Debian machine with Swift lacks.
deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --static-swift-stdlib

# Builds cachesh and runs the guided tour of every behaviour.
demo: release
	$(BIN_RELEASE) Examples/tour.cachesh

# Every test: unit and end-to-end (Swift Testing), transcripts, the live example, the interactive shell in a terminal.
test: deps
	$(SWIFT) build
	$(SWIFT) test
	$(MAKE) --no-print-directory test-transcripts
	$(MAKE) --no-print-directory test-live-app
	$(MAKE) --no-print-directory test-interactive

test-transcripts:
	$(BIN_DEBUG) --verify Examples/*.transcript README.md

# The live example: its API on a free loopback port, a recorded user session verified, then the
# committed Examples/live-app/session.transcript (`Examples/live-app/run.sh --update` replaces it).
test-live-app:
	SWIFT=$(SWIFT) CACHESH_BIN=$(BIN_DEBUG) Examples/live-app/run.sh

test-interactive:
	CACHESH_BIN=$(BIN_DEBUG) python3 Tests/interactive/test_interactive.py

bench: deps
	$(SWIFT) run -c release --package-path Benchmarks CoreBenchmarks

clean:
	rm -rf .build Benchmarks/.build Examples/live-app/client/.build
