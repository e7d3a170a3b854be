#include "common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <string>

namespace strata {

Status InitLogging(std::string_view level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return InvalidArgumentError("log level \"" + std::string(level) +
                                "\": expected one of trace, debug, info, warn, error, off");
  }
  auto logger = spdlog::get("strata");
  if (!logger) logger = spdlog::stderr_color_mt("strata");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %-5l %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace strata
