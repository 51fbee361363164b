// What one connection still has to send, and the one policy for a client
// that reads slower than Kibitz answers, shared by the WebSocket (each
// message its own write) and the NDJSON stream (every queued line in one
// write): one write in flight at a time; a progress update ("info",
// "progress", an NDJSON iteration line) that has not started writing is
// replaced by a newer one of the same search, so a slow reader holds at
// most one update per search and always gets the newest; everything else
// (a search's final message, a batch's position, an error) is kept, in
// order. What it keeps is bounded by its producers: a search's final
// messages, a batch's max_batch_positions lines, and the WebSocket pausing
// its reading while the queue is long (ws_session.h).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

namespace kibitz::server {

class Outbox {
 public:
  enum class Kind { update, kept };
  using Text = std::shared_ptr<const std::string>;

  // `id` names the search (its WebSocket id; "" for an NDJSON stream's one);
  // `gen` tells apart two searches that used the same id one after the other.
  void push(const std::string& id, uint64_t gen, Kind kind, Text text);
  // Forgets queued messages of a replaced search (not those being written).
  void drop(const std::string& id, uint64_t gen);

  // The next message to write, now in flight; null when nothing is queued or
  // a write is already in flight.
  Text start_write();
  // Every queued message as one text, all now in flight (NDJSON lines); null
  // as start_write.
  Text start_write_all();
  void finish_write();  // what is in flight is written

  bool writing() const { return in_flight_ > 0; }
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
  size_t in_flight_ = 0;  // items_'s first ones are being written
  size_t bytes_ = 0;
  uint64_t coalesced_ = 0;
};

}  // namespace kibitz::server
