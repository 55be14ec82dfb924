#!/usr/bin/env bash
# Build the local control plane from Go modules (devcluster.md §4).
#   build.sh [--only kubernetes|etcd|kwok|helm|promtool] [--force] [--update] [--no-kubectl]
#            [--k8s-version X] [--etcd-version Y] [--kwok-version Z] [--helm-version H]
#            [--promtool-version P]
# Exit 0 success, 1 build or check failed, 2 precondition missing.
# helm (helm.sh/helm/v3, the chart tests' `helm lint`/`helm template`) is built like the rest, and
# promtool (github.com/prometheus/prometheus, the alert rules' `promtool check/test rules`).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

only="" force=0 update=0 kubectl=1
k8s_version="${OAM_DEVCLUSTER_K8S_VERSION:-$K8S_VERSION}"
etcd_version="${OAM_DEVCLUSTER_ETCD_VERSION:-$ETCD_VERSION}"
kwok_version="${OAM_DEVCLUSTER_KWOK_VERSION:-$KWOK_VERSION}"
helm_version="${OAM_DEVCLUSTER_HELM_VERSION:-$HELM_VERSION}"
promtool_version="${OAM_DEVCLUSTER_PROMTOOL_VERSION:-$PROMTOOL_VERSION}"
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --force) force=1; shift ;;
    --update) update=1; shift ;;
    --no-kubectl) kubectl=0; shift ;;
    --k8s-version) k8s_version="$2"; shift 2 ;;
    --etcd-version) etcd_version="$2"; shift 2 ;;
    --kwok-version) kwok_version="$2"; shift 2 ;;
    --helm-version) helm_version="$2"; shift 2 ;;
    --promtool-version) promtool_version="$2"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "devcluster: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$only" in ""|kubernetes|etcd|kwok|helm|promtool) ;; *) echo "devcluster: --only takes kubernetes, etcd, kwok, helm or promtool" >&2; exit 2 ;; esac
k8s_version="${k8s_version#v}" etcd_version="${etcd_version#v}" kwok_version="${kwok_version#v}" helm_version="${helm_version#v}"
promtool_version="${promtool_version#v}"
case "$helm_version" in 3.*) ;; *) echo "devcluster: --helm-version must be a Helm 3 version (helm.sh/helm/v3), not $helm_version" >&2; exit 2 ;; esac
# Prometheus tags its Go module v0.<minor of 2.x> (2.54.1 = v0.54.1) and v0.3<minor>.<patch> for 3.x (3.16.0 = v0.316.0).
case "$promtool_version" in 0.*) ;; *) echo "devcluster: --promtool-version is the Go module version of github.com/prometheus/prometheus (0.316.0 for Prometheus 3.16.0), not $promtool_version" >&2; exit 2 ;; esac

if ! command -v go >/dev/null 2>&1; then
  echo "devcluster: Go not found on PATH. Install Go 1.26 or newer (the project uses 1.26.8) and make sure the Go module proxy is reachable (go env GOPROXY)." >&2
  exit 2
fi

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
build_flags=(-trimpath -buildvcs=false)
cache="${OAM_DEVCLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oam-operator/devcluster}"
mkdir -p "$cache/logs" "$cache/scratch"

components=()
for c in kubernetes etcd kwok helm promtool; do
  if [ -z "$only" ] || [ "$only" = "$c" ]; then components+=("$c"); fi
