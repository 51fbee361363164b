#include "ndjson_stream.h"

#include <memory>
#include <utility>

namespace kibitz::server {

void NdjsonStream::push(Outbox::Kind kind, std::string line) {
  if (has_final_ || ended_) return;
  outbox_.push("", 0, kind, std::make_shared<const std::string>(std::move(line)));
}

void NdjsonStream::push_update(std::string line) { push(Outbox::Kind::update, std::move(line)); }

void NdjsonStream::push_kept(std::string line) { push(Outbox::Kind::kept, std::move(line)); }

void NdjsonStream::push_final(std::string line) {
  push(Outbox::Kind::kept, std::move(line));
  has_final_ = true;
}

std::optional<NdjsonStream::Batch> NdjsonStream::take() {
  if (ended_) return std::nullopt;
  auto lines = outbox_.start_write_all();
  if (!lines) return std::nullopt;
  started_ = true;
  ended_ = has_final_;  // nothing is queued after the final line
  return Batch{std::move(lines), has_final_};
}

}  // namespace kibitz::server
