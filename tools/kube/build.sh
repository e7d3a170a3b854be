#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Builds a real Kubernetes control plane for strata's tests and benchmarks from the Go module
# proxy, at the versions pinned by the go.mod/go.sum files beside this script (one module per
# component group, so their dependency versions never mix through MVS):
#   kubernetes/  kube-apiserver, kube-scheduler, kube-controller-manager, kubectl
#   etcd/        etcd, etcdctl
#   kwok/        kwok (simulated nodes and pod lifecycles)
#   kueue/       the Kueue manager, and its CRD YAMLs copied out of the module cache
#   volcano/     controller-gen, and Volcano's CRDs it generates from volcano.sh/apis
# Output goes outside the repository (see cache_paths.sh); a binary whose stamp matches its pin
# is not rebuilt. Prints the bin directory on its last line.
#
# Usage: tools/kube/build.sh [--only NAME]...
#   STRATA_KUBE_CACHE   cache root (default ~/.cache/strata-kube)
#   STRATA_KUBE_JOBS    go build -p and GOMAXPROCS (default: all cores)
#   STRATA_KUBE_KEEP_GOCACHE=1  keep the Go build cache (6 GB) after a build; by default it is
#                       emptied once every binary is built, keeping only the binaries and modules
set -euo pipefail

# shellcheck source=cache_paths.sh
source "$(dirname "${BASH_SOURCE[0]}")/cache_paths.sh"
# shellcheck source=go_toolchain.sh
source "$(dirname "${BASH_SOURCE[0]}")/go_toolchain.sh"

# Bump when the way binaries are built changes, so every stamp goes stale.
readonly RECIPE=1

# name  group  package  module-whose-version-it-is (in the order the tests need them)
readonly COMPONENTS=(
  "etcd                    etcd       go.etcd.io/etcd/server/v3                     go.etcd.io/etcd/server/v3"
  "etcdctl                 etcd       go.etcd.io/etcd/etcdctl/v3                    go.etcd.io/etcd/etcdctl/v3"
  "kube-apiserver          kubernetes k8s.io/kubernetes/cmd/kube-apiserver          k8s.io/kubernetes"
  "kubectl                 kubernetes k8s.io/kubernetes/cmd/kubectl                 k8s.io/kubernetes"
  "kwok                    kwok       sigs.k8s.io/kwok/cmd/kwok                     sigs.k8s.io/kwok"
  "kube-controller-manager kubernetes k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes"
  "kube-scheduler          kubernetes k8s.io/kubernetes/cmd/kube-scheduler          k8s.io/kubernetes"
  "kueue                   kueue      sigs.k8s.io/kueue/cmd/kueue                   sigs.k8s.io/kueue"
  "controller-gen          volcano    sigs.k8s.io/controller-tools/cmd/controller-gen sigs.k8s.io/controller-tools"
)