done
steps_per=6
total=$(( ${#components[@]} * steps_per ))
step=0
say() { step=$((step + 1)); echo "[devcluster] ($step/$total) $*"; }
note() { echo "[devcluster] $*"; }

note "$(go env GOVERSION) GOPROXY=$(go env GOPROXY) GOSUMDB=$(go env GOSUMDB)"
note "GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE) cache=$cache"
for dir in "$cache" "$(go env GOMODCACHE)" "$(go env GOCACHE)"; do
  mkdir -p "$dir"
  free_kb=$(df -Pk "$dir" | awk 'NR==2 {print $4}')
  if [ "${free_kb:-0}" -lt $((8 * 1024 * 1024)) ]; then
    note "warning: under 8 GiB free for $dir ($((free_kb / 1024)) MiB)"
  fi
done

exec 9>"$cache/.lock"
flock 9

version_of() {
  case "$1" in kubernetes) echo "$k8s_version" ;; etcd) echo "$etcd_version" ;; kwok) echo "$kwok_version" ;; helm) echo "$helm_version" ;; promtool) echo "$promtool_version" ;; esac
}
binaries_of() {
  case "$1" in
    kubernetes) if [ "$kubectl" = 1 ]; then echo "kube-apiserver kube-controller-manager kube-scheduler kubectl"; else echo "kube-apiserver kube-controller-manager kube-scheduler"; fi ;;
    etcd) echo "etcd" ;;
    kwok) echo "kwok" ;;
    helm) echo "helm" ;;
    promtool) echo "promtool" ;;
  esac
}
module_path_of() {
  case "$1" in kubernetes) echo "k8s.io/kubernetes" ;; etcd) echo "go.etcd.io/etcd/server/v3" ;; kwok) echo "sigs.k8s.io/kwok" ;; helm) echo "helm.sh/helm/v3" ;; promtool) echo "github.com/prometheus/prometheus" ;; esac
}
tool_packages_of() {
  local v="$2"
  case "$1" in
    kubernetes)
      local pkgs="k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler"
      [ "$kubectl" = 1 ] && pkgs="$pkgs k8s.io/kubernetes/cmd/kubectl"
      echo "$pkgs" ;;
    etcd) echo "go.etcd.io/etcd/server/v3" ;;
    kwok) echo "sigs.k8s.io/kwok/cmd/kwok" ;;
    helm) echo "helm.sh/helm/v3/cmd/helm" ;;
    promtool) echo "github.com/prometheus/prometheus/cmd/promtool" ;;
  esac
}
# Build tags: promtool's rule checks need no service discovery, and Prometheus's remove_all_sd tag
# leaves out every discovery plugin (the cloud SDKs: most of a full build's packages).
tags_of() {
  case "$1" in promtool) echo "remove_all_sd" ;; *) echo "" ;; esac
}
sha256_of() { sha256sum "$1" | awk '{print $1}'; }

# A committed module is "for" a version when it requires that module at that version.
committed_is_for() {
  local comp="$1" v="$2" gomod="$here/go/$1/go.mod"
  [ -f "$gomod" ] && grep -Eq "^[[:space:]]*$(module_path_of "$comp") v$v([[:space:]]|$)" "$gomod"
}

is_cached() {
  local comp="$1" v="$2" dir="$cache/$1/v$2"
  [ -f "$dir/BUILDINFO.json" ] || return 1
  for b in $(binaries_of "$comp"); do [ -x "$dir/bin/$b" ] || return 1; done
  if [ "$comp" = kwok ] && [ ! -s "$dir/stages.yaml" ]; then return 1; fi
  if committed_is_for "$comp" "$v"; then
    local want; want=$(sha256_of "$here/go/$comp/go.sum")
    grep -q "\"go_sum_sha256\": \"$want\"" "$dir/BUILDINFO.json" || return 1
  fi
  return 0
}

fail() {
  local comp="$1" log="$2" msg="$3"
  echo "[devcluster] FAILED: $msg" >&2
  [ -n "${partial:-}" ] && rm -rf "$partial"
  if [ -f "$log" ]; then
    echo "[devcluster] last 40 lines of $log:" >&2
    tail -n 40 "$log" >&2
  fi
  local next=""
  case "$comp" in
    kubernetes) for f in $K8S_FALLBACKS; do if [ "$(printf '%s\n%s\n' "$f" "$k8s_version" | sort -V | head -1)" = "$f" ] && [ "$f" != "$k8s_version" ]; then next="tools/devcluster/build.sh --k8s-version $f"; break; fi; done ;;
    etcd) for f in $ETCD_FALLBACKS; do if [ "$(printf '%s\n%s\n' "$f" "$etcd_version" | sort -V | head -1)" = "$f" ] && [ "$f" != "$etcd_version" ]; then next="tools/devcluster/build.sh --only etcd --etcd-version $f"; break; fi; done ;;
    kwok) next="tools/devcluster/build.sh --only kwok --kwok-version <another served version, see go list -m -versions sigs.k8s.io/kwok>" ;;
    helm) next="tools/devcluster/build.sh --only helm --helm-version <another served version, see go list -m -versions helm.sh/helm/v3>" ;;
    promtool) next="tools/devcluster/build.sh --only promtool --promtool-version <another served version, see go list -m -versions github.com/prometheus/prometheus>" ;;
  esac
  [ -n "$next" ] && echo "[devcluster] next: $next" >&2
  exit 1
}

