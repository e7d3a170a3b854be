# Where tools/kube/build.sh puts what it builds, sourced by build.sh, cluster.sh and the tests.
# Everything lives outside the repository, under STRATA_KUBE_CACHE (default
# ~/.cache/strata-kube):
#   go/mod, go/build       the Go module and build caches the build uses (its own, not the user's)
#   k8s-<version>/bin      kube-apiserver, kube-scheduler, kube-controller-manager, kubectl,
#                          etcd, etcdctl, kwok, kueue, each with a stamp in bin/.stamps/
#   k8s-<version>/kueue/{crds,crd-patches,webhooks}, k8s-<version>/kwok-stages
#                          manifests copied from those modules in the module cache
# shellcheck shell=bash

KUBE_TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KUBE_CACHE_ROOT=${STRATA_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strata-kube}
# The set is named after the pinned Kubernetes line, read from its go.mod.
KUBE_VERSION=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$KUBE_TOOLS_DIR/kubernetes/go.mod")
KUBE_SET_DIR=$KUBE_CACHE_ROOT/k8s-$KUBE_VERSION
KUBE_BIN_DIR=$KUBE_SET_DIR/bin
KUBE_KUEUE_DIR=$KUBE_SET_DIR/kueue
KUBE_KWOK_STAGE_DIR=$KUBE_SET_DIR/kwok-stages
export KUBE_TOOLS_DIR KUBE_CACHE_ROOT KUBE_VERSION KUBE_SET_DIR KUBE_BIN_DIR
export KUBE_KUEUE_DIR KUBE_KWOK_STAGE_DIR
