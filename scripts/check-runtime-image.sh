#!/usr/bin/env bash
# Builds the Dockerfile's runtime stage for real without a Docker engine, and runs reachd in it.
# This replaces trust in `ldd` matching (scripts/check-packaging.sh) with a run:
#
#   1. base: `debootstrap --variant=minbase SUITE` — what debian:SUITE-slim is made from (the
#      same 88 packages; checked against check-packaging.sh's list) — from the Debian mirror
#      this machine's apt uses. Cached as a tarball in .build-image/ (delete it to refresh).
#   2. the runtime stage, read from the Dockerfile (scripts/dockerfile-runtime.py refuses any
#      instruction it would not reproduce): each RUN verbatim through /bin/sh -c in a chroot as
#      root, apt sources as the slim image has them; every package its `apt-get install` names
#      must then be installed, and its USER must exist. The binary is built with the build
#      stage's own `swift build` command (stripped if the build stage strips it) and copied
#      to the COPY's destination.
#   3. inside that root, in a network namespace of its own (lo up, and a dummy link with a
#      default route so the state can be `reachable`; nothing is sent anywhere), as the image's
#      USER with no capabilities at all: `reachd --version`; the ENTRYPOINT serving on its
#      EXPOSEd port with /status, /readyz answered (curl from outside the root, same namespace),
#      libraries mapped only from the image and no probe library loaded; the HEALTHCHECK
#      command verbatim; `reachd check --live`; a route removed turns it `unreachable`;
#      STOPSIGNAL ends it with exit 0. Then with targets on loopback (http, a name resolved
#      by c-ares from /etc/hosts, https with a certificate no CA signed): the dlopen'd libcurl
#      and c-ares load from the image and answer as they should (the https one `tls`:
#      verification is on).
#
# Must run as root (debootstrap, chroot, namespaces). Mounts live in the namespace's private
# mount namespace and vanish with it; the namespace, its processes and the scratch root are
# removed in every outcome. REACHD_RELEASE_BIN names an already built binary (else it is built
# into .build-release, as check-packaging.sh does); REACHD_IMAGE_KEEP=1 keeps the scratch root.
#
# Usage: scripts/check-runtime-image.sh        (exit 0 when every check passes)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CACHE="$ROOT/.build-image"
# Docker's PATH for a debian image (the image sets none of its own).
IMAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
NAMESPACE="image-$$-check"

FAILED=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; FAILED=1; }
info() { printf '      %s\n' "$*"; }
die() { printf 'FAIL  %s\n' "$*"; exit 1; }
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

[[ $(id -u) == 0 ]] || die "must run as root (debootstrap, chroot, network namespaces)"
for tool in debootstrap python3 openssl curl ip unshare chroot; do
    command -v "$tool" >/dev/null || die "$tool is not installed (make test-deps)"
done

# ------------------------------------------------------------------------ the Dockerfile
dockerfile="$(python3 scripts/dockerfile-runtime.py Dockerfile)" || die "cannot follow the Dockerfile (above)"
eval "$dockerfile"
info "runtime stage: FROM $BASE_IMAGE; installs ${PACKAGES[*]}; USER $USER_SPEC; ENTRYPOINT ${ENTRYPOINT[*]}"
ARCH="$(dpkg --print-architecture)"

# The mirrors this machine's apt uses for SUITE and SUITE-security ("500 URI SUITE/main ARCH Packages").
mirror_for() {
    apt-cache policy | awk -v suite="$1/main" -v arch="$ARCH" '$3 == suite && $4 == arch && !found { print $2; found = 1 }'
}
MIRROR="${REACHD_IMAGE_MIRROR:-$(mirror_for "$SUITE")}"
SECURITY_MIRROR="${REACHD_IMAGE_SECURITY_MIRROR:-$(mirror_for "$SUITE-security")}"
[[ -n "$MIRROR" ]] || die "apt has no source for $SUITE/main $ARCH (set REACHD_IMAGE_MIRROR)"
[[ -n "$SECURITY_MIRROR" ]] || die "apt has no source for $SUITE-security/main $ARCH (set REACHD_IMAGE_SECURITY_MIRROR)"

