// The messages a WebSocket connection still has to write, one write at a
// time. Progress updates ("info", "progress") of a search are coalesced: a
// queued update that has not started writing is replaced by a newer one of
// the same search, so a slow reader holds at most one update per search and
// always gets the newest. Final messages ("bestmove", "review", "error")
// are never dropped.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

namespace kibitz::server {

class WsOutbox {
 public:
  enum class Kind { update, final };
  using Text = std::shared_ptr<const std::string>;

  // `gen` tells apart two searches that used the same id one after the other.
  void push(const std::string& id, uint64_t gen, Kind kind, Text text);
  // Forgets queued messages of a replaced search (not the one being written).
  void drop(const std::string& id, uint64_t gen);

  // The next message to write, now in flight; null when nothing is queued or
  // a write is already in flight.
  Text start_write();
  void finish_write();  // the in-flight message is written

  bool writing() const { return writing_; }
  size_t size() const { return items_.size(); }
  size_t bytes() const { return bytes_; }
  uint64_t coalesced() const { return coalesced_; }

 private:
  struct Item {
    std::string id;
    uint64_t gen;
    Kind kind;
    Text text;
  };
  std::deque<Item> items_;
  bool writing_ = false;  // items_.front() is being written
  size_t bytes_ = 0;
  uint64_t coalesced_ = 0;
};

}  // namespace kibitz::server
