// Idempotency-Key on POST /v1/jobs and POST /v1/games/annotate (the IETF
// draft "The Idempotency-Key HTTP Header Field"): a submission repeated
// with the same key by the same client (its API key, else its address)
// answers the job the first one made instead of making a second; the same
// key with another body is 422; a repeat while the first is still being
// stored is 409. The binding is kept in the store (store.h), so it outlives
// a restart and holds across the instances sharing Redis. HAProxy
// (deploy/haproxy/haproxy.cfg) gives every POST without a key a unique one
// that its retries keep.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace kibitz::server {

inline constexpr size_t kMaxIdempotencyKeyBytes = 255;

// The key as kept: 1 to 255 visible ASCII characters (0x21-0x7e), also
// when sent as a Structured Field string ("..."), which is unquoted; or
// the message of a 400.
Expected<std::string, std::string> check_idempotency_key(std::string_view header);

// What "the same request" is: the kind of job and the body as parsed
// (members in order, numbers as numbers, so spacing and member order do not
// matter), as 32 hex digits. Not a security measure: a client can only
// confuse its own keys.
std::string request_fingerprint(std::string_view kind, const nlohmann::json& request);

// The keys being submitted right now in this process: a second request with
// one of them waits for nothing, it gets 409.
class IdempotencyGate {
 public:
  class Pass {  // held while the submission is stored
   public:
    Pass() = default;
    Pass(Pass&& o) noexcept : gate_(o.gate_), name_(std::move(o.name_)) { o.gate_ = nullptr; }
    Pass& operator=(Pass&& o) noexcept {
      if (this != &o) {
        release();
        gate_ = o.gate_;
        name_ = std::move(o.name_);
        o.gate_ = nullptr;
      }
      return *this;
    }
    Pass(const Pass&) = delete;
    ~Pass() { release(); }
    explicit operator bool() const { return gate_ != nullptr; }

   private:
    friend class IdempotencyGate;
    void release();
    Pass(IdempotencyGate* gate, std::string name) : gate_(gate), name_(std::move(name)) {}
    IdempotencyGate* gate_ = nullptr;
    std::string name_;
  };

  // An empty pass when the owner's key is being submitted already.
  Pass enter(const std::string& owner, const std::string& key);

 private:
  std::mutex mutex_;
  std::set<std::string> busy_;
};

}  // namespace kibitz::server