# ------------------------------------------------------------------------ 1. base
mkdir -p "$CACHE"
BASE_TARBALL="$CACHE/$SUITE-minbase-$ARCH.tar"
(
    flock 9
    if [[ ! -s "$BASE_TARBALL" ]]; then
        info "debootstrap --variant=minbase $SUITE from $MIRROR (cached in ${BASE_TARBALL#"$ROOT"/})"
        scratch="$(mktemp -d "$CACHE/debootstrap.XXXXXX")"
        if ! nice -n 10 debootstrap --variant=minbase "$SUITE" "$scratch/rootfs" "$MIRROR" >"$scratch/log" 2>&1; then
            tail -20 "$scratch/log" | sed 's/^/      /'
            rm -rf --one-file-system "$scratch"
            exit 1
        fi
        tar -C "$scratch/rootfs" --numeric-owner -cpf "$BASE_TARBALL.partial" .
        mv "$BASE_TARBALL.partial" "$BASE_TARBALL"
        rm -rf --one-file-system "$scratch"
    fi
) 9>"$CACHE/lock" || die "debootstrap --variant=minbase $SUITE failed"
pass "base: debootstrap --variant=minbase $SUITE ($(du -h "$BASE_TARBALL" | cut -f1) tarball, $(elapsed) so far)"

# ------------------------------------------------------------------------ the binary
release_binary() {
    if [[ -n "${REACHD_RELEASE_BIN:-}" ]]; then
        echo "$REACHD_RELEASE_BIN"
        return
    fi
    # The build stage's own command, with its own scratch path (shared with check-packaging.sh).
    info "building: $BUILD_COMMAND --scratch-path .build-release" >&2
    # shellcheck disable=SC2086 # the command's words, as the Dockerfile's shell splits them
    nice -n 10 $BUILD_COMMAND --scratch-path .build-release >&2 || return 1
    local product="${BUILD_COMMAND##*--product }"
    # shellcheck disable=SC2086
    echo "$($BUILD_COMMAND --scratch-path .build-release --show-bin-path)/${product%% *}"
}
binary="$(release_binary)" || die "release build failed"
[[ -x "$binary" ]] || die "no release binary at $binary"

# ------------------------------------------------------------------------ scratch root
# A run killed outright (the time limit's SIGKILL) cannot remove its root: the next one does,
# once its process is gone and nothing is mounted in it.
for stale in "$CACHE"/run-*; do
    [[ -d "$stale" && "$stale" =~ /run-([0-9]+)\. ]] || continue
    if ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null && ! grep -qF " $stale/" /proc/mounts; then
        info "removing the root a killed run left: ${stale#"$ROOT"/}"
        rm -rf --one-file-system "$stale"
    fi
