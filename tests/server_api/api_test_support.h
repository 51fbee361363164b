// Helpers for the API tests: a small service, a config with tiny limits,
// and synchronous wrappers around the callback-based calls.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/service.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/metrics.h"

namespace kibitz::server::test {

using nlohmann::json;

std::unique_ptr<engine::Service> small_service(int threads = 2);
Config test_config();

// Waits (with a generous hang guard) for on_done.
Reply analyze(Api& api, const json& request, Priority priority = Priority::interactive,
              bool allow_infinite = false);
Reply moves(Api& api, const json& request);
Reply perft(Api& api, const json& request);
// Polls GET /v1/jobs/{id} until the job has finished; returns the last answer.
Reply wait_job(Api& api, const std::string& id);
// The value of one unlabelled metric line, e.g. "kibitz_nodes_searched_total".
double metric(Api& api, const std::string& name);

}  // namespace kibitz::server::test
