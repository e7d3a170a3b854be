#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

#include "common/status.h"

namespace strata {

// Sets up the process-wide spdlog logger: one line per message on stderr,
// "2026-01-01 00:00:00.000 info  message". Call once from main; library code logs with
// spdlog::info(...) and friends. `level` is one of trace, debug, info, warn, error, off.
Status InitLogging(std::string_view level);

}  // namespace strata
