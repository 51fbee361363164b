#include "server/api/idempotency.h"
#include "server/store/json_text.h"

#include <cstdint>
#include <cstdio>

namespace kibitz::server {

Expected<std::string, std::string> check_idempotency_key(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.empty() || v.size() > kMaxIdempotencyKeyBytes)
    return Unexpected("the Idempotency-Key header must hold 1 to " +
                      std::to_string(kMaxIdempotencyKeyBytes) + " characters, not " +
                      std::to_string(v.size()));
  for (char c : v)
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
      return Unexpected(std::string(
          "the Idempotency-Key header must hold visible ASCII characters only (no spaces), "
          "e.g. a UUID"));
  return std::string(v);
}

std::string request_fingerprint(std::string_view kind, const nlohmann::json& request) {
  const std::string text = std::string(kind) + '\n' + to_wire(request);
  // Two FNV-1a passes with different offsets: 128 bits.
  uint64_t a = 14695981039346656037ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : text) {
    a = (a ^ c) * 1099511628211ull;
    b = (b ^ c) * 1099511628211ull;
    b ^= b >> 29;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return out;
}

IdempotencyGate::Pass IdempotencyGate::enter(const std::string& owner, const std::string& key) {
  std::string name = std::to_string(owner.size()) + ":" + owner + key;
  std::lock_guard lock(mutex_);
  if (!busy_.insert(name).second) return Pass();
  return Pass(this, std::move(name));
}

void IdempotencyGate::Pass::release() {
  if (!gate_) return;
  std::lock_guard lock(gate_->mutex_);
  gate_->busy_.erase(name_);
  gate_ = nullptr;
}

}  // namespace kibitz::server
