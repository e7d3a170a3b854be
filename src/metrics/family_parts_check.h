#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.h"

// A check for the renderers that take a FamilySelection (observe::RenderGpuMetrics,
// observe::RenderCostMetrics): asking for one family gives exactly that family's part of the whole
// rendering. Test-only.

namespace strata::metrics::testing {

// Renders each of `families` alone with `render`, and compares it with the whole rendering
// (everything selected) cut down to that family by a Registry, which also crashes on a family
// `families` does not name; then compares the parts, joined in the order of `families`, with the
// whole. Returns "" when they all match, else what differs first.
std::string FamilyPartsMismatch(const std::vector<std::string>& families, const Collector& render);

}  // namespace strata::metrics::testing
