#!/usr/bin/env bash
# The house's dependency rules (DESIGN.md "The house"), checked on every #include of src/:
# a module may include only the modules it is allowed to know. `make test` runs this; it prints
# each forbidden include and exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

# module: the modules its files may include (besides its own). Modules not listed are free
# within CMake's declared dependencies, which the build itself enforces.
declare -A allowed=(
  [common]=""
  [metrics]="common"
  [history]="common"
  [scheduler]="common"
  [api]="common"
  [store]="common"
  [net]="common"
  [kube]="common net"
  [kubesched]="common kube scheduler"
  [kubestore]="common api store kube"
  [cluster]="common api store"
  [engine]="common net metrics"
  [gateway]="common net metrics engine"
  [autoscaler]="common metrics"
  [controller]="common api store cluster metrics observe scheduler"
  [node]="common api store cluster net metrics observe engine"
)

status=0
for module in "${!allowed[@]}"; do
  [ -d "src/$module" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    included=$(sed -E 's/.*#include "([^/"]+)\/.*/\1/' <<<"$line")
    [ "$included" = "$module" ] && continue
    [ -d "src/$included" ] || continue  # a library's header, not a module's
    case " ${allowed[$module]} " in
      *" $included "*) ;;
      *)
        echo "forbidden include: $file includes $included/ (src/$module may include: ${allowed[$module]:-nothing})"
        status=1
        ;;
    esac
  done < <(grep -HE '^#include "[a-z_]+/' -r "src/$module" --include='*.h' --include='*.cc' || true)
done
[ "$status" = 0 ] && echo "includes: every module includes only what it may"
exit "$status"
