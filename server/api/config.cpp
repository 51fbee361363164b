#include "server/api/config.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <variant>
#include <vector>

#include "server/api/address_ranges.h"
#include "server/store/redis_conn.h"

namespace kibitz::server {

extern const std::string_view kEmbeddedConfig;  // embedded_config.cpp, from config/kibitz.json

namespace {

static_assert(std::is_same_v<size_t, uint64_t>, "size_t and uint64_t settings share one kind");
using Member = std::variant<std::string Config::*, int Config::*, int64_t Config::*,
                            size_t Config::*, nlohmann::json Config::*>;

struct Field {
  const char* name;
  Member member;
  int64_t min = 0;  // for numbers
  int64_t max = std::numeric_limits<int64_t>::max();
};

// Every setting, with the range it may take.
const std::vector<Field>& fields() {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  static const std::vector<Field> f = {
      {"address", &Config::address},
      {"port", &Config::port, 0, 65535},
      {"io_threads", &Config::io_threads, 1, 256},
      {"search_threads", &Config::search_threads, 0, 1024},
      {"hash_mib_chess", &Config::hash_mib_chess, 1, 1 << 20},
      {"hash_mib_draughts", &Config::hash_mib_draughts, 1, 1 << 20},
      {"queue_size", &Config::queue_size, 0, 1'000'000},
      {"live_slice_ms", &Config::live_slice_ms, 0, 86'400'000},
      {"max_work_per_client", &Config::max_work_per_client, 1, 1'000'000},
      {"max_threads_per_client", &Config::max_threads_per_client, 0, 1024},
      {"max_jobs_per_client", &Config::max_jobs_per_client, 1, 100'000'000},
      {"interactive_reserved_threads", &Config::interactive_reserved_threads, 0, 1024},
      {"interactive_reserved_queue", &Config::interactive_reserved_queue, 0, 1'000'000},
      {"max_body_bytes", &Config::max_body_bytes, 1, int64_t{1} << 32},
      {"max_header_bytes", &Config::max_header_bytes, 256, int64_t{1} << 24},
      {"max_json_depth", &Config::max_json_depth, 1, 10'000},
      {"max_moves", &Config::max_moves, 0, 1'000'000},
      {"max_batch_positions", &Config::max_batch_positions, 1, 1'000'000},
      {"max_depth", &Config::max_depth, 1, 256},
      {"max_nodes", &Config::max_nodes, 1, kMax},
      {"max_movetime_ms", &Config::max_movetime_ms, 1, kMax / 2},
      {"default_movetime_ms", &Config::default_movetime_ms, 1, kMax / 2},
      {"max_multipv", &Config::max_multipv, 1, 256},
      {"max_threads_per_job", &Config::max_threads_per_job, 0, 1024},
      {"max_perft_depth_chess", &Config::max_perft_depth_chess, 0, 20},
      {"max_perft_depth_draughts", &Config::max_perft_depth_draughts, 0, 30},
      {"ws_max_message_bytes", &Config::ws_max_message_bytes, 16, int64_t{1} << 30},
      {"ws_messages_per_second", &Config::ws_messages_per_second, 1, 1'000'000},
      {"ws_max_searches_per_connection", &Config::ws_max_searches_per_connection, 1, 10'000},
      {"read_timeout_ms", &Config::read_timeout_ms, 1, std::numeric_limits<int>::max()},
      {"idle_timeout_ms", &Config::idle_timeout_ms, 1, std::numeric_limits<int>::max()},
      {"max_connections", &Config::max_connections, 1, 10'000'000},
      {"max_connections_per_client", &Config::max_connections_per_client, 0, 10'000'000},
      {"max_websockets_per_client", &Config::max_websockets_per_client, 0, 10'000'000},
      {"job_deadline_ms", &Config::job_deadline_ms, 1, kMax / 2},
      {"job_retention_s", &Config::job_retention_s, 0, 10 * 365 * 86400},
      {"max_jobs", &Config::max_jobs, 1, 100'000'000},
      {"job_max_attempts", &Config::job_max_attempts, 0, 1000},
      {"drain_ms", &Config::drain_ms, 0, 3'600'000},
      {"cache_entries", &Config::cache_entries, 0, 100'000'000},
      {"trusted_proxies", &Config::trusted_proxies},
      {"web_root", &Config::web_root},
      {"log_level", &Config::log_level},
      {"eval_file", &Config::eval_file},
      {"syzygy_path", &Config::syzygy_path},
      {"access", &Config::access},
      {"store", &Config::store_object},
  };
  return f;
}

const Field* find_field(std::string_view name) {
  for (const Field& f : fields())
    if (name == f.name) return &f;
  return nullptr;
}

using Result = Expected<bool, std::string>;

// Sets one field from a JSON value, checking type and range.
Result set_field(Config& config, const Field& f, const nlohmann::json& v) {
  const std::string key = f.name;
  return std::visit(
      [&](auto member) -> Result {
        using T = std::remove_reference_t<decltype(config.*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (!v.is_string()) return Unexpected("setting '" + key + "' must be a string");
          config.*member = v.get<std::string>();
        } else if constexpr (std::is_same_v<T, nlohmann::json>) {
          if (!v.is_object()) return Unexpected("setting '" + key + "' must be an object");
          if (key == "store")  // key by key: a file changes the path, keeps the backend
            (config.*member).merge_patch(v);
          else
            config.*member = v;
        } else {
          if (!v.is_number_integer()) return Unexpected("setting '" + key + "' must be an integer");
          const bool negative =
              v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0;
          if (negative && f.min >= 0)
            return Unexpected("setting '" + key + "' must be at least " + std::to_string(f.min));
          const int64_t n =
              v.is_number_unsigned() &&
                      v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())
                  ? std::numeric_limits<int64_t>::max()
                  : v.get<int64_t>();
          if (n < f.min || n > f.max)
            return Unexpected("setting '" + key + "' must be between " + std::to_string(f.min) +
                              " and " + std::to_string(f.max) + ", not " + v.dump());
          config.*member = static_cast<T>(n);
        }
        return true;
      },
      f.member);
}

Result apply_object(Config& config, const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) return Unexpected(origin + ": the configuration must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    const Field* f = find_field(key);
    if (!f) return Unexpected(origin + ": unknown setting '" + key + "'");
    if (auto r = set_field(config, *f, value); !r) return Unexpected(origin + ": " + r.error());
  }
  return true;
}

Expected<nlohmann::json, std::string> parse_commented(std::string_view text,
                                                      const std::string& origin) {
  // Comments allowed; no exceptions: a bad file is a message, not a crash.
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false, true);
  if (j.is_discarded()) return Unexpected(origin + ": not valid JSON (// comments are allowed)");
  return j;
}

std::string env_name(std::string_view key) {
  std::string s = "KIBITZ_";
  for (char c : key) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// An environment value as JSON of the field's type: text for strings, a
// JSON object for "access", an integer otherwise.
Result apply_env(Config& config, const Field& f, const std::string& text) {
  const std::string name = env_name(f.name);
  if (std::holds_alternative<std::string Config::*>(f.member))
    return set_field(config, f, nlohmann::json(text));
  if (std::holds_alternative<nlohmann::json Config::*>(f.member)) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return Unexpected(name + ": not valid JSON");
    if (auto r = set_field(config, f, j); !r) return Unexpected(name + ": " + r.error());
    return true;
  }
  int64_t n = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || p != end || text.empty())
    return Unexpected(name + ": setting '" + std::string(f.name) + "' must be an integer, not '" +
                      text + "'");
  if (auto r = set_field(config, f, nlohmann::json(n)); !r)
    return Unexpected(name + ": " + r.error());
  return true;
}

