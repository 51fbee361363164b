// The `access` config decoded into rules (shape documented in access.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "server/access/token_bucket.h"

namespace kibitz::server::access_detail {

// Scopes as bits; a scope the HTTP layer names but this list does not know
// needs every bit (only "*" keys pass).
using ScopeSet = uint32_t;
inline constexpr ScopeSet all_scopes = 0xff;
ScopeSet scope_bit(std::string_view scope);  // 0 when unknown

struct KeyRule {
  std::string id;
  std::string token;
  ScopeSet scopes = all_scopes;
  RateSpec rate;
  int max_searches = 0;  // 0: unlimited
};

struct Rules {
  std::vector<KeyRule> keys;
  ScopeSet anonymous_scopes = 0;  // only matters while keys exist
  RateSpec per_key, per_ip;
  size_t max_tracked_ips = 10000;
  int max_searches_per_key = 0, max_searches_per_ip = 0;
  std::vector<std::string> allowed_origins;  // lower case
  bool any_origin = false;
  int cors_max_age_s = 600;
};

// Errors name the key: "access.keys[0].token: ...".
Expected<Rules, std::string> parse_rules(const nlohmann::json& config);

}  // namespace kibitz::server::access_detail
