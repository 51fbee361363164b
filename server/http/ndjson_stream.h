// The lines of one streamed NDJSON response (POST /v1/analyze with
// Accept: application/x-ndjson): one JSON line per iteration, then the
// final line; or (POST /v1/batch) one line per position, every one kept.
// Only the queue, on the WebSocket's policy (outbox.h): one write in
// flight, every line queued meanwhile goes out in the next one, and an
// iteration line not yet written is replaced by a newer one, so a client
// that reads slower than the search iterates gets the newest iteration,
// never an unbounded queue; kept lines and the final one are never dropped.
// The session writes the header and frames the lines with Beast (HTTP/1.1
// chunks, or raw bytes to an HTTP/1.0 client, which then sees the
// connection close).
#pragma once

#include <optional>
#include <string>

#include "outbox.h"

namespace kibitz::server {

class NdjsonStream {
 public:
  void push_update(std::string line);  // one iteration; `line` ends with '\n'
  // A line never dropped (a batch's position: at most max_batch_positions
  // of them).
  void push_kept(std::string line);
  void push_final(std::string line);  // the last line; ends the stream

  // What the next write sends: every queued line, and whether the final
  // one is among them (the stream then ends).
  struct Batch {
    Outbox::Text lines;
    bool last = false;
  };
  // The next batch, or nothing while a write is in flight or no line is
  // queued. Call finish_write() when it is written.
  std::optional<Batch> take();
  void finish_write() { outbox_.finish_write(); }
  bool writing() const { return outbox_.writing(); }
  // The final line has been handed out by take().
  bool ended() const { return ended_; }
  // A batch has been handed out: the response has begun.
  bool started() const { return started_; }

 private:
  void push(Outbox::Kind kind, std::string line);

  Outbox outbox_;
  bool has_final_ = false;
  bool started_ = false;
  bool ended_ = false;
};

}  // namespace kibitz::server
