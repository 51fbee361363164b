#include "ws_outbox.h"

#include <utility>

namespace kibitz::server {

void WsOutbox::push(const std::string& id, uint64_t gen, Kind kind, Text text) {
  if (kind == Kind::update) {
    // Only items after the one in flight may change.
    const size_t first = writing_ ? 1 : 0;
    for (size_t i = items_.size(); i-- > first;) {
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

void WsOutbox::drop(const std::string& id, uint64_t gen) {
  const size_t first = writing_ ? 1 : 0;
  for (size_t i = items_.size(); i-- > first;) {
    if (items_[i].gen == gen && items_[i].id == id) {
      bytes_ -= items_[i].text->size();
      items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

WsOutbox::Text WsOutbox::start_write() {
  if (writing_ || items_.empty()) return nullptr;
  writing_ = true;
  return items_.front().text;
}

void WsOutbox::finish_write() {
  if (!writing_) return;
  writing_ = false;
  bytes_ -= items_.front().text->size();
  items_.pop_front();
}

}  // namespace kibitz::server
