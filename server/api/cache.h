// Finished analyses by request key, least recently used first out: an
// identical request is answered without searching.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

namespace kibitz::server {

class ResultCache {  // thread-safe
 public:
  explicit ResultCache(size_t capacity) : capacity_(capacity) {}

  struct Hit {
    nlohmann::json body;
    std::shared_ptr<const std::string> text;  // body serialised
  };
  std::optional<nlohmann::json> get(const std::string& key);
  std::shared_ptr<const std::string> get_text(const std::string& key);
  void put(const std::string& key, nlohmann::json value);
  size_t size() const;

 private:
  using Entry = std::pair<std::string, Hit>;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> order_;  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace kibitz::server
