# reachd — the two commands a newcomer needs are `make run` and `make test`; `make check` is the
# quick one to run before each commit. All install what is missing first (Debian/Ubuntu packages;
# Swift 6 must already be on PATH).

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VENV := .venv-test
# Runtime and build needs: the C libraries (HTTP server, netlink, outbound probes: libcurl and
# c-ares, and mimalloc, which they allocate from; GnuTLS and libxcrypt for --web-config-file's TLS and bcrypt), pkg-config to find them.
DEB_BUILD := libmicrohttpd-dev libmnl-dev libcurl4-openssl-dev libc-ares-dev libmimalloc2.0 libgnutls28-dev libcrypt-dev libyaml-dev zlib1g-dev pkg-config
# Test needs: curl and iproute2 for black-box tests, python3-venv for the pytest suite, dnsmasq
# and openssl for the worlds the probe tests build (a real DNS server, a TLS server), gcc for
# the C helpers the e2e tests compile (the netlink fault shim, the 10,000-stream client),
# debootstrap for the runtime image built without Docker (check-image), shellcheck for the
# workflow's run: steps (actionlint calls it), systemd for systemd-analyze (the packaging check
# verifies the unit `make install` installs), iputils-ping for the icmp:// tests (the world's
# check, and another process pinging beside reachd), tinyproxy for the proxy tests (a real HTTP
# proxy the test starts with its own config).
DEB_TEST := iproute2 curl python3 python3-venv dnsmasq-base openssl chromium chromium-driver prometheus gcc debootstrap shellcheck systemd iputils-ping tinyproxy
# What `make check`'s tests start on loopback: a DNS server and a TLS server (no root needed).
DEB_CHECK := dnsmasq-base openssl
# The image the Kubernetes manifests name: reachd:VERSION, VERSION as `reachd --version` says.
IMAGE := reachd:$(shell sed -nE 's/^ *static let version = "([^"]+)".*/\1/p' Sources/reachd/Reachd.swift)

.PHONY: run test check check-deps deps test-deps clean-leftovers build release install uninstall format swift-test check-sanitizers sanitize-thread sanitize-address \
	e2e packaging check-image image print-image measure-limits bench bench-ab clean fuzz-http scale soak auth-flood reliability \
	fuzz fuzz-ci fuzz-merge fuzz-record page-screenshot

## Install what is missing, build a release binary and serve on port 9478 (Ctrl-C stops it).
run: deps release
	./.build/release/reachd $(ARGS)

## Install what is missing and run every test: Swift unit and kernel tests (plain, then under
## ThreadSanitizer and AddressSanitizer), black-box tests of the running binary, the OpenAPI
## contract, the Docker/Kubernetes packaging checks, the runtime image built and run without
## Docker, and a short budget of every fuzz target.
test: deps test-deps clean-leftovers format build swift-test check-sanitizers e2e packaging check-image fuzz-ci

## For contributors, under 2 minutes on a warm build: the format check, the build, and the Swift
## tests that need neither root nor network namespaces: all but the KernelTests suites (the probe
## tests start dnsmasq and openssl on loopback). `make test`, what CI runs, is everything.
check: check-deps format build
	$(LIMIT) check 600 swift test --skip-build --skip KernelTests

