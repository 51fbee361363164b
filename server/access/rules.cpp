#include "server/access/rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <set>

namespace kibitz::server::access_detail {
namespace {

using nlohmann::json;
using Error = std::string;

constexpr std::array<std::string_view, 8> scope_names = {"analyze",  "jobs", "moves", "perft",
                                                         "annotate", "ws",   "info",  "metrics"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// Unknown members are errors: a misspelt "rate_limt" must not leave the
// server unlimited without a word.
Expected<bool, Error> only_members(const json& j, const std::string& where,
                                   std::initializer_list<std::string_view> names) {
  if (!j.is_object()) return Unexpected(where + ": must be an object");
  for (const auto& [name, value] : j.items()) {
    (void)value;
    if (std::find(names.begin(), names.end(), name) == names.end())
      return Unexpected(where + "." + name + ": unknown setting");
  }
  return true;
}

Expected<double, Error> number(const json& j, const std::string& where, double max) {
  if (!j.is_number()) return Unexpected(where + ": must be a number");
  const double v = j.get<double>();
  if (!(v >= 0 && v <= max))
    return Unexpected(where + ": must be between 0 and " + std::to_string(long(max)));
  return v;
}

Expected<RateSpec, Error> rate(const json& j, const std::string& where) {
  if (auto ok = only_members(j, where, {"per_second", "burst"}); !ok) return Unexpected(ok.error());
  RateSpec spec;
  if (j.contains("per_second")) {
    auto v = number(j["per_second"], where + ".per_second", 1e6);
    if (!v) return Unexpected(v.error());
    spec.per_second = *v;
  }
  if (j.contains("burst")) {
    auto v = number(j["burst"], where + ".burst", 1e6);
    if (!v) return Unexpected(v.error());
    spec.burst = *v;
  }
  // A limited bucket must hold at least one token or nothing ever passes.
  if (spec.limited() && spec.burst < 1) spec.burst = std::max(1.0, spec.per_second);
  return spec;
}

Expected<ScopeSet, Error> scopes(const json& j, const std::string& where) {
  if (!j.is_array()) return Unexpected(where + ": must be an array of scopes");
  ScopeSet set = 0;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!j[i].is_string()) return Unexpected(at + ": must be a string");
    const auto& s = j[i].get_ref<const std::string&>();
    if (s == "*") {
      set = all_scopes;
      continue;
    }
    const ScopeSet bit = scope_bit(s);
    if (bit == 0) return Unexpected(at + ": unknown scope \"" + s + "\"");
    set |= bit;
  }
  return set;
}

Expected<int, Error> count(const json& j, const std::string& where) {
  if (!j.is_number_integer() || j.get<int64_t>() < 0 || j.get<int64_t>() > 1'000'000)
    return Unexpected(where + ": must be an integer between 0 and 1000000");
  return int(j.get<int64_t>());
}

Expected<KeyRule, Error> key(const json& j, const std::string& where,
                             const RateSpec& default_rate) {
  if (auto ok = only_members(
          j, where, {"id", "token", "token_env", "scopes", "rate", "max_concurrent_searches"});
      !ok)
    return Unexpected(ok.error());
  KeyRule rule;
  rule.rate = default_rate;
  if (!j.contains("id") || !j["id"].is_string() || j["id"].get_ref<const std::string&>().empty())
    return Unexpected(where + ".id: must be a non-empty string");
  rule.id = j["id"].get<std::string>();
  if (j.contains("token") == j.contains("token_env"))
    return Unexpected(where + ": needs exactly one of \"token\" and \"token_env\"");
  if (j.contains("token")) {
    if (!j["token"].is_string()) return Unexpected(where + ".token: must be a string");
    rule.token = j["token"].get<std::string>();
  } else {
    if (!j["token_env"].is_string()) return Unexpected(where + ".token_env: must be a string");
    const std::string name = j["token_env"].get<std::string>();
    const char* value = std::getenv(name.c_str());
    if (value == nullptr)
      return Unexpected(where + ".token_env: environment variable " + name + " is not set");
    rule.token = value;
  }
  // Short tokens can be guessed; tokens with spaces or controls cannot be sent.
  if (rule.token.size() < 8) return Unexpected(where + ".token: must be at least 8 characters");
  for (unsigned char c : rule.token)
    if (c <= 0x20 || c >= 0x7f)
      return Unexpected(where + ".token: only printable ASCII without spaces");
  if (j.contains("scopes")) {
    auto s = scopes(j["scopes"], where + ".scopes");
    if (!s) return Unexpected(s.error());
    rule.scopes = *s;
  }
  if (j.contains("rate")) {
    auto r = rate(j["rate"], where + ".rate");
    if (!r) return Unexpected(r.error());
    rule.rate = *r;
  }
  if (j.contains("max_concurrent_searches")) {
    auto c = count(j["max_concurrent_searches"], where + ".max_concurrent_searches");
    if (!c) return Unexpected(c.error());
    rule.max_searches = *c;
  } else {
    rule.max_searches = -1;  // filled from the default once it is known
  }
  return rule;
}

Expected<bool, Error> cors(const json& j, Rules& rules) {
  if (auto ok = only_members(j, "access.cors", {"allowed_origins", "max_age_s"}); !ok) return ok;
  if (j.contains("allowed_origins")) {
    const json& list = j["allowed_origins"];
    if (!list.is_array())
      return Unexpected(std::string("access.cors.allowed_origins: must be an array"));
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = "access.cors.allowed_origins[" + std::to_string(i) + "]";
      if (!list[i].is_string()) return Unexpected(at + ": must be a string");
      std::string origin = lower(list[i].get<std::string>());
      if (origin == "*") {
        rules.any_origin = true;
        continue;
      }
      // An origin is scheme://host[:port], nothing after: a trailing slash
      // would never match what browsers send.
      const auto sep = origin.find("://");
      if (sep == std::string::npos || sep == 0 || origin.size() == sep + 3 ||
          origin.find('/', sep + 3) != std::string::npos)
        return Unexpected(at + ": must look like https://host[:port]");
      rules.allowed_origins.push_back(std::move(origin));
    }
  }
  if (j.contains("max_age_s")) {
    auto c = count(j["max_age_s"], "access.cors.max_age_s");
    if (!c) return Unexpected(c.error());
    rules.cors_max_age_s = *c;
  }
  return true;
}

}  // namespace

