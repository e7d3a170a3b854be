#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace strata::api {

// Parses a duration written as Go and Kubernetes write them, without fractions: one or more
// "<digits><unit>" with units h, m, s, ms ("30s", "5m", "1h30m", "500ms"). Returns
// kInvalidArgument with a message that quotes the text on anything else, or when the total
// exceeds 100000 hours.
Result<Duration> ParseDuration(std::string_view text);

// The canonical text of `d`, in the largest unit that divides it: "2h", "90m", "45s", "1500ms",
// "0s". REQUIRES: d >= 0 and a whole number of milliseconds.
std::string FormatDuration(Duration d);

}  // namespace strata::api
