// Recent cached answers by the exact bytes of the request body, one memo per
// I/O thread. A client that sends an identical analysis request again (a
// board page asking for the same position, a bot re-polling) is answered
// with the result cache's own serialised answer without parsing, decoding
// or preparing the request again: a request body is decoded the same way
// every time, so identical bytes lead to the identical cache entry.
//
// The memo holds no answer of its own: it points weakly at the result
// cache's text, so once the cache drops an entry (and its last write is
// done) the memo's pointer expires and the request takes the full route.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kibitz::server {

class AnswerMemo {  // one thread only
 public:
  static constexpr size_t kMaxEntries = 512;
  static constexpr size_t kMaxBodyBytes = 4096;

  // The memo of the calling thread for `owner` (a server): a thread that
  // serves another owner starts with an empty memo.
  static AnswerMemo& of_this_thread(const void* owner);

  // The cached answer to a request with this body, or null.
  std::shared_ptr<const std::string> find(std::string_view body);
  // Remembers that `body` was answered from the cache with `text`.
  void remember(std::string_view body, const std::shared_ptr<const std::string>& text);
  size_t size() const { return entries_.size(); }

 private:
  struct Hash {  // transparent: found by a string_view without a copy
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::weak_ptr<const std::string>, Hash, std::equal_to<>> entries_;
  const void* owner_ = nullptr;
};

}  // namespace kibitz::server
