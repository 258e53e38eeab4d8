# syntax=docker/dockerfile:1
#
# reachd: build with the official Swift image (Debian 12), run on debian:bookworm-slim.
#   docker build -t reachd .
#   docker run --rm -p 9478:9478 --stop-timeout 15 reachd
# scripts/check-packaging.sh lints this file and checks that every library the release binary
# links is installed by the runtime stage below or already in debian:bookworm-slim;
# scripts/check-runtime-image.sh (make check-image) builds the runtime stage without Docker
# (debootstrap, then its RUN in a chroot) and runs reachd in it as USER.

# ---------------------------------------------------------------------------------------------
FROM swift:6.3.1-bookworm AS build

# The C libraries reachd imports (libmicrohttpd, libmnl, GnuTLS, libxcrypt, libyaml, zlib: linked; libcurl,
# c-ares: headers only, loaded with dlopen when probes are configured), and pkg-config to find them. Versions follow Debian 12's security updates rather than exact pins,
# which would break the build whenever the archive replaces them (.hadolint.yaml: DL3008).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libmnl-dev libcurl4-openssl-dev \
        libc-ares-dev libgnutls28-dev libcrypt-dev libyaml-dev zlib1g-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Dependencies first, so source edits do not re-fetch them. Package.resolved is optional
# (the glob matches nothing when it is absent).
COPY Package.swift Package.resolve[d] ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests

# The Swift runtime and FoundationEssentials are linked statically: the runtime image needs no Swift
# toolchain, only the libraries below and what debian:bookworm-slim already has.
RUN swift build -c release --static-swift-stdlib --product reachd \
    && install -D -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/reachd" /out/reachd \
    && strip /out/reachd

# ---------------------------------------------------------------------------------------------
FROM debian:bookworm-slim

# `ldd` of the release binary: libmicrohttpd.so.12 (libmicrohttpd12, which pulls in gnutls &
# co., all in the base image already), libgnutls.so.30 (libgnutls30: --web-config-file's TLS,
# named here since reachd links it directly), libcrypt.so.1 (libcrypt1, in the base image:
# bcrypt for basic auth), libyaml-0.so.2 (libyaml-0-2: the web config's YAML), libz.so.1 (zlib1g, in the
# base image: the large changes /changes keeps), libmnl.so.0 (libmnl0), libstdc++.so.6 (libstdc++6 —
# present in bookworm-slim because apt depends on it, named here since reachd links it
# directly), libgcc_s.so.1 (libgcc-s1) and libc/libm (libc6), which are in the base image.
# Loaded on demand when --target or --connectivity-url is set: libcurl.so.4 (libcurl4),
# libcares.so.2 (libc-ares2) and libmimalloc.so.2 (libmimalloc2.0: what both allocate from);
# ca-certificates for verifying https targets against system CAs.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libgnutls30 libyaml-0-2 libmnl0 libstdc++6 libcurl4 \
        libc-ares2 libmimalloc2.0 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 reachd \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin reachd

COPY --from=build /out/reachd /usr/local/bin/reachd

# Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd; the group is
# the account's own (created with that gid above: `useradd --user-group` would pick a free
# system gid, and the process would run with a group the image does not have).
# No capabilities are needed: reading rtnetlink (link/address/route dumps, multicast change
# notifications, RTM_GETROUTE lookups) is allowed to any user; NET_ADMIN is only for changing
# the network, which reachd never does. Port 9478 is unprivileged.
USER 10001:10001

# Docker's default `docker stop` grace is 10 s; reachd's own default shutdown timeout is also
# 10 s (plus about 1 s for its service group), so the image's default stays inside Docker's
# grace period. Raise both together (`--stop-timeout`, REACHD_SHUTDOWN_TIMEOUT) if needed.
ENV REACHD_SHUTDOWN_TIMEOUT=8

EXPOSE 9478
STOPSIGNAL SIGTERM

# Liveness, not readiness. Docker acts on "unhealthy" only under an orchestrator: Swarm
# replaces the task, and `restart: on-failure` never fires for it on a plain host. With
# `check --ready` a host whose network is down would mark reachd unhealthy and Swarm would
# kill it — exactly when its answers ("unreachable") matter most, and a restart cannot bring
# the network back. Readiness belongs in a Kubernetes readinessProbe (/readyz), which only
# takes the pod out of rotation. `reachd check` reads REACHD_HOST/REACHD_PORT like the server,
# and REACHD_TLS, REACHD_CACERT, REACHD_INSECURE and REACHD_USER: once --web-config-file turns
# TLS on, set REACHD_TLS=1 with REACHD_CACERT (or REACHD_INSECURE=1 when the certificate does not
# name 127.0.0.1) in the container's environment, and this command works unchanged.
HEALTHCHECK --interval=15s --timeout=5s --start-period=5s --retries=3 \
    CMD ["reachd", "check", "--live", "--timeout", "3"]

ENTRYPOINT ["reachd"]
