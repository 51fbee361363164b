// proto/openapi.yaml as built into the binary: GET /v1/openapi.yaml serves
// it, so the contract a client reads is the one this server was built with.
#pragma once

#include <string_view>

namespace kibitz::server {
extern const std::string_view kOpenApiDocument;
}  // namespace kibitz::server
