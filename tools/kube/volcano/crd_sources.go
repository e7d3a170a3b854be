//go:build tools

// Package volcano pins the module whose API types controller-gen turns into Volcano's CRDs.
package volcano

import _ "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
