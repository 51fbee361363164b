// The bytes of one streamed NDJSON response (POST /v1/analyze with
// Accept: application/x-ndjson): a header, then one JSON line per
// iteration, then the final line. Lines are framed as HTTP/1.1 chunks (or
// sent raw to an HTTP/1.0 client, which then sees the connection close).
// While a write is in flight, lines queue up; a client that reads slower
// than the search iterates gets the newest iterations only, never an
// unbounded queue. The final line is never dropped.
#pragma once

#include <deque>
#include <string>

namespace kibitz::server {

class NdjsonStream {
 public:
  // At most this many iteration lines wait while a write is in flight.
  static constexpr size_t kMaxQueuedUpdates = 4;

  NdjsonStream(std::string header, bool chunked);

  void push_update(std::string line);  // one iteration; `line` ends with '\n'
  void push_final(std::string line);   // the last line; ends the stream

  // Everything queued, framed, for the next write; "" when nothing is
  // queued. Call finish_write() when it is written.
  std::string take();
  void finish_write() { writing_ = false; }
  bool writing() const { return writing_; }
  // The final line has been handed out by take().
  bool ended() const { return ended_; }
  bool started() const { return header_.empty(); }

 private:
  std::string header_;  // "" once sent
  bool chunked_;
  std::deque<std::string> updates_;
  std::string final_;
  bool has_final_ = false;
  bool ended_ = false;
  bool writing_ = false;
};

}  // namespace kibitz::server
