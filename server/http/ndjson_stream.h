// The lines of one streamed NDJSON response (POST /v1/analyze with
// Accept: application/x-ndjson): one JSON line per iteration, then the
// final line; or (POST /v1/batch) one line per position, every one kept. Only the queue: the
// session writes the header and frames the lines with Beast (HTTP/1.1 chunks, or raw bytes to an
// HTTP/1.0 client, which then sees the connection close). While a write is in flight, lines queue
// up; a client that reads slower than the search iterates gets the newest iterations only, never an
// unbounded queue. The final line is never dropped.
#pragma once

#include <deque>
#include <optional>
#include <string>

namespace kibitz::server {

class NdjsonStream {
 public:
  // At most this many iteration lines wait while a write is in flight.
  static constexpr size_t kMaxQueuedUpdates = 4;

  void push_update(std::string line);  // one iteration; `line` ends with '\n'
  // A line never dropped (a batch's position: at most max_batch_positions
  // of them). Not mixed with push_update in one stream: written before
  // the updates queued with them.
  void push_kept(std::string line);
  void push_final(std::string line);  // the last line; ends the stream

  // What the next write sends: every queued line, and whether the final
  // one is among them (the stream then ends).
  struct Batch {
    std::string lines;
    bool last = false;
  };
  // The next batch, or nothing while a write is in flight or no line is
  // queued. Call finish_write() when it is written.
  std::optional<Batch> take();
  void finish_write() { writing_ = false; }
  bool writing() const { return writing_; }
  // The final line has been handed out by take().
  bool ended() const { return ended_; }
  // A batch has been handed out: the response has begun.
  bool started() const { return started_; }

 private:
  std::deque<std::string> updates_;
  std::string kept_;  // push_kept's lines, in order
  std::string final_;
  bool has_final_ = false;
  bool started_ = false;
  bool ended_ = false;
  bool writing_ = false;
};

}  // namespace kibitz::server