// "store" as decoded, after KIBITZ_STORE_<KEY> overrides of its keys.
Result decode_store(Config& config) {
  nlohmann::json& o = config.store_object;
  for (const char* key : {"backend", "path", "library_mib", "library_min_depth", "redis_url",
                          "claim_idle_ms", "timeout_ms", "threads", "queue_size"}) {
    const std::string name = env_name(std::string("store_") + key);
    const char* v = std::getenv(name.c_str());
    if (!v) continue;
    if (std::string_view(key) == "backend" || std::string_view(key) == "path" ||
        std::string_view(key) == "redis_url") {
      o[key] = v;
      continue;
    }
    int64_t n = 0;
    const std::string text = v;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc() || p != end || text.empty())
      return Unexpected(name + ": must be an integer, not '" + text + "'");
    o[key] = n;
  }
  store::Settings& s = config.store;
  for (const auto& [key, value] : o.items()) {
    const std::string where = "setting 'store." + key + "'";
    if (key == "backend" || key == "path" || key == "redis_url") {
      if (!value.is_string()) return Unexpected(where + " must be a string");
      (key == "backend" ? s.backend
       : key == "path"  ? s.path
                        : s.redis_url) = value.get<std::string>();
    } else if (key == "claim_idle_ms") {
      if (!value.is_number_integer() || value.get<int64_t>() < 100 ||
          value.get<int64_t>() > 3'600'000)
        return Unexpected(where + " must be an integer between 100 and 3600000");
      s.claim_idle_ms = int(value.get<int64_t>());
    } else if (key == "timeout_ms" || key == "threads" || key == "queue_size") {
      const bool timeout = key == "timeout_ms";
      const int64_t lo = timeout ? 10 : 1;
      const int64_t hi = timeout ? 60'000 : key == "threads" ? 64 : 100'000;
      if (!value.is_number_integer() || value.get<int64_t>() < lo || value.get<int64_t>() > hi)
        return Unexpected(where + " must be an integer between " + std::to_string(lo) + " and " +
                          std::to_string(hi));
      (key == "timeout_ms" ? s.timeout_ms
       : key == "threads"  ? s.threads
                           : s.queue_size) = int(value.get<int64_t>());
    } else if (key == "library_mib" || key == "library_min_depth") {
      const int64_t lo = 1, hi = key == "library_mib" ? (int64_t{1} << 20) : 256;
      if (!value.is_number_integer() || value.get<int64_t>() < lo || value.get<int64_t>() > hi)
        return Unexpected(where + " must be an integer between " + std::to_string(lo) + " and " +
                          std::to_string(hi));
      if (key == "library_mib")
        s.library_mib = size_t(value.get<int64_t>());
      else
        s.library_min_depth = int(value.get<int64_t>());
    } else {
      return Unexpected("unknown setting 'store." + key + "'");
    }
  }
  if (s.backend != "sqlite" && s.backend != "memory" && s.backend != "redis")
    return Unexpected("setting 'store.backend' must be \"sqlite\", \"memory\" or \"redis\", not '" +
                      s.backend + "'");
  if (s.backend == "redis" && s.redis_url.rfind("redis://", 0) != 0)
    return Unexpected("setting 'store.redis_url' must be redis://[USER:PASSWORD@]HOST:PORT, not '" +
                      store::redact_redis_url(s.redis_url) + "'");
  // Not a setting of the file: a secret is best kept out of files that are
  // shown or committed. Over the password in redis_url; never shown.
  if (const char* pw = std::getenv("KIBITZ_REDIS_PASSWORD")) s.redis_password = pw;
  s.job_retention_ms = int64_t(config.job_retention_s) * 1000;
  s.job_deadline_ms = config.job_deadline_ms;
  s.max_jobs = config.max_jobs;
  s.max_jobs_per_client = config.max_jobs_per_client;
  s.max_work_per_client = config.max_work_per_client;
  s.max_queued_jobs = config.queue_size;
  s.job_max_attempts = config.job_max_attempts;
  if (s.backend == "sqlite" && s.path.empty())
    return Unexpected(std::string("setting 'store.path' must not be empty"));
  return true;
}

