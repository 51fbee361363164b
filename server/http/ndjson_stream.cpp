#include "ndjson_stream.h"

#include <cstdio>
#include <utility>

namespace kibitz::server {

namespace {

void append_chunk(std::string& out, const std::string& data) {
  char size[24];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  out.append(size, static_cast<size_t>(n));
  out += data;
  out += "\r\n";
}

}  // namespace

NdjsonStream::NdjsonStream(std::string header, bool chunked)
    : header_(std::move(header)), chunked_(chunked) {}

void NdjsonStream::push_update(std::string line) {
  if (has_final_ || ended_) return;
  if (updates_.size() >= kMaxQueuedUpdates) updates_.pop_front();
  updates_.push_back(std::move(line));
}

void NdjsonStream::push_final(std::string line) {
  if (has_final_ || ended_) return;
  final_ = std::move(line);
  has_final_ = true;
}

std::string NdjsonStream::take() {
  if (writing_ || ended_) return {};
  if (updates_.empty() && !has_final_) return {};
  std::string body;
  for (auto& u : updates_) body += u;
  updates_.clear();
  if (has_final_) body += final_;
  std::string out = std::move(header_);
  header_.clear();
  if (chunked_) {
    if (!body.empty()) append_chunk(out, body);
    if (has_final_) out += "0\r\n\r\n";
  } else {
    out += body;
  }
  if (has_final_) ended_ = true;
  writing_ = true;
  return out;
}

}  // namespace kibitz::server
