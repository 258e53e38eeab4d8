#!/usr/bin/env bash
# Checks reachd's packaging without a Docker engine:
#   1. hadolint: the Dockerfile lints clean (ignores only those in .hadolint.yaml).
#   2. libraries: every shared library the release binary links (ldd, transitively) — and the
#      ones it loads on demand for probes (libcurl, c-ares, with their own) — is owned by a Debian
#      package that the Dockerfile's runtime stage installs or that debian:bookworm-slim already
#      contains; no Swift runtime library is linked dynamically; ca-certificates is installed.
#      A quick, offline reading that names the package behind each library; the proof is
#      scripts/check-runtime-image.sh (make check-image), which builds that image and runs reachd
#      in it.
#   3. kubernetes: each directory of deploy/kubernetes with a kustomization.yaml is one example,
#      applied alone with `kubectl apply -k DIR`; it is rendered as kustomize renders it
#      (scripts/render-kustomization.py: every listed file exists, every manifest is listed,
#      compared with `kubectl kustomize` where kubectl is installed) and what it applies is
#      validated against Kubernetes' schemas (offline). The plain examples use no custom
#      resource, so they apply where the prometheus-operator is not installed; its kinds
#      (PodMonitor, PrometheusRule) live in the prometheus-operator/ directories and are
#      checked in 5. Any other kind without a schema (a misspelt apiVersion) fails, and so does
#      a manifest outside every kustomization.
#   4. openapi: openapi.yaml is a valid OpenAPI document.
#   5. monitoring: the PrometheusRule's groups pass `promtool check rules` and the alert tests
#      in deploy/kubernetes/prometheus-operator/tests (`promtool test rules`); the PodMonitors,
#      the prometheus.io/* annotations and the NetworkPolicy agree with the workloads' labels,
#      namespaces and named ports; each serving reachd container's (native sidecars included)
#      memory limit holds its REACHD_MAX_CONNECTIONS.
#   6. startup: each reachd container of the plain examples but tls/ (init containers included:
#      `reachd wait`, the native sidecar) starts as the kubelet would start it — its command (the DaemonSet's shell that
#      builds the API server target) and its environment — with the Service address of an IPv4
#      and of an IPv6 cluster (a dual-stack one gives its primary family's), and the release
#      binary accepts every setting (run in a network namespace of its own, stopped by a
#      deliberately malformed last setting before it would serve or probe).
#   7. image: the kustomizations' image tag (the one place that names it: no manifest tags
#      reachd's image), `make image`'s and the version reachd reports agree;
#      the release workflow (.github/workflows/image.yml) lints clean with actionlint.
#   8. install: `make install` (with the release binary above) stages reachd and reachd.service
#      under DESTDIR with the unit naming PREFIX's reachd; `systemd-analyze verify` finds nothing
#      to say about the unit, `systemd-analyze security` rates its sandbox at most 2.0 ("OK");
#      `make uninstall` removes both.
#
# The binary is built like the Dockerfile builds it, into .build-release, unless
# REACHD_RELEASE_BIN names one already built that way. The build host must be Debian 12, as
# the image is, for `dpkg -S` to answer for the image. Tools come from .venv-test/bin when it
# exists (pip install -r Tests/e2e/requirements.txt), else from PATH.
#
# Usage: scripts/check-packaging.sh        (exit 0 when every check passes)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Kubernetes schema version shipped inside kubernetes-validate 1.37.0 (no network needed).
KUBERNETES_VERSION="${KUBERNETES_VERSION:-1.37.0}"
# The prometheus-operator's custom resources: kubernetes-validate has no schema for them.
CRD_KINDS="PodMonitor PrometheusRule"

# Binary packages of debian:bookworm-slim (amd64), from docker-library/repo-info
# repos/debian/local/bookworm-slim.md (image of 2026-09-18). It is Debian's Priority: required
# set plus apt and apt's dependencies; apt is C++, so libstdc++6 and libgcc-s1 are in it, and
# apt's libgnutls30 brings the gnutls stack that libmicrohttpd12 also needs.
BASE_PACKAGES="
adduser apt base-files base-passwd bash bsdutils coreutils dash debconf
debian-archive-keyring debianutils diffutils dpkg e2fsprogs findutils gcc-12-base gpgv grep
gzip hostname init-system-helpers libacl1 libapt-pkg6.0 libattr1 libaudit-common libaudit1
libblkid1 libbz2-1.0 libc-bin libc6 libcap-ng0 libcap2 libcom-err2 libcrypt1 libdb5.3
libdebconfclient0 libext2fs2 libffi8 libgcc-s1 libgcrypt20 libgmp10 libgnutls30
libgpg-error0 libhogweed6 libidn2-0 liblz4-1 liblzma5 libmd0 libmount1 libnettle8
libp11-kit0 libpam-modules libpam-modules-bin libpam-runtime libpam0g libpcre2-8-0
libseccomp2 libselinux1 libsemanage-common libsemanage2 libsepol2 libsmartcols1 libss2
libstdc++6 libsystemd0 libtasn1-6 libtinfo6 libudev1 libunistring2 libuuid1 libxxhash0
libzstd1 login logsave mawk mount ncurses-base ncurses-bin passwd perl-base sed
sysvinit-utils tar tzdata usr-is-merged util-linux util-linux-extra zlib1g
"