const std::vector<std::string> kLogLevels = {"trace", "debug",    "info", "warn",
                                             "error", "critical", "off"};

}  // namespace

Expected<Config, std::string> load_config(const std::string& path) {
  Config config;
  {
    auto j = parse_commented(kEmbeddedConfig, "embedded config");
    if (!j) return Unexpected(j.error());
    if (auto r = apply_object(config, *j, "embedded config"); !r) return Unexpected(r.error());
  }
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Unexpected(path + ": cannot read the file");
    std::ostringstream text;
    text << in.rdbuf();
    auto j = parse_commented(text.str(), path);
    if (!j) return Unexpected(j.error());
    if (auto r = apply_object(config, *j, path); !r) return Unexpected(r.error());
  }
  for (const Field& f : fields()) {
    const std::string name = env_name(f.name);
    if (const char* v = std::getenv(name.c_str())) {
      if (auto r = apply_env(config, f, v); !r) return Unexpected(r.error());
    }
  }
  bool level_ok = false;
  for (const auto& l : kLogLevels) level_ok = level_ok || l == config.log_level;
  if (!level_ok)
    return Unexpected(
        "setting 'log_level' must be one of trace, debug, info, warn, error, "
        "critical, off, not '" +
        config.log_level + "'");
  if (config.address.empty()) return Unexpected("setting 'address' must not be empty");
  if (auto r = AddressRanges::parse(config.trusted_proxies); !r)
    return Unexpected("setting 'trusted_proxies': " + r.error());
  if (auto r = decode_store(config); !r) return Unexpected(r.error());
  return config;
}

nlohmann::json to_json(const Config& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields())
    std::visit([&](auto member) { j[f.name] = config.*member; }, f.member);
  const store::Settings& s = config.store;  // as decoded, every key
  j["store"] = {{"backend", s.backend},
                {"path", s.path},
                {"library_min_depth", s.library_min_depth},
                {"library_mib", s.library_mib},
                {"redis_url", store::redact_redis_url(s.redis_url)},
                {"claim_idle_ms", s.claim_idle_ms},
                {"timeout_ms", s.timeout_ms},
                {"threads", s.threads},
                {"queue_size", s.queue_size}};
  return j;
}

}  // namespace kibitz::server
