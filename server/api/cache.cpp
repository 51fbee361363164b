#include "server/api/cache.h"
#include "server/store/json_text.h"

namespace kibitz::server {

std::optional<nlohmann::json> ResultCache::get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second.body;
}

std::shared_ptr<const std::string> ResultCache::get_text(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second.text;
}

void ResultCache::put(const std::string& key, nlohmann::json value) {
  if (capacity_ == 0) return;
  // Serialised once here, outside the lock, as the transport would.
  auto text = std::make_shared<const std::string>(to_wire(value));
  Hit hit{std::move(value), std::move(text)};
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) {
    it->second->second = std::move(hit);
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.emplace_front(key, std::move(hit));
  index_[key] = order_.begin();
  while (order_.size() > capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
}

size_t ResultCache::size() const {
  std::lock_guard lock(mutex_);
  return order_.size();
}

}  // namespace kibitz::server