FAILED=0
# What each example applies (`kubectl apply -k`), rendered once by render_kustomizations: one
# file per directory, the plain examples and the prometheus-operator ones apart.
RENDERED="$(mktemp -d)"
trap 'rm -rf "$RENDERED"' EXIT
PLAIN_RENDERED=()
OPERATOR_RENDERED=()
# The release binary, once check_libraries has built it (check_startup runs it).
RELEASE_BIN=""
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; FAILED=1; }
info() { printf '      %s\n' "$*"; }

tool() {
    if [[ -x "$ROOT/.venv-test/bin/$1" ]]; then
        echo "$ROOT/.venv-test/bin/$1"
    elif command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
    else
        return 1
    fi
}

# ------------------------------------------------------------------------------ 1. hadolint
check_hadolint() {
    local hadolint output
    if ! hadolint="$(tool hadolint)"; then
        fail "hadolint: not installed (pip install -r Tests/e2e/requirements.txt)"
        return
    fi
    if output="$("$hadolint" --config "$ROOT/.hadolint.yaml" --no-color Dockerfile 2>&1)"; then
        pass "hadolint: Dockerfile has no findings ($("$hadolint" --version | sed -n 1p))"
    else
        fail "hadolint: Dockerfile"
        printf '%s\n' "$output" | sed 's/^/      /'
    fi
}

# ------------------------------------------------------------------------------ 2. libraries

# Packages `apt-get install`ed in the Dockerfile's last stage (the runtime image), read as
# check-runtime-image.sh reads them (scripts/dockerfile-runtime.py).
runtime_packages() {
    local parsed PACKAGES
    parsed="$(python3 scripts/dockerfile-runtime.py Dockerfile)" || return 1
    eval "$parsed"
    printf '%s\n' "${PACKAGES[@]}" | sort -u
}

