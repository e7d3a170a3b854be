# shellcheck shell=bash
# Sourced by build.sh: makes sure `go` on PATH is Go 1.26 or newer. A machine without it (Debian
# 12's golang-go is 1.19) gets the pinned Go toolchain from the Go module proxy, the same zip
# `GOTOOLCHAIN=go1.26.8` would fetch, checked against its SHA-256 and unpacked under the cache.
# Needs curl and unzip (make deps installs them).

readonly GO_TOOLCHAIN_VERSION=go1.26.8
readonly GO_TOOLCHAIN_SHA256=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7

# 0 when `go` on PATH reports Go 1.26 or newer.
go_new_enough() {
  command -v go >/dev/null || return 1
  local version
  version=$(go env GOVERSION 2>/dev/null) || return 1
  version=${version#go}
  local major=${version%%.*} rest=${version#*.}
  local minor=${rest%%[!0-9]*}
  ((major > 1 || (major == 1 && minor >= 26)))
}

ensure_go() {
  go_new_enough && return 0
  local root=$KUBE_CACHE_ROOT/go-toolchain/$GO_TOOLCHAIN_VERSION
  if [[ ! -x $root/bin/go ]]; then
    local proxy=${GOPROXY:-https://proxy.golang.org}
    proxy=${proxy%%,*}
    [[ $proxy == direct || $proxy == off ]] && proxy=https://proxy.golang.org
    local module=v0.0.1-$GO_TOOLCHAIN_VERSION.linux-amd64
    local zip
    zip=$(mktemp --suffix=.zip)
    echo "build.sh: no Go 1.26 here; fetching $GO_TOOLCHAIN_VERSION from $proxy" >&2
    curl -fsSL -o "$zip" "$proxy/golang.org/toolchain/@v/$module.zip"
    if ! echo "$GO_TOOLCHAIN_SHA256  $zip" | sha256sum --check --quiet -; then
      rm -f "$zip"
      echo "build.sh: the Go toolchain zip does not match its pinned SHA-256" >&2
      return 1
    fi
    local unpack
    unpack=$(mktemp -d)
    unzip -q "$zip" -d "$unpack"
    rm -f "$zip"
    mkdir -p "$(dirname "$root")"
    rm -rf "$root"
    mv "$unpack/golang.org/toolchain@$module" "$root"
    rm -rf "$unpack"
  fi
  export PATH=$root/bin:$PATH
  export GOTOOLCHAIN=local
  go_new_enough
}
