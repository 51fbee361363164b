#include "ndjson_stream.h"

#include <utility>

namespace kibitz::server {

void NdjsonStream::push_update(std::string line) {
  if (has_final_ || ended_) return;
  if (updates_.size() >= kMaxQueuedUpdates) updates_.pop_front();
  updates_.push_back(std::move(line));
}

void NdjsonStream::push_kept(std::string line) {
  if (has_final_ || ended_) return;
  kept_ += line;
}

void NdjsonStream::push_final(std::string line) {
  if (has_final_ || ended_) return;
  final_ = std::move(line);
  has_final_ = true;
}

std::optional<NdjsonStream::Batch> NdjsonStream::take() {
  if (writing_ || ended_) return std::nullopt;
  if (updates_.empty() && kept_.empty() && !has_final_) return std::nullopt;
  Batch batch;
  batch.lines = std::move(kept_);
  kept_.clear();
  for (auto& u : updates_) batch.lines += u;
  updates_.clear();
  if (has_final_) {
    batch.lines += final_;
    batch.last = true;
    ended_ = true;
  }
  started_ = true;
  writing_ = true;
  return batch;
}

}  // namespace kibitz::server
