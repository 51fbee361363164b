// Logging setup for programs using the API (spdlog is a private dependency).
#pragma once

#include <string>

namespace kibitz::server {

// Sends the log to stderr (keeping stdout for results) at `level`: trace,
// debug, info, warn, error, critical or off.
void configure_logging(const std::string& level);

}  // namespace kibitz::server