# Prepare the module directory for a component; prints its path.
prepare_module() {
  local comp="$1" v="$2" log="$3" scratch="$cache/scratch/$1-$2"
  rm -rf "$scratch"; mkdir -p "$scratch"
  if committed_is_for "$comp" "$v"; then
    cp "$here/go/$comp/go.mod" "$here/go/$comp/go.sum" "$scratch/"
    echo "$scratch"; return 0
  fi
  (
    cd "$scratch" || exit 1
    go mod init "oam-operator.dev/devcluster/$comp" >>"$log" 2>&1 || exit 1
    go mod edit -go=1.26.0 || exit 1
    case "$comp" in
      kubernetes)
        local info gomod_json
        info=$(go mod download -json "k8s.io/kubernetes@v$v" 2>>"$log") || exit 1
        gomod_json="$scratch/upstream-go.mod.json"
        go mod edit -json "$(echo "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')" >"$gomod_json" || exit 1
        local edits; edits=$(python3 "$here/gomod.py" replaces "$gomod_json" "$v") || exit 1
        # shellcheck disable=SC2086
        go mod edit $edits || exit 1 ;;
      kwok)
        go list -m -versions sigs.k8s.io/kwok >>"$log" 2>&1 || exit 1
        go list -m -versions sigs.k8s.io/kwok 2>/dev/null | tr ' ' '\n' | grep -qx "v$v" || { echo "sigs.k8s.io/kwok v$v is not served" >>"$log"; exit 1; } ;;
    esac
    # shellcheck disable=SC2046
    go get -tool $(for p in $(tool_packages_of "$comp" "$v"); do echo "$p@v$v"; done) >>"$log" 2>&1 || exit 1
    go mod tidy >>"$log" 2>&1 || exit 1
    if [ "$comp" = kwok ] || [ "$comp" = helm ] || [ "$comp" = promtool ]; then
      if grep -q '^replace' go.mod; then echo "$comp v$v needs replace directives" >>"$log"; exit 1; fi
    fi
  ) || return 1
  echo "$scratch"
}

# The k8s.io/* replace set in the module must equal the set derived from upstream's go.mod.
check_replaces() {
  local dir="$1" v="$2" log="$3"
  local info upstream
  info=$(go mod download -json "k8s.io/kubernetes@v$v" 2>>"$log") || return 1
  upstream=$(echo "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
  go mod edit -json "$upstream" >"$dir/upstream-go.mod.json" || return 1
  python3 - "$dir/go.mod" "$dir/upstream-go.mod.json" "$v" "$here/gomod.py" <<'PY'
import json, subprocess, sys, importlib.util
gomod_path, upstream_path, version, helper = sys.argv[1:5]
spec = importlib.util.spec_from_file_location("gomod", helper)
gomod = importlib.util.module_from_spec(spec); spec.loader.exec_module(gomod)
derived = {e.split("=")[0] for e in gomod.derive_replaces(json.load(open(upstream_path)), version) if e.startswith("k8s.io/")}
have_json = json.loads(subprocess.run(["go", "mod", "edit", "-json", gomod_path], check=True, capture_output=True, text=True).stdout)
have = {r["Old"]["Path"] for r in have_json.get("Replace") or [] if r["Old"]["Path"].startswith("k8s.io/")}
if have != derived:
    print(f"replace set mismatch: added {sorted(have - derived)}, missing {sorted(derived - have)}", file=sys.stderr)
    sys.exit(1)
print(f"[devcluster] {len(derived)} staging replaces match upstream's go.mod")
PY
}

ldflags_of() {
  local comp="$1" v="$2" hash="$3"
  case "$comp" in
    kubernetes)
      local minor; minor=$(echo "$v" | cut -d. -f2)
      local date; date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
      local f=""
      for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        f="$f -X $pkg.gitVersion=v$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.gitCommit=$hash -X $pkg.buildDate=$date"
      done
      echo "$f" ;;
    etcd) echo "-X go.etcd.io/etcd/api/v3/version.GitSHA=${hash:0:7}" ;;
    kwok) echo "-X sigs.k8s.io/kwok/pkg/consts.Version=v$v" ;;
    helm)
      # As helm's Makefile: the version, and the default Capabilities.KubeVersion (`helm template`
      # without a cluster) = 1.<minor of k8s.io/client-go>; without it helm assumes v1.20.
      local moddir="$4" client_go k8s_minor
      client_go=$(cd "$moddir" && go list -m -f '{{.Version}}' k8s.io/client-go) || return 1
      k8s_minor=$(echo "${client_go#v}" | cut -d. -f2)
      local f="-X helm.sh/helm/v3/internal/version.version=v$v -X helm.sh/helm/v3/internal/version.gitCommit=$hash"
      f="$f -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
      for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
        f="$f -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
      done
      echo "$f" ;;
    promtool)
      # As Prometheus's .promu.yml: `promtool --version` prints 3.<minor>.<patch> (v0.3MM.P -> 3.MM.P).
      local minor patch; minor=$(echo "$v" | cut -d. -f2) patch=$(echo "$v" | cut -d. -f3)
      local release="2.$minor.$patch"
      [ "$minor" -ge 300 ] && release="$((minor / 100)).$((minor % 100)).$patch"
      echo "-X github.com/prometheus/common/version.Version=$release -X github.com/prometheus/common/version.Revision=$hash -X github.com/prometheus/common/version.Branch=HEAD" ;;
  esac
}

