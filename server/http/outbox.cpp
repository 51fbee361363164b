#include "outbox.h"

#include <utility>

namespace kibitz::server {

void Outbox::push(const std::string& id, uint64_t gen, Kind kind, Text text) {
  if (kind == Kind::update) {
    // Only items after those in flight may change.
    for (size_t i = items_.size(); i-- > in_flight_;) {
      Item& item = items_[i];
      if (item.kind == Kind::update && item.gen == gen && item.id == id) {
        bytes_ = bytes_ - item.text->size() + text->size();
        item.text = std::move(text);
        ++coalesced_;
        return;
      }
    }
  }
  bytes_ += text->size();
  items_.push_back(Item{id, gen, kind, std::move(text)});
}

void Outbox::drop(const std::string& id, uint64_t gen) {
  for (size_t i = items_.size(); i-- > in_flight_;) {
    if (items_[i].gen == gen && items_[i].id == id) {
      bytes_ -= items_[i].text->size();
      items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

Outbox::Text Outbox::start_write() {
  if (in_flight_ > 0 || items_.empty()) return nullptr;
  in_flight_ = 1;
  return items_.front().text;
}

Outbox::Text Outbox::start_write_all() {
  if (in_flight_ > 0 || items_.empty()) return nullptr;
  in_flight_ = items_.size();
  if (in_flight_ == 1) return items_.front().text;
  auto all = std::make_shared<std::string>();
  all->reserve(bytes_);
  for (const auto& item : items_) *all += *item.text;
  return all;
}

void Outbox::finish_write() {
  for (; in_flight_ > 0; --in_flight_) {
    bytes_ -= items_.front().text->size();
    items_.pop_front();
  }
}

}  // namespace kibitz::server
