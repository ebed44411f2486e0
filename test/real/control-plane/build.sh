#!/usr/bin/env bash
# Builds the real control-plane tier from the Go module proxy only: etcd, kube-apiserver,
# kube-scheduler, kube-controller-manager (k8s.io/kubernetes, pinned in kubernetes/go.mod) and kwok
# (kwok/go.mod), into a gitignored folder (default <repo>/.cache/control-plane/bin, or
# $NODEFLEET_CONTROL_PLANE_HOME/bin). A component whose go.mod, go.sum, sources and Go version are
# unchanged since its last build is skipped. Prints the bin directory on stdout; progress on stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
home="${NODEFLEET_CONTROL_PLANE_HOME:-$repo/.cache/control-plane}"
bin="$home/bin"
mkdir -p "$bin"
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" GOFLAGS="-mod=readonly"
command -v go >/dev/null || { echo "go is missing: install Go (https://go.dev/dl) first" >&2; exit 2; }

# build MODULE_DIR PACKAGE... : go build each package's main into $bin unless the stamp matches.
# $CGO (0 for the pure-Go etcd and kwok: static binaries; Go's default for Kubernetes) is passed on.
build() {
  local mod="$1" dir="$here/$1"; shift
  local stamp; stamp="$(cd "$dir" && { cat go.mod go.sum ./*.go; go version; echo "cgo=${CGO:-}"; } | sha256sum | cut -c1-16)"
  local names=() missing=0 p
  for p in "$@"; do
    [ "$p" = . ] && p="$mod"
    names+=("$(basename "$p")"); [ -x "$bin/$(basename "$p")" ] || missing=1
  done
  if [ "$missing" -eq 0 ] && [ "$(cat "$bin/.$mod.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "control-plane: $mod up to date (${names[*]})" >&2; return
  fi
  echo "control-plane: building $mod (${names[*]}); a cold build takes many minutes" >&2
  local t0=$SECONDS
  (cd "$dir" && ${CGO:+env CGO_ENABLED=$CGO} nice -n 10 go build -trimpath -o "$bin/" "$@") >&2
  echo "$stamp" > "$bin/.$mod.stamp"
  echo "control-plane: built $mod in $((SECONDS - t0)) s" >&2
}

t0=$SECONDS
CGO=0 build etcd .
CGO=0 build kwok sigs.k8s.io/kwok/cmd/kwok
build kubernetes k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kube-controller-manager
# kwok starts only with Stage objects; they ship in its module (node/fast, node/heartbeat, pod/fast).
kwok_dir="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
rm -rf "$home/kwok-stages" && mkdir -p "$home/kwok-stages"
for s in node/fast node/heartbeat pod/fast; do
  for f in "$kwok_dir/kustomize/stage/$s"/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || cp "$f" "$home/kwok-stages/${s//\//-}-$(basename "$f")"
  done
done
chmod -R u+w "$home/kwok-stages"
echo "control-plane: binaries ready in $((SECONDS - t0)) s" >&2
echo "$bin"