check-deps: deps
	@missing=$$(for p in $(DEB_CHECK); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; fi

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

# Where `make install` puts reachd ($(PREFIX)/bin) and its systemd unit ($(PREFIX)/lib/systemd/system:
# systemd reads /usr/local/lib/systemd/system, and /etc/systemd/system stays the administrator's).
# DESTDIR stages the files elsewhere (a package root); the unit names $(PREFIX)/bin, not DESTDIR.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
UNITDIR := $(PREFIX)/lib/systemd/system
# The binary installed: the release build (REACHD_RELEASE_BIN: one already built that way).
RELEASE_BIN ?= .build/release/reachd

## Install what `make release` built — reachd and reachd.service (PREFIX=/usr/local, DESTDIR) —
## without building anything: `make release && sudo make install` (as root the compiler never
## runs: Swift need not be on root's PATH, and no .build is left owned by root); then
## `sudo systemctl daemon-reload && sudo systemctl enable --now reachd`.
install:
	@[ -x $(RELEASE_BIN) ] || { echo "make install: no $(RELEASE_BIN) to install: run 'make release' first (as yourself), then 'sudo make install'" >&2; exit 1; }
	install -D -m 0755 $(RELEASE_BIN) $(DESTDIR)$(BINDIR)/reachd
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' deploy/systemd/reachd.service.in > $(DESTDIR)$(UNITDIR)/reachd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/reachd.service

## What install installed (stop and disable the service first: `systemctl disable --now reachd`).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/reachd $(DESTDIR)$(UNITDIR)/reachd.service

format:
	bash scripts/check-format.sh

## What a run that did not finish (killed, machine restarted) left in the kernel and /etc/netns:
## removed before the phases start, so their own leak checks see only their own leftovers.
clean-leftovers:
	bash scripts/remove-stale-namespaces.sh --before

## Swift Testing: parser, derive, JSON, and the monitor against the real kernel in namespaces (root).
swift-test: build
	$(LIMIT) swift-test 900 swift test --skip-build; status=$$?; \
	bash scripts/remove-stale-namespaces.sh || { echo "swift-test left namespaces behind"; status=1; }; \
	exit $$status

## The whole Swift suite under ThreadSanitizer, then AddressSanitizer with LeakSanitizer (root),
## each built in its own directory (.build-tsan, .build-asan); any report fails the phase.
check-sanitizers: sanitize-thread sanitize-address

sanitize-thread sanitize-address: sanitize-%: test-deps
	$(LIMIT) sanitize-$* 1800 bash scripts/check-sanitizers.sh $*; status=$$?; \
	bash scripts/remove-stale-namespaces.sh || { echo "sanitize-$* left namespaces behind"; status=1; }; \
	exit $$status

## docs/page.png, the README's picture: the page in headless chromium at 1,200 px against a reachd with
## targets, connectivity and DNS in a namespace world (root and chromium, as for e2e: make test-deps).
page-screenshot:
	swift build --product reachd
	REACHD_PAGE_SCREENSHOT=docs/page.png $(VENV)/bin/python -m pytest Tests/e2e/test_page_problems.py \
		-k nothing_leaves_its_card -q -s --timeout=180

## pytest against the real binary: HTTP contract, SSE, hostile clients, namespaces, fan-out, shutdown.
e2e: build
	$(LIMIT) e2e 2700 $(VENV)/bin/python -u -m pytest Tests/e2e -v --timeout=300; status=$$?; \
	bash scripts/remove-stale-namespaces.sh || { echo "e2e left namespaces behind"; status=1; }; \
	exit $$status

packaging:
	$(LIMIT) packaging 600 bash scripts/check-packaging.sh

## The image deploy/kubernetes/ runs (Docker; not part of `make test`). Then load it into the
## cluster's nodes: `kind load docker-image $(IMAGE)`, `minikube image load $(IMAGE)`, or on a
## containerd node `docker save $(IMAGE) | ctr -n k8s.io images import -` (deploy/kubernetes/README.md).
image:
	docker build -t $(IMAGE) .

## The tag `make image` gives (scripts/check-packaging.sh compares it with the manifests').
print-image:
	@echo $(IMAGE)

## The Dockerfile's runtime stage built for real (debootstrap minbase + its RUN, cached in
## .build-image/) and reachd run in it as the image's user: serving, HEALTHCHECK, probes.
check-image: test-deps
	$(LIMIT) check-image 900 bash scripts/check-runtime-image.sh; status=$$?; \
	bash scripts/remove-stale-namespaces.sh || { echo "check-image left namespaces behind"; status=1; }; \
	exit $$status

## What a hostile client can cost a release reachd, measured on loopback in a namespace: memory
## per stream, CPU per request, limits and timeouts (~4 min). Writes docs/reports/limits.md.
measure-limits: deps
	@command -v wrk >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk; }
	swift build -c release --static-swift-stdlib --product reachd --scratch-path .build-release
	$(SUDO) python3 scripts/measure-limits.py --binary .build-release/x86_64-unknown-linux-gnu/release/reachd \
		--report docs/reports/limits.md

# The long runs (docs/RELIABILITY.md): the load tests of Tests/e2e at full size, each target writing
# its figures to docs/reports/reliability-TARGET.md. `make e2e` runs the same tests at reduced
# sizes and writes no report. REACHD_BIN=path/to/reachd tests another build.
FULL_SIZE = REACHD_SCALE=full REACHD_REPORT=docs/reports/reliability-$(1).md $(LIMIT) $(1) $(2) $(VENV)/bin/python -u -m pytest $(3) -v -s --timeout=$(2); \
	status=$$?; bash scripts/remove-stale-namespaces.sh || { echo "$(1) left namespaces behind"; status=1; }; \
	exit $$status

## 100,000 mutated HTTP requests at the running binary; /status timed throughout (about 4 min).
fuzz-http: test-deps build
	$(call FULL_SIZE,fuzz-http,900,Tests/e2e/test_http_mutation.py)

## 10,000 streams with 20 changes; SIGTERM with 10,000 streams; 1,000 slowloris for 2 min (about 3 min).
scale: test-deps build
	$(call FULL_SIZE,scale,900,Tests/e2e/test_scale.py Tests/e2e/test_slowloris.py)

## 10 minutes of churn, network changes and scrapes; RSS and descriptors must stay flat (about 11 min).
soak: test-deps build
	$(call FULL_SIZE,soak,1200,Tests/e2e/test_soak.py)

## 16 connections guessing passwords against basic auth at bcrypt cost 10: health, a cached scrape
## and a stream's heartbeats timed under the flood and without it (about 1 min).
auth-flood: test-deps build
	$(call FULL_SIZE,auth-flood,300,Tests/e2e/test_auth_flood.py)

## fuzz-http, scale, soak and auth-flood (about 19 min).
reliability: fuzz-http scale soak auth-flood

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

## Side-by-side benchmark against nginx, nchan and blackbox_exporter; writes docs/reports/benchmarks.md (bench/README.md).
bench: deps
	bash bench/run.sh

## Before handing in a change to a hot path (request handling, SSE writes, the monitor, the probe
## engine): the working tree's release build against BASE's (default origin/main, else HEAD~1),
## short phases interleaved in one run; fails when a figure is worse than the noise it measured
## (bench/README.md). Root; under 10 minutes on a warm build. NEW_BIN= / BASE_BIN= skip a build.
## AUTH=1: the working tree's build without and with basic auth (the /status rows).
bench-ab: deps
	AUTH=$(AUTH) bash bench/ab.sh $(BASE)

clean:
	rm -rf .build .build-release .build-image .build-tsan .build-asan .build-fuzz $(VENV)