ScopeSet scope_bit(std::string_view scope) {
  for (size_t i = 0; i < scope_names.size(); ++i)
    if (scope_names[i] == scope) return ScopeSet{1} << i;
  return 0;
}

Expected<Rules, std::string> parse_rules(const json& config) {
  Rules rules;
  if (config.is_null()) return rules;
  if (auto ok =
          only_members(config, "access",
                       {"keys", "anonymous_scopes", "rate_limit", "max_concurrent_searches_per_key",
                        "max_concurrent_searches_per_ip", "cors"});
      !ok)
    return Unexpected(ok.error());

  if (config.contains("rate_limit")) {
    const json& rl = config["rate_limit"];
    if (auto ok = only_members(rl, "access.rate_limit", {"per_key", "per_ip", "max_tracked_ips"});
        !ok)
      return Unexpected(ok.error());
    if (rl.contains("per_key")) {
      auto r = rate(rl["per_key"], "access.rate_limit.per_key");
      if (!r) return Unexpected(r.error());
      rules.per_key = *r;
    }
    if (rl.contains("per_ip")) {
      auto r = rate(rl["per_ip"], "access.rate_limit.per_ip");
      if (!r) return Unexpected(r.error());
      rules.per_ip = *r;
    }
    if (rl.contains("max_tracked_ips")) {
      auto c = count(rl["max_tracked_ips"], "access.rate_limit.max_tracked_ips");
      if (!c) return Unexpected(c.error());
      if (*c < 1)
        return Unexpected(std::string("access.rate_limit.max_tracked_ips: must be at least 1"));
      rules.max_tracked_ips = size_t(*c);
    }
  }
  for (auto [name, field] :
       {std::pair{"max_concurrent_searches_per_key", &rules.max_searches_per_key},
        std::pair{"max_concurrent_searches_per_ip", &rules.max_searches_per_ip}}) {
    if (!config.contains(name)) continue;
    auto c = count(config[name], std::string("access.") + name);
    if (!c) return Unexpected(c.error());
    *field = *c;
  }
  if (config.contains("keys")) {
    const json& keys = config["keys"];
    if (!keys.is_array()) return Unexpected(std::string("access.keys: must be an array"));
    std::set<std::string> ids, tokens;
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::string at = "access.keys[" + std::to_string(i) + "]";
      auto k = key(keys[i], at, rules.per_key);
      if (!k) return Unexpected(k.error());
      if (!ids.insert(k->id).second) return Unexpected(at + ".id: \"" + k->id + "\" appears twice");
      if (!tokens.insert(k->token).second)
        return Unexpected(at + ".token: the same token as another key");
      if (k->max_searches < 0) k->max_searches = rules.max_searches_per_key;
      rules.keys.push_back(std::move(*k));
    }
  }
  if (config.contains("anonymous_scopes")) {
    auto s = scopes(config["anonymous_scopes"], "access.anonymous_scopes");
    if (!s) return Unexpected(s.error());
    rules.anonymous_scopes = *s;
  }
  if (config.contains("cors"))
    if (auto ok = cors(config["cors"], rules); !ok) return Unexpected(ok.error());
  return rules;
}

}  // namespace kibitz::server::access_detail