only=()
while (($#)); do
  case $1 in
    --only) only+=("$2"); shift 2 ;;
    -h | --help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if ! ensure_go; then
  echo "build.sh: needs Go 1.26 or newer, and could not fetch it from the Go module proxy" >&2
  exit 1
fi

jobs=${STRATA_KUBE_JOBS:-$(nproc)}
export GOMODCACHE=$KUBE_CACHE_ROOT/go/mod
export GOCACHE=$KUBE_CACHE_ROOT/go/build
export GOFLAGS="-mod=readonly -modcacherw -buildvcs=false"
export GOMAXPROCS=$jobs
export CGO_ENABLED=0
export GOWORK=off
mkdir -p "$KUBE_BIN_DIR/.stamps" "$GOMODCACHE" "$GOCACHE"

# The version ldflags that kubectl and the components report, as hack/lib/version.sh sets them:
# kubectl refuses a server whose version skews, and `kubectl version` must read the pin.
kube_ldflags() {
  local version=$1 major minor
  major=${version#v}; major=${major%%.*}
  minor=${version#v*.}; minor=${minor%%.*}
  local date
  # The release's own date, so two builds of one pin are the same bytes.
  date=$(cd "$KUBE_TOOLS_DIR/kubernetes" &&
    go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' \
      "k8s.io/kubernetes@$version" 2>/dev/null) || date=""
  local pkg key val out=""
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    for key in gitVersion=$version gitMajor=$major gitMinor=$minor gitTreeState=clean \
      buildDate=${date:-1970-01-01T00:00:00Z}; do
      val=${key#*=}; key=${key%%=*}
      out+=" -X $pkg.$key=$val"
    done
  done
  echo "$out"
}

ldflags_for() {
  local name=$1 group=$2 version=$3
  case $group in
    kubernetes) kube_ldflags "$version" ;;
    kwok) echo " -X sigs.k8s.io/kwok/pkg/consts.Version=${version#v}" ;;
    kueue) echo " -X sigs.k8s.io/kueue/pkg/version.GitVersion=$version" ;;
    *) echo "" ;;
  esac
}

tags_for() {
  # Kubernetes' own release flags (hack/lib/golang.sh).
  [[ $1 == kubernetes ]] && echo "selinux,notest,grpcnotrace" || echo ""
}

started=$SECONDS
built=()
for line in "${COMPONENTS[@]}"; do
  read -r name group pkg module <<<"$line"
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  dir=$KUBE_TOOLS_DIR/$group
  version=$(cd "$dir" && go list -m -f '{{.Version}}' "$module")
  sum=$(cat "$dir/go.mod" "$dir/go.sum" | sha256sum | cut -c1-16)
  stamp="$module@$version go.sum:$sum recipe:$RECIPE $(go env GOVERSION)"
  stamp_file=$KUBE_BIN_DIR/.stamps/$name
  if [[ -x $KUBE_BIN_DIR/$name && -f $stamp_file && $(cat "$stamp_file") == "$stamp" ]]; then
    continue
  fi
  echo "build.sh: building $name ($module@$version)" >&2
  t0=$SECONDS
  ldflags="-s -w$(ldflags_for "$name" "$group" "$version")"
  (cd "$dir" && nice -n 10 go build -p "$jobs" -trimpath -tags="$(tags_for "$group")" \
    -ldflags="$ldflags" -o "$KUBE_BIN_DIR/.$name.tmp" "$pkg")
  mv -f "$KUBE_BIN_DIR/.$name.tmp" "$KUBE_BIN_DIR/$name"
  echo "$stamp" >"$stamp_file"
  echo "build.sh: built $name in $((SECONDS - t0)) s" >&2
  built+=("$name")
done

# Manifests that live in the modules themselves, copied (never committed) from the exact module
# versions the binaries were built from: Kueue's CRDs and webhook configurations, and kwok's
# node and pod lifecycle stages (its "fast" ones, but a Job's pods complete as its "general"
# stage has them: 1-6 s after they are ready, or after their pod-complete.stage.kwok.x-k8s.io/delay
# and jitter-delay annotations, so that tests and benchmarks can give Jobs a run time).
module_dir() {
  (cd "$KUBE_TOOLS_DIR/$1" && go mod download -json "$2" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

# copy_manifests DEST SRC_DIR FILE... : replaces DEST with exactly these files.
copy_manifests() {
  local dest=$1 src=$2 f
  shift 2
  rm -rf "$dest.tmp"
  mkdir -p "$dest.tmp"
  for f in "$@"; do
    if [[ ! -f $src/$f ]]; then
      echo "build.sh: expected $f in $src" >&2
      exit 1
    fi
    cp "$src/$f" "$dest.tmp/$(basename "$f")"
  done
  chmod -R u+w "$dest.tmp"
  rm -rf "$dest"
  mv "$dest.tmp" "$dest"
}

kueue_src=$(module_dir kueue sigs.k8s.io/kueue)
mapfile -t kueue_crds < <(cd "$kueue_src" && ls config/components/crd/bases/*.yaml)
mapfile -t kueue_crd_patches < <(cd "$kueue_src" && ls config/components/crd/patches/webhook_in_*.yaml)
copy_manifests "$KUBE_KUEUE_DIR/crds" "$kueue_src" "${kueue_crds[@]}"
copy_manifests "$KUBE_KUEUE_DIR/crd-patches" "$kueue_src" config/components/crd/kustomization.yaml \
  "${kueue_crd_patches[@]}"
copy_manifests "$KUBE_KUEUE_DIR/webhooks" "$kueue_src" config/components/webhook/manifests.yaml \
  config/components/webhook/kustomization.yaml
kwok_src=$(module_dir kwok sigs.k8s.io/kwok)
copy_manifests "$KUBE_KWOK_STAGE_DIR" "$kwok_src" \
  kustomize/stage/node/fast/node-initialize.yaml \
  kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  kustomize/stage/pod/fast/pod-ready.yaml \
  kustomize/stage/pod/general/pod-complete.yaml \
  kustomize/stage/pod/fast/pod-delete.yaml

# Volcano's CRDs (its PodGroups and Queues): the module proxy does not serve volcano.sh/volcano,
# where the YAML lives, so they are generated from Volcano's API types as Volcano's own Makefile
# generates them, by controller-gen; again whenever the pins or controller-gen change.
volcano_stamp="$(cat "$KUBE_TOOLS_DIR/volcano/go.mod" "$KUBE_TOOLS_DIR/volcano/go.sum" |
  sha256sum | cut -c1-16) $(cat "$KUBE_BIN_DIR/.stamps/controller-gen" 2>/dev/null)"
if [[ -x $KUBE_BIN_DIR/controller-gen &&
  $(cat "$KUBE_VOLCANO_DIR/.stamp" 2>/dev/null) != "$volcano_stamp" ]]; then
  rm -rf "$KUBE_VOLCANO_DIR"
  mkdir -p "$KUBE_VOLCANO_DIR"
  (cd "$KUBE_TOOLS_DIR/volcano" && "$KUBE_BIN_DIR/controller-gen" crd:allowDangerousTypes=true \
    paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:dir="$KUBE_VOLCANO_DIR/crds")
  echo "$volcano_stamp" >"$KUBE_VOLCANO_DIR/.stamp"
fi

if ((${#built[@]})); then
  echo "build.sh: built ${built[*]} in $((SECONDS - started)) s" >&2
  du -sh "$KUBE_BIN_DIR" "$GOMODCACHE" "$GOCACHE" >&2 || true
  if ((${#only[@]} == 0)) && [[ ${STRATA_KUBE_KEEP_GOCACHE:-0} != 1 ]]; then
    # Only a change of pins rebuilds, and that recompiles most packages anyway.
    go clean -cache
    echo "build.sh: emptied the Go build cache $GOCACHE (STRATA_KUBE_KEEP_GOCACHE=1 keeps it)" >&2
  fi
else
  echo "build.sh: all binaries up to date" >&2
fi
echo "$KUBE_BIN_DIR"
