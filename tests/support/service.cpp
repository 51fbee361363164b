#include "support/service.h"

#include "common/isa.h"

#define KIBITZ_TEST_CONCAT_(a, b) a##b
#define KIBITZ_TEST_CONCAT(a, b) KIBITZ_TEST_CONCAT_(a, b)

namespace kibitz::test {

std::unique_ptr<engine::Service> make_service(int threads, size_t hash_mib) {
  engine::ServiceOptions o;
  o.threads = threads;
  o.hash_mib[0] = o.hash_mib[1] = hash_mib;
  return test::make_service(o);  // qualified: not engine::make_service by ADL
}

std::unique_ptr<engine::Service> make_service(const engine::ServiceOptions& options) {
  return engine::KIBITZ_TEST_CONCAT(backend_, KIBITZ_ISA_NAME)().make_service(options);
}

Expected<Analysis, Error> analyze(engine::Service& service,
                                  const engine::AnalysisRequest& request) {
  auto analysis = std::make_shared<Analysis>();
  auto mutex = std::make_shared<std::mutex>();
  engine::Callbacks cb;
  cb.on_progress = [analysis, mutex](const engine::Progress& p) {
    std::lock_guard lock(*mutex);
    analysis->iterations.push_back(p);
  };
  cb.on_done = [analysis, mutex](const engine::Result& r) {
    std::lock_guard lock(*mutex);
    analysis->result = r;
  };
  auto handle = service.analyze(request, std::move(cb));
  if (!handle) return Unexpected(handle.error());
  (*handle)->wait();
  std::lock_guard lock(*mutex);
  return *analysis;
}

}  // namespace kibitz::test