# Capture each --version output before matching: `cmd | grep -q` can kill cmd with SIGPIPE,
# which pipefail would report as a failed check.
expect_version() {
  local what="$1" want="$2"; shift 2
  local out; out=$("$@" 2>&1) || true
  case "$out" in *"$want"*) return 0 ;; esac
  echo "$what: $out"; return 1
}

check_versions() {
  local comp="$1" v="$2" bin="$3"
  case "$comp" in
    kubernetes)
      for b in kube-apiserver kube-controller-manager kube-scheduler; do
        expect_version "$b --version" "Kubernetes v$v" "$bin/$b" --version || return 1
      done
      if [ -x "$bin/kubectl" ]; then
        expect_version "kubectl version --client" "v$v" "$bin/kubectl" version --client || return 1
      fi ;;
    etcd) expect_version "etcd --version" "etcd Version: $v" "$bin/etcd" --version || return 1 ;;
    kwok) expect_version "kwok --version" "v$v" "$bin/kwok" --version || return 1 ;;
    helm)
      expect_version "helm version --short" "v$v" "$bin/helm" version --short || return 1
      # The default Kubernetes version of `helm template` must be the client-go one (ldflags).
      local chart; chart=$(mktemp -d)
      printf 'apiVersion: v2\nname: probe\nversion: 0.1.0\n' >"$chart/Chart.yaml"
      mkdir "$chart/templates"
      printf 'kube: {{ .Capabilities.KubeVersion.Version }}\n' >"$chart/templates/probe.yaml"
      local minor; minor=$(echo "$4" | sed -n 's/.*chartutil.k8sVersionMinor=\([0-9]*\).*/\1/p')
      expect_version "helm template (default kube version)" "kube: v1.$minor.0" \
        env HELM_CACHE_HOME="$chart/.cache" HELM_CONFIG_HOME="$chart/.config" HELM_DATA_HOME="$chart/.data" \
        "$bin/helm" template probe "$chart" || { rm -rf "$chart"; return 1; }
      rm -rf "$chart" ;;
    promtool)
      expect_version "promtool --version" "promtool, version $(echo "$4" | sed -n 's/.*version.Version=\([^ ]*\).*/\1/p')" "$bin/promtool" --version || return 1
      # It must parse and check a rule file (what the chart tests ask of it).
      local rules; rules=$(mktemp -d)
      printf 'groups:\n  - name: probe\n    rules:\n      - alert: Probe\n        expr: up == 0\n' >"$rules/rules.yaml"
      expect_version "promtool check rules" "SUCCESS: 1 rules found" "$bin/promtool" check rules "$rules/rules.yaml" || { rm -rf "$rules"; return 1; }
      rm -rf "$rules" ;;
  esac
}

# A line every 30 s while a long step runs, so a cold build (tens of minutes on 2 cores) is never
# silent: the elapsed time and a count that grows — the lines of the step's log, or with a pattern
# as $4 the lines matching it (`go mod download -x` logs one ": 200 OK" line per file fetched).
progress() {
  local pid="$1" comp="$2" what="$3" pattern="${4:-}" t0 count
  t0=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null || break
    if [ -n "$pattern" ]; then
      count=$(grep -c -e "$pattern" "$log" || true)
    else
      count=$(grep -c '' "$log" || true)
    fi
    note "  $comp: $(( $(date +%s) - t0 ))s, $count $what"
  done
}

