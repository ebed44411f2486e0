#!/usr/bin/env bash
# Builds the real control-plane tier from the Go module proxy only: etcd, kube-apiserver,
# kube-scheduler, kube-controller-manager (k8s.io/kubernetes, pinned in kubernetes/go.mod), kwok
# (kwok/go.mod) and Karpenter's own controller with its kwok cloud provider (karpenter/go.mod, the
# release test/oracle/karpenter pins; run beside nodefleet by test/real/beside-karpenter.test.ts),
# into a gitignored folder (default <repo>/.cache/control-plane/bin, or
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
# NAME=PACKAGE (a single package) names the binary NAME instead of the package's last element.
# $CGO (0 for the pure-Go etcd and kwok: static binaries; Go's default for Kubernetes) is passed on.
build() {
  local mod="$1" dir="$here/$1"; shift
  local stamp; stamp="$(cd "$dir" && { cat go.mod go.sum ./*.go; go version; echo "cgo=${CGO:-}"; } | sha256sum | cut -c1-16)"
  local names=() missing=0 p
  local out="$bin/"
  if [ "$#" -eq 1 ] && [[ "$1" == *=* ]]; then out="$bin/${1%%=*}"; set -- "${1#*=}"; names=("$(basename "$out")"); fi
  for p in "$@"; do
    [ "$p" = . ] && p="$mod"
    [ "$out" = "$bin/" ] && names+=("$(basename "$p")")
  done
  for p in "${names[@]}"; do [ -x "$bin/$p" ] || missing=1; done
  if [ "$missing" -eq 0 ] && [ "$(cat "$bin/.$mod.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "control-plane: $mod up to date (${names[*]})" >&2; return
  fi
  echo "control-plane: building $mod (${names[*]}); a cold build takes many minutes" >&2
  local t0=$SECONDS
  (cd "$dir" && ${CGO:+env CGO_ENABLED=$CGO} nice -n 10 go build -trimpath -o "$out" "$@") >&2
  echo "$stamp" > "$bin/.$mod.stamp"
  echo "control-plane: built $mod in $((SECONDS - t0)) s" >&2
}

t0=$SECONDS
CGO=0 build etcd .
CGO=0 build kwok sigs.k8s.io/kwok/cmd/kwok
build kubernetes k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kube-controller-manager
# Karpenter's binary is named karpenter-kwok (its package's name, kwok, is kwok's binary).
CGO=0 build karpenter karpenter-kwok=sigs.k8s.io/karpenter/kwok
# kwok starts only with Stage objects; they ship in its module (node/fast, node/heartbeat, pod/fast).
kwok_dir="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
rm -rf "$home/kwok-stages" && mkdir -p "$home/kwok-stages"
for s in node/fast node/heartbeat pod/fast; do
  for f in "$kwok_dir/kustomize/stage/$s"/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || cp "$f" "$home/kwok-stages/${s//\//-}-$(basename "$f")"
  done
done
chmod -R u+w "$home/kwok-stages"
# Karpenter's CRDs and RBAC as its kwok chart ships them (the chart's crds/, the KWOKNodeClass CRD,
# the RBAC templates; test/real/control-plane/karpenter.ts renders the templates' few names).
karpenter_dir="$(cd "$here/karpenter" && go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)"
rm -rf "$home/karpenter" && mkdir -p "$home/karpenter/crds" "$home/karpenter/rbac"
cp "$karpenter_dir"/kwok/charts/crds/*.yaml "$karpenter_dir"/kwok/apis/crds/*.yaml "$home/karpenter/crds/"
cp "$karpenter_dir"/kwok/charts/templates/{clusterrole,clusterrole-kwok,role,rolebinding}.yaml "$home/karpenter/rbac/"
chmod -R u+w "$home/karpenter"
echo "control-plane: binaries ready in $((SECONDS - t0)) s" >&2
echo "$bin"
