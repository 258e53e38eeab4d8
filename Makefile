# reachd — the two commands a newcomer needs are `make run` and `make test`.
# Both install what is missing first (Debian/Ubuntu packages; Swift 6 must already be on PATH).

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VENV := .venv-test
# Runtime and build needs: the C libraries (HTTP server, netlink, outbound probes: libcurl and
# c-ares), pkg-config to find them.
DEB_BUILD := libmicrohttpd-dev libmnl-dev libcurl4-openssl-dev libc-ares-dev pkg-config
# Test needs: curl and iproute2 for black-box tests, python3-venv for the pytest suite, dnsmasq
# and openssl for the worlds the probe tests build (a real DNS server, a TLS server).
DEB_TEST := iproute2 curl python3 python3-venv dnsmasq-base openssl chromium chromium-driver prometheus

.PHONY: run test deps test-deps build release format swift-test e2e packaging fuzz fuzz-ci fuzz-merge fuzz-record bench clean

## Install what is missing, build a release binary and serve on port 9478 (Ctrl-C stops it).
run: deps release
	./.build/release/reachd $(ARGS)

## Install what is missing and run every test: Swift unit and kernel tests, black-box tests
## of the running binary, the OpenAPI contract, the Docker/Kubernetes packaging checks, and a
## short budget of every fuzz target.
test: deps test-deps format build swift-test e2e packaging fuzz-ci

deps:
	@command -v swift >/dev/null || { echo "Swift 6 is needed: https://www.swift.org/install/linux/"; exit 1; }
	@missing=$$(for p in $(DEB_BUILD); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; fi

test-deps: deps
	@missing=$$(for p in $(DEB_TEST); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; fi
	@[ -x $(VENV)/bin/pip ] || python3 -m venv $(VENV)
	@$(VENV)/bin/pip install -q -r Tests/e2e/requirements.txt

# Every test phase runs under a time limit (scripts/with-time-limit.sh): a hang fails the run
# with the name of the test that was running, instead of holding CI until its 90 minutes.
LIMIT := bash scripts/with-time-limit.sh

build:
	$(LIMIT) build 1200 swift build --build-tests

release:
	swift build -c release --static-swift-stdlib

format:
	bash scripts/check-format.sh

## Swift Testing: parser, derive, JSON, and the monitor against the real kernel in namespaces (root).
swift-test: build
	$(LIMIT) swift-test 900 swift test --skip-build; status=$$?; \
	bash scripts/remove-stale-namespaces.sh || { echo "swift-test left namespaces behind"; status=1; }; \
	exit $$status

## pytest against the real binary: HTTP contract, SSE, hostile clients, namespaces, fan-out, shutdown.
e2e: build
	$(LIMIT) e2e 1800 $(VENV)/bin/python -u -m pytest Tests/e2e -v --timeout=300; status=$$?; \
	bash scripts/remove-stale-namespaces.sh || { echo "e2e left namespaces behind"; status=1; }; \
	exit $$status

packaging:
	$(LIMIT) packaging 600 bash scripts/check-packaging.sh

## libFuzzer with AddressSanitizer (Fuzz/): each target 1,000,000 inputs (at most 30 min each);
## fails on a crash, a leak, a timeout or a broken invariant. Builds in .build-fuzz first.
fuzz: deps
	bash scripts/fuzz.sh --runs 1000000 --seconds 1800

## What CI runs: 30 s of each fuzz target, after the build (part of make test).
fuzz-ci: deps
	$(LIMIT) fuzz 1500 bash scripts/fuzz.sh --seconds 30

## Minimizes what the fuzz runs found, with the committed corpus, into Fuzz/Corpus (-merge=1).
fuzz-merge: deps
	bash scripts/fuzz.sh --merge

## Records real netlink traffic and real reachd answers as seeds (root; namespaces of its own).
fuzz-record: deps
	python3 Fuzz/record-netlink.py Fuzz/Corpus/FuzzNetlink
	swift build --product reachd
	python3 Fuzz/record-client.py .build/debug/reachd Fuzz/Corpus/FuzzClient

## Side-by-side benchmark against nginx and nchan; writes BENCHMARKS.md (see bench/README.md).
bench: deps
	bash bench/run.sh

clean:
	rm -rf .build .build-release .build-fuzz $(VENV)
