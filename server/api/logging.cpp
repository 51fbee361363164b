#include "server/api/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace kibitz::server {

void configure_logging(const std::string& level) {
  auto logger = spdlog::get("kibitz_stderr");
  if (!logger) logger = spdlog::stderr_color_mt("kibitz_stderr");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace kibitz::server