# The package owning a library path, trying the path as ldd printed it, its real path, and
# both with and without the /usr prefix (Debian 12 is merged-/usr; dpkg knows one spelling).
owning_package() {
    local path="$1" candidate answer
    local real
    real="$(readlink -f "$path")"
    for candidate in "$path" "$real" "/usr$path" "/usr$real" "${path#/usr}" "${real#/usr}"; do
        [[ "$candidate" == /* ]] || continue
        if answer="$(dpkg -S "$candidate" 2>/dev/null | grep -v '^diversion' | sed -n 1p)" && [[ -n "$answer" ]]; then
            # "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6" (several packages: "a, b: path")
            answer="${answer%%: /*}"
            answer="${answer%%,*}"
            echo "${answer%%:*}"
            return 0
        fi
    done
    return 1
}

release_binary() {
    if [[ -n "${REACHD_RELEASE_BIN:-}" ]]; then
        echo "$REACHD_RELEASE_BIN"
        return
    fi
    # The Dockerfile's build command, with its own scratch path.
    info "building: swift build -c release --static-swift-stdlib --product reachd --scratch-path .build-release" >&2
    swift build -c release --static-swift-stdlib --product reachd --scratch-path .build-release >&2 || return 1
    local bin_path
    bin_path="$(swift build -c release --static-swift-stdlib --scratch-path .build-release --show-bin-path)" || return 1
    echo "$bin_path/reachd"
}

# Whether the package owning `path` is installed by the runtime stage or in bookworm-slim.
check_owned() {
    local path=$1 runtime=$2 allowed=$3 why=${4:-}
    local package
    if ! package="$(owning_package "$path")"; then
        fail "libraries: $path belongs to no Debian package"
        return 1
    elif grep -qxF "$package" <<<"$allowed"; then
        if grep -qxF "$package" <<<"$runtime"; then
            info "$(basename "$path") <- $package (runtime stage${why:+, $why})"
        elif ! grep -qxF "$package" <<<"$(printf '%s\n' $BASE_PACKAGES)"; then
            info "$(basename "$path") <- $package (a dependency of the runtime stage's packages${why:+, $why})"
        else
            info "$(basename "$path") <- $package (debian:bookworm-slim${why:+, $why})"
        fi
    else
        fail "libraries: $(basename "$path") comes from $package, which the runtime stage does not install and bookworm-slim lacks"
        return 1
    fi
}

# Every library `file` links (ldd, transitively) must be in the runtime image.
check_linked() {
    local file=$1 runtime=$2 allowed=$3
    local ldd_output line path bad=0
    if ! ldd_output="$(ldd "$file" 2>&1)"; then
        fail "libraries: ldd $file failed: $ldd_output"
        return 1
    fi
    while IFS= read -r line; do
        [[ "$line" == *linux-vdso* ]] && continue
        if [[ "$line" == *"not found"* ]]; then
            fail "libraries: unresolved: ${line#"${line%%[![:space:]]*}"}"
            bad=1
            continue
        fi
        if [[ "$line" =~ =\>[[:space:]]+(/[^[:space:]]+) ]]; then
            path="${BASH_REMATCH[1]}"
        elif [[ "$line" =~ ^[[:space:]]*(/[^[:space:]]+) ]]; then
            path="${BASH_REMATCH[1]}"
        else
            continue
        fi
        case "$(basename "$path")" in
            libswift*|libFoundation*|lib_Foundation*|libdispatch*|libBlocksRuntime*|libicu*swift*)
                fail "libraries: $(basename "$path") is linked dynamically: the image has no Swift runtime (build with --static-swift-stdlib)"
                bad=1
                continue
                ;;
        esac
        check_owned "$path" "$runtime" "$allowed" || bad=1
    done <<<"$ldd_output"
    return $bad
}

check_libraries() {
    local binary runtime allowed bad=0
    if ! binary="$(release_binary)"; then
        fail "libraries: release build failed"
        return
    fi
    if [[ ! -x "$binary" ]]; then
        fail "libraries: no release binary at $binary"
        return
    fi
    RELEASE_BIN="$binary"
    if ! runtime="$(runtime_packages)" || [[ -z "$runtime" ]]; then
        fail "libraries: cannot read the packages of the Dockerfile's runtime stage"
        return
    fi
    info "runtime stage installs: $(echo $runtime)"
    # apt installs what the runtime packages depend on, recursively (libcurl4 brings OpenSSL,
    # Kerberos, …): those are in the image too.
    local depends
    depends="$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances $runtime 2>/dev/null | grep -E '^[a-z0-9]' | sed 's/:.*//' | sort -u)"
    allowed="$(printf '%s\n' $runtime $depends $BASE_PACKAGES | sort -u)"
    check_linked "$binary" "$runtime" "$allowed" || bad=1
    # libcurl and c-ares are loaded with dlopen when probes are configured (not in ldd's view):
    # the first soname of each list in the loader, what it links, and the system CAs for TLS.
    local soname library
    for soname in $(grep -oE '_names\[\] = \{"[^"]+"' Sources/CProbeLibraries/loader.c | grep -oE 'lib[^"]+'); do
        # awk reads to the end (no early `exit`): under pipefail, ldconfig would otherwise die of
        # SIGPIPE and take the script with it.
        library="$(ldconfig -p | awk -v name="$soname" '$1 == name && /x86-64/ && !found { print $NF; found = 1 }')"
        if [[ -z "$library" ]]; then
            fail "libraries: $soname (loaded on demand) is not installed on the build host"
            bad=1
            continue
        fi
        check_owned "$library" "$runtime" "$allowed" "loaded on demand" || bad=1
        check_linked "$library" "$runtime" "$allowed" || bad=1
    done
    if ! grep -qxF ca-certificates <<<"$runtime"; then
        fail "libraries: the runtime stage lacks ca-certificates (https probes verify against the system CAs)"
        bad=1
    fi
    if [[ $bad -eq 0 ]]; then
        pass "libraries: every library $(basename "$binary") links or loads on demand is in the runtime image ($binary)"
    fi
}

# ------------------------------------------------------------------------------ 3. kubernetes

# Renders every kustomization of deploy/kubernetes into $RENDERED (PLAIN_RENDERED,
# OPERATOR_RENDERED); fails for a directory that does not render whole, and for a manifest that
# no kustomization holds (a directory without one, or a file at the top).
render_kustomizations() {
    local python directory output name bad=0 orphans
    if ! python="$(tool python3)"; then
        fail "kubernetes: python3 not found"
        return 1
    fi
    while IFS= read -r directory; do
        name="${directory#deploy/kubernetes/}"
        name="${name//\//_}.yaml"
        if ! output="$("$python" scripts/render-kustomization.py "$directory" "$RENDERED/$name" 2>&1)"; then
            fail "kubernetes: $directory does not render as kubectl apply -k would"
            printf '%s\n' "$output" | sed 's/^/      /'
            bad=1
        elif [[ "$directory" == */prometheus-operator ]]; then
            OPERATOR_RENDERED+=("$RENDERED/$name")
        else
            PLAIN_RENDERED+=("$RENDERED/$name")
        fi
    done < <(find deploy/kubernetes -name kustomization.yaml -printf '%h\n' | sort)
    # Every manifest lies in a kustomization's directory (its tests/ are promtool's, not manifests).
    orphans="$(find deploy/kubernetes \( -name '*.yaml' -o -name '*.yml' \) -not -path '*/tests/*' -printf '%h\n' \
        | sort -u | while IFS= read -r directory; do
            [[ -f "$directory/kustomization.yaml" ]] || echo "$directory"
        done)"
    if [[ -n "$orphans" ]]; then
        fail "kubernetes: manifests outside every kustomization (apply -k never applies them): $(echo $orphans)"
        bad=1
    fi
    # The two forms of the sidecar example read one targets file: kept identical.
    if ! cmp -s deploy/kubernetes/sidecar/targets.yaml deploy/kubernetes/sidecar/classic/targets.yaml; then
        fail "kubernetes: sidecar/targets.yaml and sidecar/classic/targets.yaml differ"
        bad=1
    fi
    if [[ ${#PLAIN_RENDERED[@]} -eq 0 || ${#OPERATOR_RENDERED[@]} -eq 0 ]]; then
        fail "kubernetes: no plain or no prometheus-operator kustomization in deploy/kubernetes"
        bad=1
    fi
    return $bad
}

# The example directory a rendered file stands for.
example() {
    local name
    name="$(basename "$1" .yaml)"
    echo "${name//_//}/"
}

check_kubernetes() {
    local validator file output
    if ! validator="$(tool kubernetes-validate)"; then
        fail "kubernetes: kubernetes-validate not installed (pip install -r Tests/e2e/requirements.txt)"
        return
    fi
    if render_kustomizations; then
        local kustomize="kubectl kustomize agrees"
        command -v kubectl >/dev/null || kustomize="kubectl not installed: not compared with kubectl kustomize"
        pass "kubernetes: every example renders whole, each manifest listed once ($kustomize)"
    fi
    # The plain examples: every kind has a schema (kubernetes-validate only warns about a kind
    # it has none for, so a custom resource or a built-in kind with a wrong apiVersion would
    # pass unchecked, and the first would fail to apply without its operator).
    for file in "${PLAIN_RENDERED[@]}"; do
        if ! output="$("$validator" --kubernetes-version "$KUBERNETES_VERSION" --strict "$file" 2>&1)"; then
            fail "kubernetes: $(example "$file") against Kubernetes $KUBERNETES_VERSION"
            printf '%s\n' "$output" | sed 's/^/      /'
        elif grep -q "find schema" <<<"$output"; then
            fail "kubernetes: $(example "$file") has a kind without a schema (a custom resource belongs in a prometheus-operator/)"
            printf '%s\n' "$output" | sed 's/^/      /'
        else
            pass "kubernetes: $(example "$file") valid for Kubernetes $KUBERNETES_VERSION (strict), no custom resource"
        fi
    done
    # The operator's directories: only its kinds, checked in monitoring.
    for file in "${OPERATOR_RENDERED[@]}"; do
        if ! output="$("$validator" --kubernetes-version "$KUBERNETES_VERSION" --strict "$file" 2>&1)"; then
            fail "kubernetes: $(example "$file") against Kubernetes $KUBERNETES_VERSION"
            printf '%s\n' "$output" | sed 's/^/      /'
        elif grep "find schema" <<<"$output" | grep -vqE "kind (${CRD_KINDS// /|}) with api version monitoring\.coreos\.com/v1 "; then
            fail "kubernetes: $(example "$file") has a kind or apiVersion without a schema (not one of: $CRD_KINDS)"
        else
            pass "kubernetes: $(example "$file") holds only $CRD_KINDS (see monitoring)"
        fi
    done
}

# ------------------------------------------------------------------------------ 4. openapi
check_openapi() {
    local validator output
    if ! validator="$(tool openapi-spec-validator)"; then
        fail "openapi: openapi-spec-validator not installed (pip install -r Tests/e2e/requirements.txt)"
        return
    fi
    if output="$("$validator" openapi.yaml 2>&1)"; then
        pass "openapi: openapi.yaml is valid OpenAPI ($output)"
    else
        fail "openapi: openapi.yaml"
        printf '%s\n' "$output" | sed 's/^/      /'
    fi
}

# ------------------------------------------------------------------------------ 5. monitoring

# The rule groups of every PrometheusRule, as a Prometheus rules file (`groups:`) in $1; then the
# cross-checks of the PodMonitors, the prometheus.io/* annotations and the NetworkPolicy against
# the workloads (Deployment, DaemonSet) of every example, as rendered. Prints one line per finding.
monitoring_manifests() {
    "$1" - "$2" "${PLAIN_RENDERED[@]}" "${OPERATOR_RENDERED[@]}" <<'PYTHON'
import os
import re
import sys
import yaml

rules_path, files = sys.argv[1], sys.argv[2:]
documents = []
for path in files:
    # Named by the example's directory, as the rendered file's name spells it (sidecar_classic.yaml).
    example = os.path.basename(path)[: -len(".yaml")].replace("_", "/") + "/"
    with open(path) as handle:
        documents += [(example, doc) for doc in yaml.safe_load_all(handle) if doc]
problems = []
groups = [group for _, doc in documents if doc["kind"] == "PrometheusRule" for group in doc["spec"]["groups"]]
if not groups:
    problems.append("no PrometheusRule with rule groups")
with open(rules_path, "w") as handle:
    yaml.safe_dump({"groups": groups}, handle, sort_keys=False)

workloads = [(path, doc) for path, doc in documents if doc["kind"] in ("Deployment", "DaemonSet")]

def serving(doc):
    # The containers that stay running: ordinary ones and native sidecars (an init container
    # with restartPolicy: Always); a plain init container runs to completion first.
    spec = doc["spec"]["template"]["spec"]
    return spec["containers"] + [c for c in spec.get("initContainers", []) if c.get("restartPolicy") == "Always"]

def ports(doc):
    return {port["name"]: port["containerPort"] for container in serving(doc)
            for port in container.get("ports", []) if "name" in port}

def selected(selector, labels):
    return all(labels.get(key) == value for key, value in selector.get("matchLabels", {}).items())

def namespace(doc):
    return doc["metadata"].get("namespace")

def in_namespaces(monitor, workload):
    # A PodMonitor's namespaceSelector: any, a list of names, or (absent) its own namespace.
    chosen = monitor["spec"].get("namespaceSelector", {})
    if chosen.get("any"):
        return True
    return namespace(workload) in chosen.get("matchNames", [namespace(monitor)])

for path, monitor in ((p, d) for p, d in documents if d["kind"] == "PodMonitor"):
    spec = monitor["spec"]
    matched = [(p, w) for p, w in workloads if in_namespaces(monitor, w)
               and selected(spec["selector"], w["spec"]["template"]["metadata"]["labels"])]
    if not matched:
        problems.append(f"{path}: PodMonitor {monitor['metadata']['name']} selects no workload here")
    for endpoint in spec["podMetricsEndpoints"]:
        if endpoint.get("path") != "/metrics":
            problems.append(f"{path}: endpoint path {endpoint.get('path')!r} is not /metrics")
        for p, workload in matched:
            if endpoint["port"] not in ports(workload):
                problems.append(f"{p}: {workload['metadata']['name']} has no port named {endpoint['port']!r}")

for path, workload in workloads:
    annotations = workload["spec"]["template"]["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/scrape") == "true":
        if annotations.get("prometheus.io/path") != "/metrics":
            problems.append(f"{path}: prometheus.io/path is not /metrics")
        if annotations.get("prometheus.io/port") not in {str(number) for number in ports(workload).values()}:
            problems.append(f"{path}: prometheus.io/port is none of the container's ports")

# reachd's memory at its connection limit must fit the container's memory limit, or a client
# opening streams gets it OOM-killed (measured: a 64 MiB cgroup kills it at about 5,500 streams).
# Measured costs (docs/reports/limits.md, docs/reports/benchmarks.md): ~20 MiB idle; per connection ~10 KiB in reachd plus up to
# 32 KiB of kernel send buffer for a client that stops reading (charged to the cgroup on v2).
IDLE_BYTES, PER_CONNECTION_BYTES = 20 << 20, 42 << 10
UNITS = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 1000**2, "G": 1000**3, "": 1}

def quantity(text):
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text)).groups()
    return float(number) * UNITS[unit]

for path, workload in workloads:
    for container in serving(workload):
        if not container["image"].split("/")[-1].startswith("reachd"):
            continue
        environment = {item["name"]: item.get("value") for item in container.get("env", [])}
        connections = int(environment.get("REACHD_MAX_CONNECTIONS", 10000))
        limit = container.get("resources", {}).get("limits", {}).get("memory")
        needed = IDLE_BYTES + connections * PER_CONNECTION_BYTES
        if limit is None:
            problems.append(f"{path}: {container['name']} has no memory limit")
        elif quantity(limit) < needed:
            problems.append(f"{path}: {container['name']}: {connections} connections need about "
                            f"{needed / (1 << 20):.0f} MiB, the limit is {limit} (set REACHD_MAX_CONNECTIONS)")

for path, policy in ((p, d) for p, d in documents if d["kind"] == "NetworkPolicy"):
    # A NetworkPolicy governs the pods of its own namespace only.
    matched = [w for _, w in workloads if namespace(w) == namespace(policy)
               and selected(policy["spec"]["podSelector"], w["spec"]["template"]["metadata"]["labels"])]
    if not matched:
        problems.append(f"{path}: NetworkPolicy {policy['metadata']['name']} selects no workload here")
    for workload in matched:
        if workload["spec"]["template"]["spec"].get("hostNetwork"):
            problems.append(f"{path}: NetworkPolicy selects {workload['metadata']['name']}, a hostNetwork pod it cannot govern")
        for rule in policy["spec"].get("ingress", []):
            for port in rule.get("ports", []):
                if isinstance(port.get("port"), str) and port["port"] not in ports(workload):
                    problems.append(f"{path}: {workload['metadata']['name']} has no port named {port['port']!r}")
print("\n".join(problems))
PYTHON
}

check_monitoring() {
    local promtool python scratch output findings
    if ! promtool="$(tool promtool)"; then
        fail "monitoring: promtool not installed (Debian package prometheus)"
        return
    fi
    if ! python="$(tool python3)"; then
        fail "monitoring: python3 not found"
        return
    fi
    scratch="$(mktemp -d)"
    if ! findings="$(monitoring_manifests "$python" "$scratch/reachd-rules.yaml" 2>&1)"; then
        fail "monitoring: cannot read the rendered examples"
        printf '%s\n' "$findings" | sed 's/^/      /'
    elif [[ -n "$findings" ]]; then
        fail "monitoring: the manifests disagree"
        printf '%s\n' "$findings" | sed 's/^/      /'
    else
        pass "monitoring: the PodMonitors, prometheus.io/* annotations and NetworkPolicy match the workloads' labels, namespaces and ports; memory limits hold REACHD_MAX_CONNECTIONS"
    fi
    if output="$("$promtool" check rules "$scratch/reachd-rules.yaml" 2>&1)"; then
        pass "monitoring: promtool check rules: the PrometheusRule's groups ($(grep -oE '[0-9]+ rules found' <<<"$output"))"
    else
        fail "monitoring: promtool check rules"
        printf '%s\n' "$output" | sed 's/^/      /'
    fi
    cp deploy/kubernetes/prometheus-operator/tests/*.test.yaml "$scratch/"
    if output="$(cd "$scratch" && "$promtool" test rules ./*.test.yaml 2>&1)"; then
        pass "monitoring: promtool test rules: every alert fires when it should and only then ($(cd deploy/kubernetes/prometheus-operator/tests && echo *.test.yaml))"
    else
        fail "monitoring: promtool test rules"
        printf '%s\n' "$output" | sed 's/^/      /'
    fi
    rm -rf "$scratch"
}

# ------------------------------------------------------------------------------ 6. startup

# Each reachd container of the plain examples (init containers included: `reachd wait`, the
# native sidecar), started as the kubelet would start it for each family's Service address, its
# ConfigMap volumes written where it mounts them: prints one line per finding, "ok ..." per start
# that passed. Not tls/: its web config names a certificate that only a cluster's Secret holds.
startup_runs() {
    local python=$1 binary=$2
    shift 2
    "$python" - "$binary" "$@" <<'PYTHON'
import os
import re
import shutil
import subprocess
import sys
import tempfile
import yaml

binary, files = sys.argv[1], sys.argv[2:]
# The Service address the kubelet gives as KUBERNETES_SERVICE_HOST (a dual-stack cluster gives
# its primary family's), and a pod address of that family for status.podIP. The last IPv6 one
# ends in a group that reads like a port: brackets are the only way to tell them apart.
FAMILIES = [
    ("IPv4", "10.96.0.1", "198.18.0.10"),
    ("IPv6", "fd00:10:96::1", "2001:db8::10"),
    ("IPv6", "fd00:10:96::1:443", "2001:db8::10"),
]
# Resolved last of every setting (MonitoringOptions.monitorConfiguration, by serving and by
# `reachd wait`): refused with its name, it proves every setting before it was accepted, and
# reachd stops before serving or probing.
SENTINEL = ("REACHD_IPV6_DESTINATION", "packaging-check")

def expand(text, environment):
    # The kubelet's $(VAR) expansion; $$ is a literal $.
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m[0] == "$$" else environment.get(m[1], m[0]), text)

def mounted(workload, container, config_maps, scratch):
    """Each ConfigMap volume the container mounts, written as the kubelet writes it (a file per
    key) under `scratch`: {mountPath: that directory}."""
    volumes = {v["name"]: v for v in workload["spec"]["template"]["spec"].get("volumes", [])}
    directories = {}
    for mount in container.get("volumeMounts", []):
        source = volumes.get(mount["name"], {}).get("configMap")
        if source is None:
            continue
        directory = os.path.join(scratch, mount["name"])
        os.makedirs(directory, exist_ok=True)
        for key, text in config_maps[(workload["metadata"].get("namespace"), source["name"])].get("data", {}).items():
            with open(os.path.join(directory, key), "w") as handle:
                handle.write(text)
        directories[mount["mountPath"]] = directory
    return directories

def relocate(text, directories):
    # A path under a mount path names the file in its scratch directory.
    for mount_path, directory in directories.items():
        if text == mount_path or text.startswith(mount_path.rstrip("/") + "/"):
            return directory + text[len(mount_path.rstrip("/")):]
    return text

findings = []
documents = []
for path in files:
    with open(path) as handle:
        documents += [(path, d) for d in yaml.safe_load_all(handle) if d]
config_maps = {(d["metadata"].get("namespace"), d["metadata"]["name"]): d for _, d in documents if d["kind"] == "ConfigMap"}
scratch = tempfile.mkdtemp(prefix="reachd-packaging-")
for path, workload in ((p, d) for p, d in documents if d["kind"] in ("Deployment", "DaemonSet")):
    spec = workload["spec"]["template"]["spec"]
    # Init containers too: `reachd wait` (init-container/) validates its settings, the sentinel
    # last, exactly as serving does.
    for container in spec.get("initContainers", []) + spec["containers"]:
        if not container["image"].split("/")[-1].startswith("reachd"):
            continue
        # The example's directory, as the rendered file's name spells it (sidecar_classic.yaml).
        example = os.path.basename(path)[: -len(".yaml")].replace("_", "/") + "/"
        where = f"{example}: {workload['metadata']['name']}/{container['name']}"
        directories = mounted(workload, container, config_maps, os.path.join(scratch, example, workload["metadata"]["name"]))
        for family, service, pod in FAMILIES:
            environment = {"KUBERNETES_SERVICE_HOST": service, "KUBERNETES_SERVICE_PORT": "443",
                           "PATH": os.path.dirname(binary) + ":/usr/bin:/bin"}
            for item in container.get("env", []):
                if "value" in item:
                    environment[item["name"]] = relocate(expand(item["value"], environment), directories)
                elif item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "status.podIP":
                    environment[item["name"]] = pod
            environment[SENTINEL[0]] = SENTINEL[1]
            command = [expand(a, environment) for a in container.get("command", ["reachd"])]
            command += [expand(a, environment) for a in container.get("args", [])]
            try:
                result = subprocess.run(["unshare", "--net", "--", *command], env=environment,
                                        capture_output=True, text=True, timeout=20)
            except subprocess.TimeoutExpired:
                findings.append(f"{where} ({family} {service}): still running after 20 s")
                continue
            expected = f"{SENTINEL[0]}={SENTINEL[1]} is invalid"
            if result.returncode != 64 or expected not in result.stderr:
                findings.append(f"{where} ({family} {service}): exit {result.returncode}: "
                                + " ".join(result.stderr.split())[:300])
            else:
                print(f"ok {where} ({family} {service})")
shutil.rmtree(scratch, ignore_errors=True)
print("\n".join(findings))
PYTHON
}

check_startup() {
    local python output file files=()
    if [[ -z "$RELEASE_BIN" ]]; then
        fail "startup: no release binary (see libraries)"
        return
    fi
    if ! python="$(tool python3)"; then
        fail "startup: python3 not found"
        return
    fi
    for file in "${PLAIN_RENDERED[@]}"; do
        [[ "$(basename "$file")" == tls.yaml ]] || files+=("$file")
    done
    if [[ ${#files[@]} -eq 0 ]]; then
        fail "startup: no rendered example (see kubernetes)"
    elif ! output="$(startup_runs "$python" "$RELEASE_BIN" "${files[@]}" 2>&1)"; then
        fail "startup: cannot read the rendered examples"
    elif grep -qv '^ok \|^$' <<<"$output"; then
        fail "startup: a reachd container refuses its settings"
    else
        pass "startup: every reachd container accepts its command and environment, with an IPv4 and an IPv6 Service address"
    fi
    printf '%s\n' "$output" | sed '/^$/d; s/^/      /'
}

# ------------------------------------------------------------------------------ 7. image
check_image() {
    local version tags tag actionlint output tagged
    version="$(sed -nE 's/^ *static let version = "([^"]+)".*/\1/p' Sources/reachd/Reachd.swift)"
    # What the examples apply: the tag each kustomization's `images:` gives reachd.
    tags="$(cat "${PLAIN_RENDERED[@]}" /dev/null | grep -oE 'image: reachd:[^[:space:]]+' | sed 's/image: reachd://' | sort -u)"
    # The kustomizations name it, nothing else: a manifest with its own tag would be a second place.
    tagged="$(grep -rlE 'image: *reachd:' deploy/kubernetes --include='*.yaml' --exclude=kustomization.yaml || true)"
    if [[ -n "$tagged" ]]; then
        fail "image: $(echo $tagged) tag reachd's image themselves (kustomization.yaml's images: names it)"
    elif [[ -z "$version" || -z "$tags" ]]; then
        fail "image: cannot read the version (Sources/reachd/Reachd.swift) or the examples' image lines"
    elif [[ "$tags" != "$version" ]]; then
        fail "image: the manifests use reachd:$(echo $tags) but reachd is $version"
    elif ! tag="$(make -s --no-print-directory print-image)" || [[ "$tag" != "reachd:$version" ]]; then
        fail "image: make image tags ${tag:-nothing}, the manifests use reachd:$version"
    else
        pass "image: make image, the manifests and reachd --version agree on reachd:$version"
    fi
    if ! actionlint="$(tool actionlint)"; then
        fail "image: actionlint not installed (pip install -r Tests/e2e/requirements.txt)"
    elif output="$("$actionlint" -no-color .github/workflows/*.yml 2>&1)"; then
        local shellcheck="without shellcheck"
        command -v shellcheck >/dev/null && shellcheck="with shellcheck"
        pass "image: .github/workflows lints clean (actionlint $("$actionlint" -version | sed -n 1p), $shellcheck)"
    else
        fail "image: actionlint .github/workflows"
        printf '%s\n' "$output" | sed 's/^/      /'
    fi
}

# ------------------------------------------------------------------------------ 8. install
check_install() {
    local scratch staged unit output bad=0
    if [[ -z "$RELEASE_BIN" ]]; then
        fail "install: no release binary (see libraries)"
        return
    fi
    if ! command -v systemd-analyze >/dev/null; then
        fail "install: systemd-analyze not installed (Debian package systemd: make test-deps)"
        return
    fi
    scratch="$(mktemp -d)"
    # The Makefile's own recipe, with the binary built above.
    make_install() { make -s --no-print-directory RELEASE_BIN="$RELEASE_BIN" "$@"; }
    # It installs what `make release` built and builds nothing (`sudo make install` must never run
    # the compiler as root); without the binary it says to run `make release` and fails.
    if make -n --no-print-directory install DESTDIR="$scratch/dry" 2>&1 | grep -qE '(^|[ /])swift( |$)'; then
        fail "install: make install would build (it must only install what make release built)"
        bad=1
    fi
    if output="$(make -s --no-print-directory RELEASE_BIN="$scratch/none" install DESTDIR="$scratch/dry" 2>&1)" \
        || ! grep -q "run 'make release' first" <<<"$output"; then
        fail "install: make install without a release binary did not fail saying to run make release: $output"
        bad=1
    fi
    # Staged: the files land under DESTDIR/PREFIX, and the unit names PREFIX, never DESTDIR.
    staged="$scratch/root/opt/reachd"
    unit="$staged/lib/systemd/system/reachd.service"
    if ! output="$(make_install install DESTDIR="$scratch/root" PREFIX=/opt/reachd 2>&1)"; then
        fail "install: make install DESTDIR=… PREFIX=/opt/reachd"
        printf '%s\n' "$output" | sed 's/^/      /'
        rm -rf "$scratch"
        return
    fi
    if ! cmp -s "$RELEASE_BIN" "$staged/bin/reachd" || [[ ! -x "$staged/bin/reachd" ]]; then
        fail "install: $staged/bin/reachd is not the release binary, or not executable"
        bad=1
    fi
    if [[ ! -f "$unit" ]] || [[ "$(stat -c %a "$unit")" != 644 ]]; then
        fail "install: no reachd.service (mode 644) in DESTDIR/PREFIX/lib/systemd/system"
        bad=1
    elif ! grep -qxF 'ExecStart=/opt/reachd/bin/reachd' "$unit" || grep -qE '@[A-Z]+@|'"$scratch" "$unit"; then
        fail "install: reachd.service does not start /opt/reachd/bin/reachd (or keeps a placeholder or DESTDIR)"
        bad=1
    fi
    if ! output="$(make_install uninstall DESTDIR="$scratch/root" PREFIX=/opt/reachd 2>&1)" \
        || [[ -e "$staged/bin/reachd" || -e "$unit" ]]; then
        fail "install: make uninstall left files behind"
        bad=1
    fi
    # Installed for real under a PREFIX of its own, so the unit's ExecStart exists to verify.
    unit="$scratch/prefix/lib/systemd/system/reachd.service"
    if ! output="$(make_install install PREFIX="$scratch/prefix" 2>&1)"; then
        fail "install: make install PREFIX=…"
        printf '%s\n' "$output" | sed 's/^/      /'
        bad=1
    elif output="$(systemd-analyze verify "$unit" 2>&1)" && [[ -z "$output" ]]; then
        info "systemd-analyze verify reachd.service: nothing to say"
    else
        # verify exits 0 on an unknown key or a bad value: any word from it is a finding.
        fail "install: systemd-analyze verify reachd.service"
        printf '%s\n' "$output" | sed 's/^/      /'
        bad=1
    fi
    if [[ -f "$unit" ]] && ! output="$(systemd-analyze security --offline=yes --threshold=20 "$unit" 2>&1)"; then
        fail "install: systemd-analyze security rates reachd.service above 2.0"
        grep -E '^✗|Overall' <<<"$output" | sed 's/^/      /'
        bad=1
    elif [[ -f "$unit" ]]; then
        info "systemd-analyze security: $(grep -oE 'exposure level for reachd.service: [0-9.]+ [A-Z]+' <<<"$output")"
    fi
    rm -rf "$scratch"
    if [[ $bad -eq 0 ]]; then
        pass "install: make install stages reachd and reachd.service under DESTDIR/PREFIX, the unit verifies clean and sandboxed, make uninstall removes them"
    fi
}

check_hadolint
check_libraries
check_kubernetes
check_openapi
check_monitoring
check_startup
check_image
check_install

if [[ $FAILED -ne 0 ]]; then
    echo "packaging checks FAILED"
    exit 1
fi
echo "packaging checks passed"