done
WORK="$(mktemp -d "$CACHE/run-$$.XXXXXX")"
ROOTFS="$WORK/rootfs"
inner_pid=""
cleanup() {
    local status=$?
    if [[ -n "$inner_pid" ]] && kill -0 "$inner_pid" 2>/dev/null; then kill "$inner_pid" 2>/dev/null || true; fi
    if ip netns list 2>/dev/null | grep -qw "^$NAMESPACE"; then
        # Only this run's processes live in this run's namespace.
        local pids
        pids="$(ip netns pids "$NAMESPACE" 2>/dev/null || true)"
        # shellcheck disable=SC2086 # one pid a word
        if [[ -n "$pids" ]]; then kill -9 $pids 2>/dev/null || true; fi
        ip netns delete "$NAMESPACE" 2>/dev/null || true
    fi
    # Mounts are made in the namespace's private mount namespace; should one be visible here,
    # it is undone before anything is removed (and removal never crosses a file system).
    if grep -qF " $WORK/" /proc/mounts; then
        grep -F " $WORK/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    fi
    if [[ "${REACHD_IMAGE_KEEP:-0}" == 1 ]]; then
        echo "kept: $ROOTFS"
    else
        rm -rf --one-file-system "$WORK"
    fi
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir "$ROOTFS"
tar -C "$ROOTFS" --numeric-owner -xpf "$BASE_TARBALL"

# check-packaging.sh assumes debian:SUITE-slim has exactly the packages in its BASE_PACKAGES.
base_listed="$(sed -n '/^BASE_PACKAGES="/,/^"/p' scripts/check-packaging.sh | sed '1d;$d' | tr ' ' '\n' | grep . | sort)"
base_found="$(chroot "$ROOTFS" dpkg-query -W -f '${Package}\n' | sort)"
if [[ "$base_listed" == "$base_found" ]]; then
    pass "base: its $(wc -l <<<"$base_found") packages are exactly check-packaging.sh's BASE_PACKAGES"
else
    fail "base: check-packaging.sh's BASE_PACKAGES differ from minbase $SUITE (< listed only, > minbase only):"
    diff <(echo "$base_listed") <(echo "$base_found") | grep '^[<>]' | sed 's/^/      /'
fi

# apt sources as debian:SUITE-slim has them, on this machine's mirrors.
rm -f "$ROOTFS/etc/apt/sources.list"
cat >"$ROOTFS/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# A build container resolves names as its host does.
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"

# ------------------------------------------------------------------------ 2. the runtime stage
for command in "${RUN_COMMANDS[@]}"; do
    info "RUN $command"
    # A private mount namespace for /proc: it goes away with the command, whatever happens.
    if ! unshare --mount --propagation private -- /bin/sh -c \
        'mount -t proc proc "$1/proc" && exec chroot "$1" /usr/bin/env -i PATH="$2" HOME=/root /bin/sh -c "$3"' \
        sh "$ROOTFS" "$IMAGE_PATH" "$command" </dev/null >"$WORK/run.log" 2>&1; then
        tail -30 "$WORK/run.log" | sed 's/^/      /'
        die "runtime stage: RUN failed"
    fi
done
missing=()
for package in "${PACKAGES[@]}"; do
    [[ "$(chroot "$ROOTFS" dpkg-query -W -f '${Status}' "$package" 2>/dev/null)" == "install ok installed" ]] \
        || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    added="$(comm -13 <(echo "$base_found") <(chroot "$ROOTFS" dpkg-query -W -f '${Package}\n' | sort) | wc -l)"
    pass "runtime stage: RUN installed ${PACKAGES[*]} ($added packages over the base; root $(du -sh --one-file-system "$ROOTFS" | cut -f1))"
else
    fail "runtime stage: not installed after the RUN: ${missing[*]}"
fi
user_id="${USER_SPEC%%:*}"
group_id="${USER_SPEC#*:}"
[[ "$USER_SPEC" == *:* ]] || group_id="$(chroot "$ROOTFS" getent passwd "$user_id" | cut -d: -f4)"
if ! account="$(chroot "$ROOTFS" getent passwd "$user_id")"; then
    fail "runtime stage: USER $user_id has no account in the image"
elif [[ "$(cut -d: -f4 <<<"$account")" != "$group_id" ]] || ! group="$(chroot "$ROOTFS" getent group "$group_id")"; then
    fail "runtime stage: USER $USER_SPEC runs with group $group_id, but the account is $account (group ${group:-$group_id missing})"
else
    pass "runtime stage: USER $USER_SPEC is $account, group $group"
fi
install -D -m 0755 "$binary" "$ROOTFS$COPY_DEST"
[[ "$BUILD_STRIPS" == 1 ]] && strip "$ROOTFS$COPY_DEST"
info "COPY $COPY_SOURCE $COPY_DEST <- $binary$([[ "$BUILD_STRIPS" == 1 ]] && echo ", stripped") ($(du -h "$ROOTFS$COPY_DEST" | cut -f1))"

# What Docker gives a container: its own /etc/hosts and resolv.conf (the checks resolve only
# localhost, from /etc/hosts; there is no DNS server in the namespace).
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOTFS/etc/hosts"
printf 'nameserver 127.0.0.1\n' >"$ROOTFS/etc/resolv.conf"
echo reachd-image >"$ROOTFS/etc/hostname"
mkdir -p "$WORK/www"
echo ok >"$WORK/www/index.html"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null

# ------------------------------------------------------------------------ 3. the run
ip netns add "$NAMESPACE"
ip -n "$NAMESPACE" link set lo up
# A veth pair inside the namespace (both ends) and a default route through one end: the
# kernel's answer for 8.8.8.8 is then a usable route, so reachd says reachable. Nothing leaves
# the namespace: reachd only asks the routing table.
ip -n "$NAMESPACE" link add veth0 type veth peer name veth1
ip -n "$NAMESPACE" address add 198.18.0.1/24 dev veth0
ip -n "$NAMESPACE" link set veth0 up
ip -n "$NAMESPACE" link set veth1 up
ip -n "$NAMESPACE" route add default dev veth0

# Runs inside the namespace (`ip netns exec`: its own mount namespace with the namespace's /sys),
# as root, outside the image's root; everything of the image runs through `in_image`.
inside() {
    set -uo pipefail
    local FAILED=0 background=()
    # shellcheck disable=SC2317 # called through the trap
    stop_background() { local pid; for pid in "${background[@]}"; do kill -9 "$pid" 2>/dev/null; done; }
    trap stop_background EXIT
    mount -t proc proc "$ROOTFS/proc" || { fail "cannot mount /proc in the image"; return 1; }
    mount --bind /sys "$ROOTFS/sys" && mount -o remount,bind,ro "$ROOTFS/sys" || { fail "cannot mount /sys"; return 1; }

    # As Docker runs a command of the image: its USER (no supplementary groups), its ENV, PATH,
    # HOME from the account — and, stricter than Docker, with every capability dropped.
    local as_image=(chroot "$ROOTFS" /usr/bin/setpriv --reuid="$user_id" --regid="$group_id" --clear-groups
        --inh-caps=-all --bounding-set=-all --
        /usr/bin/env -i PATH="$IMAGE_PATH" HOME=/nonexistent HOSTNAME=reachd-image "${ENVIRONMENT[@]}")
    in_image() { "${as_image[@]}" "$@"; }
    get() { curl -s --max-time 5 -o "$WORK/body" -w '%{http_code}' "http://127.0.0.1:$1$2"; }
    json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$WORK/body"; }
    wait_for() { # SECONDS COMMAND…: until the command succeeds
        local deadline=$((SECONDS + $1)); shift
        until "$@" >/dev/null 2>&1; do
            ((SECONDS < deadline)) || return 1
            sleep 0.2
        done
    }
    # Whether reachd (PID, its log LOG) is still running; says how it ended when it is not.
    running() {
        kill -0 "$1" 2>/dev/null && return 0
        local status=0
        wait "$1" || status=$?
        fail "$2: reachd exited with status $status:"
        sed 's/^/      /' "$3"
        return 1
    }
    # The process really is the image's user, in the image's root, without capabilities.
    check_process() {
        local pid=$1 status
        status="$(cat "/proc/$pid/status")"
        local uids caps
        uids="$(awk '/^Uid:/ {print $2, $3, $4, $5}' <<<"$status")"
        caps="$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ {printf "%s ", $2}' <<<"$status")"
        if [[ "$uids" == "$user_id $user_id $user_id $user_id" && "$caps" == "$(printf '0000000000000000 %.0s' 1 2 3 4 5)" \
            && "$(readlink "/proc/$pid/root")" == "$ROOTFS" ]]; then
            pass "serve: $(cat "/proc/$pid/comm") runs as uid $user_id in the image's root with no capabilities (CapInh/Prm/Eff/Bnd/Amb all 0)"
        else
            fail "serve: pid $pid: uids $uids, capabilities $caps, root $(readlink "/proc/$pid/root")"
        fi
        local outside
        outside="$(awk '$6 ~ /^\// {print $6}' "/proc/$pid/maps" | sort -u | grep -vF "$ROOTFS/" || true)"
        if [[ -z "$outside" ]]; then
            pass "serve: every file it maps is the image's: $(awk '$6 ~ /\.so/ {n=split($6, p, "/"); print p[n]}' "/proc/$pid/maps" | sort -u | tr '\n' ' ')"
        else
            fail "serve: maps files from outside the image: $outside"
        fi
    }
    maps_library() { grep -q "$ROOTFS/.*/$2" "/proc/$1/maps"; }
    stop() { # PID NAME: STOPSIGNAL, then the exit status within the shutdown timeout + 5 s
        local pid=$1 status
        kill -s "${STOP_SIGNAL#SIG}" "$pid"
        for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            fail "$2: still running 15 s after $STOP_SIGNAL"
            return
        fi
        wait "$pid"; status=$?
        if [[ $status == 0 ]]; then pass "$2: $STOP_SIGNAL ends it with exit 0"; else fail "$2: exit $status after $STOP_SIGNAL"; fi
    }

    local port="${EXPOSED_PORTS[0]}" output status
    if output="$(in_image "${ENTRYPOINT[@]}" --version 2>&1)"; then
        pass "version: ${ENTRYPOINT[*]} --version: $output"
    else
        fail "version: ${ENTRYPOINT[*]} --version failed: $output"
    fi

    # The image as `docker run` starts it: ENTRYPOINT + CMD, nothing else.
    "${as_image[@]}" "${ENTRYPOINT[@]}" "${COMMAND[@]}" >"$WORK/serve.log" 2>&1 &
    local serving=$!
    background+=("$serving")
    if ! wait_for 15 curl -sf --max-time 2 "http://127.0.0.1:$port/livez"; then
        running "$serving" serve "$WORK/serve.log" && fail "serve: no answer on 127.0.0.1:$port within 15 s"
        return 1
    fi
    check_process "$serving"
    if maps_library "$serving" libcurl.so || maps_library "$serving" libcares.so \
        || maps_library "$serving" libmimalloc.so; then
        fail "serve: libcurl, c-ares or mimalloc is loaded although no probe is configured"
    else
        pass "serve: without probes none of libcurl, c-ares and mimalloc is loaded"
    fi
    status="$(get "$port" /status)"
    local route='[(i["name"], "198.18.0.1/24" in i["addresses"]) for i in d["interfaces"] if i["isDefaultRoute"]]'
    if [[ $status == 200 && "$(json "d['state'], $route")" == "reachable [('veth0', True)]" ]]; then
        pass "serve: GET /status 200: $(json '"state %s, ipv4 %s, default route via %s" % (d["state"], d["ipv4"], [(i["name"], i["addresses"]) for i in d["interfaces"] if i["isDefaultRoute"]])')"
    else
        fail "serve: GET /status $status: $(cat "$WORK/body")"
    fi
    status="$(get "$port" /readyz)"
    if [[ $status == 200 && "$(json 'd["status"]')" == pass ]]; then
        pass "serve: GET /readyz 200 pass"
    else
        fail "serve: GET /readyz $status: $(cat "$WORK/body")"
    fi
    if output="$(timeout "$HEALTHCHECK_TIMEOUT" "${as_image[@]}" "${HEALTHCHECK_COMMAND[@]}" 2>&1)"; then
        pass "healthcheck: ${HEALTHCHECK_COMMAND[*]} exits 0 (within the HEALTHCHECK's ${HEALTHCHECK_TIMEOUT} s)"
    else
        fail "healthcheck: ${HEALTHCHECK_COMMAND[*]} failed: $output"
    fi
    if output="$(in_image reachd check --live 2>&1)"; then
        pass "check: reachd check --live exits 0"
    else
        fail "check: reachd check --live: $output"
    fi
    if output="$(in_image reachd status 2>&1)"; then
        pass "status: reachd status: $(head -1 <<<"$output")"
    else
        fail "status: reachd status failed: $output"
    fi
    # A change the kernel announces reaches the unprivileged process.
    ip route del default dev veth0
    if wait_for 5 bash -c "[[ \$(curl -s --max-time 2 http://127.0.0.1:$port/status) == *'\"state\":\"unreachable\"'* ]]"; then
        if in_image reachd check --ready >/dev/null 2>&1; then
            fail "change: /status says unreachable but reachd check --ready exits 0"
        else
            pass "change: default route removed -> /status unreachable, reachd check --ready exits 1, --live still $(in_image reachd check --live >/dev/null 2>&1; echo $?)"
        fi
    else
        fail "change: /status did not turn unreachable within 5 s of the default route's removal"
    fi
    stop "$serving" serve

    # With probes: libcurl (http, https) and c-ares (a name from /etc/hosts), loaded on demand.
    python3 -m http.server --bind 127.0.0.1 18080 --directory "$WORK/www" >"$WORK/http.log" 2>&1 &
    background+=($!)
    python3 - "$WORK" >"$WORK/https.log" 2>&1 <<'PYTHON' &
import http.server, ssl, sys
server = http.server.HTTPServer(("127.0.0.1", 18443), http.server.SimpleHTTPRequestHandler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1] + "/tls.crt", sys.argv[1] + "/tls.key")
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PYTHON
    background+=($!)
    wait_for 10 curl -sf http://127.0.0.1:18080/ || fail "probes: the loopback http server did not start"
    local probe_port=$((port + 1))
    "${as_image[@]}" reachd --port "$probe_port" --target web=http://127.0.0.1:18080/ --target named=tcp://localhost:18080 \
        --target tls=https://127.0.0.1:18443/ --target-interval 1 --ready-when target:web,target:named \
        >"$WORK/probes.log" 2>&1 &
    local probing=$!
    background+=("$probing")
    local settled='all(t["state"] != "unknown" for t in d["targets"])'
    if ! wait_for 20 bash -c "kill -0 $probing && [[ \$(curl -s -o '$WORK/body' -w '%{http_code}' http://127.0.0.1:$probe_port/status) == 200 ]] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if $settled else 1)' '$WORK/body'"; then
        running "$probing" probes "$WORK/probes.log" || return 1
        fail "probes: targets still unknown after 20 s: $(cat "$WORK/body")"
        sed 's/^/      /' "$WORK/probes.log"
    else
        local verdict
        verdict="$(json '" ".join("%s=%s/%s/%s" % (t["name"], t["state"], t["reason"], ",".join(t["addresses"])) for t in d["targets"])')"
        if [[ "$verdict" == "web=reachable/None/127.0.0.1 named=reachable/None/127.0.0.1 tls=unreachable/tls/127.0.0.1" \
            || "$verdict" == "web=reachable/None/127.0.0.1 named=reachable/None/127.0.0.1,::1 tls=unreachable/tls/127.0.0.1" ]]; then
            pass "probes: $verdict (libcurl http + verified https, c-ares from /etc/hosts)"
        else
            fail "probes: $verdict"
        fi
        if maps_library "$probing" libcurl.so.4 && maps_library "$probing" libcares.so.2 \
            && maps_library "$probing" libmimalloc.so.2; then
            pass "probes: libcurl.so.4, libcares.so.2 and libmimalloc.so.2 loaded from the image"
        else
            fail "probes: libcurl.so.4, libcares.so.2 or libmimalloc.so.2 not mapped from the image"
        fi
        if output="$(in_image reachd check --ready --port "$probe_port" 2>&1)"; then
            pass "probes: reachd check --ready exits 0 (ready when target:web,target:named)"
        else
            fail "probes: reachd check --ready: $output"
        fi
    fi
    stop "$probing" probes
    return $FAILED
}

export -f pass fail info
inner_status=0
ip netns exec "$NAMESPACE" bash -c "$(declare -p ROOTFS WORK IMAGE_PATH ENTRYPOINT COMMAND ENVIRONMENT \
    HEALTHCHECK_COMMAND HEALTHCHECK_TIMEOUT EXPOSED_PORTS STOP_SIGNAL user_id group_id); $(declare -f inside); inside" &
inner_pid=$!
wait "$inner_pid" || inner_status=$?
inner_pid=""
[[ $inner_status == 0 ]] || FAILED=1

if [[ $FAILED -ne 0 ]]; then
    echo "runtime image checks FAILED ($(elapsed))"
    exit 1
fi
echo "runtime image checks passed ($(elapsed))"
