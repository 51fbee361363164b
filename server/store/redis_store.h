// The Redis backend (store.backend "redis"): several instances share one
// Redis. Jobs are hashes with their retention as TTL, queued on a stream
// read by one consumer group (each instance a consumer); an instance holds
// what it took by claiming it again every claim_idle_ms / 4, and the others
// take over (XAUTOCLAIM) what it held once it stopped doing so for
// claim_idle_ms. A DELETE on another instance reaches the runner through
// pub/sub (and, should the message be missed, its next claim). The
// evaluation library is one hash per position. hiredis's synchronous API,
// one connection per thread that uses it.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "server/store/store.h"

namespace kibitz::server::store {

// Connects, checks Redis answers and creates the consumer group; an error
// is one line for the operator.
Expected<std::shared_ptr<Store>, std::string> open_redis(const Settings& settings);

// This instance's consumer name: host name, pid and 32 random bits.
std::string redis_consumer_name();

}  // namespace kibitz::server::store
