#!/usr/bin/env bash
# make image: build the operator image with podman on a machine that reaches no image registry
# (docs/image.md). Installs podman, runc and mmdebstrap when missing (apt-get, as root), makes
# the Debian base from Debian packages and a helm image from the helm binary that
# tools/devcluster builds from Go modules, then builds the Dockerfile with them and tags
# localhost/oam-operator:<version>. Prints the image's size.
#   tools/image/build.sh [--print-tag]
# Exit 0 built (or already current), 1 a step failed, 2 a precondition is missing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tools/image"
export CONTAINERS_CONF="$here/containers.conf"
# shellcheck source=../devcluster/versions.env
source "$root/tools/devcluster/versions.env"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/pyproject.toml" | head -1)
tag="localhost/oam-operator:$version"
if [ "${1:-}" = "--print-tag" ]; then echo "$tag"; exit 0; fi

say() { echo "[image] $*"; }

# -- tools ---------------------------------------------------------------------------------------
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
[ -x /usr/sbin/runc ] || [ -x /usr/bin/runc ] || missing+=(runc)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v strip >/dev/null 2>&1 || missing+=(binutils)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "image: ${missing[*]} missing; install them (Debian: apt-get install ${missing[*]}) and run again" >&2
    exit 2
  fi
  say "installing ${missing[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/oam-image.XXXXXX")
trap 'rm -rf "$work"' EXIT

# -- the Debian bases: python3, CA certificates and libstdc++ (the CEL runtime is C++); the builder adds python3-venv and strip
# Variant "essential" (no apt, no passwd), /usr merged by mmdebstrap's own hook (the usrmerge
# package would pull in all of perl); documentation, manuals and translations are left out, the
# copyright files kept. The runtime base then drops the essential packages nothing runs in the
# container (bash, perl-base, util-linux, login, tar, diffutils, debconf): the entrypoint is
# Python, and /bin/sh (dash), coreutils and findutils stay for the Dockerfile's RUN steps. Both
# bases come from one suite, so their python3 is the same; each tag hashes its recipe, so a
# changed recipe makes a new base.
suite=bookworm
make_base() {
  local name="$1" packages="$2" purge="$3"
  local recipe="$suite $packages essential merged-usr nodoc purge:$purge v2"
  local tag="localhost/$name:$suite-$(echo "$recipe" | sha256sum | cut -c1-12)"
  if ! podman image exists "$tag"; then
    say "making $tag with mmdebstrap ($recipe)" >&2
    local hooks=()
    if [ -n "$purge" ]; then
      # shellcheck disable=SC2016 # expanded by mmdebstrap
      hooks+=(--customize-hook="chroot \"\$1\" dpkg --purge --force-remove-essential --force-depends $purge")
      # shellcheck disable=SC2016
      hooks+=(--customize-hook='rm -rf "$1"/var/cache/debconf')
    fi
    mmdebstrap --quiet --variant=essential --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --include="$packages" \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' "${hooks[@]}" \
      "$suite" "$work/$name.tar" >&2
    podman import --quiet "$work/$name.tar" "$tag" >/dev/null
    rm -f "$work/$name.tar"
  fi
  echo "$tag"
}
base=$(make_base oam-operator-base "python3,ca-certificates,libstdc++6" "bash util-linux login tar diffutils debconf perl-base")
builder=$(make_base oam-operator-builder "python3,python3-venv,ca-certificates,binutils" "")
say "bases $base, $builder"

# -- helm, built from Go modules by tools/devcluster, stripped ----------------------------------
helm_bin="${OAM_DEVCLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oam-operator/devcluster}/helm/v$HELM_VERSION/bin/helm"
if [ ! -x "$helm_bin" ]; then
  say "helm v$HELM_VERSION is not built yet: tools/devcluster/build.sh --only helm"
  "$root/tools/devcluster/build.sh" --only helm
fi
mkdir -p "$work/helm/out"
strip -o "$work/helm/out/helm" "$helm_bin"
"$work/helm/out/helm" version --short >/dev/null
helm_image="localhost/oam-operator-helm:v$HELM_VERSION-$(sha256sum "$work/helm/out/helm" | cut -c1-12)"
if ! podman image exists "$helm_image"; then
  tar -C "$work/helm" -cf "$work/helm.tar" out
  podman import --quiet "$work/helm.tar" "$helm_image" >/dev/null
fi
say "helm $helm_image"

# -- the image ---------------------------------------------------------------------------------
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
epoch=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
say "building $tag (podman build, dependencies from PyPI)"
# The machine's own trust for package downloads: where egress goes through a TLS-inspecting proxy
# its CA is in the host's bundle, and pip is pointed at it by the host's pip.conf. Both are mounted
# into the build's RUN steps only (never into a layer), so the image itself is unchanged.
trust=()
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  trust+=(--volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
  trust+=(--volume "$here/pip.conf:/etc/pip.conf:ro")
fi
started=$(date +%s)
if ! podman build --network host --layers "${trust[@]}" \
  --build-arg BASE_IMAGE="$base" --build-arg BUILDER_IMAGE="$builder" --build-arg HELM_FROM="$helm_image" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg SOURCE_DATE_EPOCH="$epoch" \
  -t "$tag" "$root" >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  echo "image: podman build failed (its output is above)" >&2
  exit 1
fi
say "podman build took $(( $(date +%s) - started )) s"
size=$(podman image inspect --format '{{.Size}}' "$tag")
say "built $tag: $size bytes ($((size / 1024 / 1024)) MiB)"
