#!/usr/bin/env bash
# Packs what tests/device/run.sh needs of this build for a bare GPU machine, which can install
# nothing: the strata binary, stripped (about 11 MiB of its 130), and the shared libraries it
# links beyond glibc and libstdc++ (spdlog, fmt, yaml-cpp, xxhash, sqlite, OpenSSL: about 5 MiB),
# which run.sh finds in lib/ beside the binary. The GPU machine needs glibc >= 2.34 and a
# libstdc++ with GLIBCXX_3.4.30 (GCC 12; Debian 12, Ubuntu 22.04 and later); run.sh says which
# library is missing otherwise.
#
# Usage: tests/device/bundle.sh [STRATA] [DEST]
#   STRATA  default build/release/bin/strata     DEST  default build/device
# then, on the GPU machine: STRATA=build/device/strata tests/device/run.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
strata=${1:-$repo/build/release/bin/strata}
dest=${2:-$repo/build/device}
rm -rf "$dest"
mkdir -p "$dest/lib"
strip -o "$dest/strata" "$strata"
ldd "$strata" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
  grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s)\.so' |
  while read -r lib; do cp -L "$lib" "$dest/lib/"; done
du -sh "$dest"
