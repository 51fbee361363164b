// The analysis service of the variant the test is compiled for, and a
// synchronous analyze for tests.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "engine/backend.h"

namespace kibitz::test {

std::unique_ptr<engine::Service> make_service(int threads = 1, size_t hash_mib = 16);
std::unique_ptr<engine::Service> make_service(const engine::ServiceOptions& options);

struct Analysis {
  std::vector<engine::Progress> iterations;
  engine::Result result;
};

// Runs the request to its end. Fails the test (via the returned error) when
// the service rejects it.
Expected<Analysis, Error> analyze(engine::Service& service, const engine::AnalysisRequest& request);

}  // namespace kibitz::test
