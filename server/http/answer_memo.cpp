#include "answer_memo.h"

namespace kibitz::server {

AnswerMemo& AnswerMemo::of_this_thread(const void* owner) {
  thread_local AnswerMemo memo;
  if (memo.owner_ != owner) {
    memo.entries_.clear();
    memo.owner_ = owner;
  }
  return memo;
}

std::shared_ptr<const std::string> AnswerMemo::find(std::string_view body) {
  if (body.size() > kMaxBodyBytes || entries_.empty()) return nullptr;
  const auto it = entries_.find(body);
  if (it == entries_.end()) return nullptr;
  auto text = it->second.lock();
  if (!text) entries_.erase(it);  // the cache has dropped it
  return text;
}

void AnswerMemo::remember(std::string_view body, const std::shared_ptr<const std::string>& text) {
  if (body.size() > kMaxBodyBytes || !text) return;
  // Full: start again rather than keep an order; the bodies that come back
  // often are remembered again at once.
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_.insert_or_assign(std::string(body), text);
}

}  // namespace kibitz::server