summary=()
for comp in "${components[@]}"; do
  v=$(version_of "$comp")
  dir="$cache/$comp/v$v"
  log="$cache/logs/build-$comp-v$v.log"
  if [ "$force" = 0 ] && is_cached "$comp" "$v"; then
    step=$((step + steps_per - 1)); say "$comp v$v: cached"
    summary+=("$comp v$v cached 0 $(du -sh "$dir/bin" | cut -f1)")
    continue
  fi
  started=$(date +%s)
  : >"$log"
  say "$comp v$v: preparing the tools module (committed one if it is for v$v, else derived)"
  moddir=$(prepare_module "$comp" "$v" "$log") || fail "$comp" "$log" "$comp v$v: module preparation failed"
  if [ "$comp" = kubernetes ]; then
    say "$comp v$v: checking the staging replace set"
    check_replaces "$moddir" "$v" "$log" 2>>"$log" || fail "$comp" "$log" "$comp v$v: staging replace set differs from upstream"
  else
    say "$comp v$v: module ready"
  fi
  say "$comp v$v: downloading modules"
  (cd "$moddir" && exec go mod download -x >>"$log" 2>&1) &
  pid=$!
  progress "$pid" "$comp" "files fetched so far" ": 200 OK"
  wait "$pid" || fail "$comp" "$log" "$comp v$v: go mod download failed"
  hash=$(cd "$moddir" && go mod download -json "$(module_path_of "$comp")@v$v" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Origin",{}).get("Hash",""))' 2>/dev/null || true)
  partial="$cache/$comp/v$v.partial-$$"
  rm -rf "$partial"; mkdir -p "$partial/bin"
  flags=$(ldflags_of "$comp" "$v" "$hash" "$moddir") || fail "$comp" "$log" "$comp v$v: could not compute the version ldflags"
  say "$comp v$v: go build (a cold build takes several minutes on 2 cores)"
  timefile="$cache/logs/time-$comp-v$v.txt"
  (
    cd "$moddir" || exit 1
    if [ "$comp" = etcd ]; then out="$partial/bin/etcd"; else out="$partial/bin/"; fi
    # shellcheck disable=SC2046
    exec /usr/bin/time -v -o "$timefile" go build -v "${build_flags[@]}" -tags "$(tags_of "$comp")" -ldflags "-s -w $flags" -o "$out" $(tool_packages_of "$comp" "$v")
  ) >>"$log" 2>&1 &
  pid=$!
  progress "$pid" "$comp" "packages compiled so far"
  wait "$pid" || fail "$comp" "$log" "$comp v$v: go build failed"
  say "$comp v$v: checking versions"
  why=$(check_versions "$comp" "$v" "$partial/bin" "$flags") || fail "$comp" "$log" "$comp v$v: version check failed: $why"
  if [ "$comp" = kwok ]; then
    # kwok runs no stage without configuration ("no stages found"): keep the module's own
    # "fast" node and pod stages next to the binary; devcluster.py passes them with --config.
    stage_dir="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$v/kustomize/stage"
    for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/fast/pod-ready.yaml \
             pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      [ -f "$stage_dir/$f" ] || fail "$comp" "$log" "kwok v$v: stage file $f not found in $stage_dir"
      printf -- '---\n# from sigs.k8s.io/kwok@v%s kustomize/stage/%s\n' "$v" "$f"
      cat "$stage_dir/$f"
    done >"$partial/stages.yaml"
  fi
  build_seconds=$(( $(date +%s) - started ))
  max_rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$timefile" 2>/dev/null)
  python3 - "$partial" "$comp" "$v" "$flags" "$hash" "$(sha256_of "$moddir/go.sum")" "$build_seconds" "${max_rss_kb:-0}" <<'PY'
import json, os, platform, subprocess, sys, datetime
partial, comp, version, flags, origin, sumhash, seconds, rss = sys.argv[1:9]
bindir = os.path.join(partial, "bin")
info = {
    "component": comp, "version": "v" + version,
    "go_version": subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip(),
    "goos_goarch": subprocess.run(["go", "env", "GOOS"], capture_output=True, text=True).stdout.strip() + "/" + subprocess.run(["go", "env", "GOARCH"], capture_output=True, text=True).stdout.strip(),
    "ldflags": "-s -w " + flags.strip(), "origin_hash": origin, "go_sum_sha256": sumhash,
    "wall_seconds": int(seconds), "max_rss_kb": int(rss or 0),
    "binary_sizes": {name: os.path.getsize(os.path.join(bindir, name)) for name in sorted(os.listdir(bindir))},
    "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
}
with open(os.path.join(partial, "BUILDINFO.json"), "w") as f:
    json.dump(info, f, indent=2, sort_keys=True)
PY
  rm -rf "$dir" && mv "$partial" "$dir" || fail "$comp" "$log" "could not move $partial into place"
  if [ "$update" = 1 ]; then
    mkdir -p "$here/go/$comp"
    cp "$moddir/go.mod" "$moddir/go.sum" "$here/go/$comp/"
    note "$comp: copied go.mod and go.sum into tools/devcluster/go/$comp/"
  fi
  say "$comp v$v: built in ${build_seconds}s (max RSS ${max_rss_kb:-?} kB)"
  summary+=("$comp v$v built $build_seconds $(du -sh "$dir/bin" | cut -f1)")
done

note "component    version   result  seconds  size"
for row in "${summary[@]}"; do
  # shellcheck disable=SC2086
  printf '[devcluster] %-12s %-9s %-7s %-8s %s\n' $row
done
exit 0
