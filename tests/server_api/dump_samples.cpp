// Prints real answers of the API, one per line as
// {"path", "method", "status", "body"} (REST) or {"ws": message}, for
// validate_samples.py to check against proto/openapi.yaml and
// proto/ws.schema.json.
#include <cstdio>
#include <future>
#include <mutex>

#include "api_test_support.h"

using namespace kibitz;
using namespace kibitz::server;
using namespace kibitz::server::test;

namespace {

std::mutex out_mutex;

void emit(const json& j) {
  std::lock_guard lock(out_mutex);
  std::printf("%s\n", j.dump().c_str());
}

void rest(const char* path, const char* method, const Reply& r) {
  emit({{"path", path}, {"method", method}, {"status", r.status}, {"body", r.body}});
}

// A WebSocket-style stream: every info, then the final message.
void stream(Api& api, json request, const std::string& id, bool annotate) {
  auto done = std::make_shared<std::promise<void>>();
  Reporter cb;
  const std::string info_type = annotate ? "progress" : "info";
  const std::string final_type = annotate ? "review" : "bestmove";
  cb.on_progress = [id, info_type](json j) {
    j["type"] = info_type;
    j["id"] = id;
    emit({{"ws", j}});
  };
  cb.on_done = [id, final_type, done](Reply r) {
    json j = r.body;
    if (r.status == 200) {
      j["type"] = final_type;
      j["id"] = id;
    } else {
      j = {{"type", "error"}, {"id", id}, {"error", r.body["error"]}};
    }
    emit({{"ws", j}});
    done->set_value();
  };
  auto ticket = annotate
                    ? api.annotate_stream(request, Caller{"", Priority::interactive, false}, cb)
                    : api.analyze(request, Caller{"", Priority::interactive, true}, cb);
  done->get_future().wait();
}

}  // namespace

int main() {
  auto service = small_service(2);
  auto api = make_api(test_config(), *service);
  const json chess = {{"moves", {"e2e4", "e7e5"}}, {"limits", {{"depth", 4}}}, {"multipv", 2}};
  const json draughts = {{"game", "draughts"}, {"limits", {{"depth", 5}}}};
  rest("/v1/analyze", "POST", analyze(*api, chess));
  rest("/v1/analyze", "POST", analyze(*api, chess));  // cached
  rest("/v1/analyze", "POST", analyze(*api, draughts));
  rest("/v1/analyze", "POST",
       analyze(*api, {{"game", "draughts"}, {"fen", "B:WC3,E5:BF6"}, {"limits", {{"depth", 3}}}}));
  rest("/v1/analyze", "POST", analyze(*api, {{"moves", {"f2f3", "e7e5", "g2g4", "d8h4"}}}));
  rest("/v1/analyze", "POST", analyze(*api, {{"moves", {"e2e5"}}}));
  rest("/v1/analyze", "POST", analyze(*api, {{"fen", "bad"}}));
  rest("/v1/analyze", "POST", analyze(*api, {{"limits", {{"depth", "x"}}}}));
  auto bad_json = parse_body("{", api->config());
  rest("/v1/analyze", "POST", bad_json.error());
  rest("/v1/moves", "POST", moves(*api, {{"moves", {"e2e4"}}}));
  rest("/v1/moves", "POST", moves(*api, {{"game", "draughts"}, {"fen", "B:WC3,E5:BF6"}}));
  rest("/v1/perft", "POST", perft(*api, {{"depth", 2}}));
  rest("/v1/perft", "POST", perft(*api, {{"game", "draughts"}, {"depth", 3}}));
  rest("/v1/info", "GET", api->info());

  Reply job = api->submit_job(chess, {});
  rest("/v1/jobs", "POST", job);
  rest("/v1/jobs/{id}", "GET", wait_job(*api, job.body["id"]));
  Reply annotate =
      api->annotate({{"pgn", "[Event \"x\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0"},
                     {"limits", {{"depth", 3}}}},
                    {});
  rest("/v1/games/annotate", "POST", annotate);
  rest("/v1/jobs/{id}", "GET", api->get_job(annotate.body["id"].get<std::string>()));
  rest("/v1/jobs/{id}", "GET", wait_job(*api, annotate.body["id"]));
  Reply pdn = api->annotate({{"pdn", "1. c3-d4 f6-g5 2. b2-c3 *"}, {"limits", {{"depth", 3}}}}, {});
  rest("/v1/games/annotate", "POST", pdn);
  rest("/v1/jobs/{id}", "GET", wait_job(*api, pdn.body["id"]));
  Reply slow = api->submit_job({{"limits", {{"movetime_ms", 2000}}}}, {});
  rest("/v1/jobs/{id}", "DELETE", api->delete_job(slow.body["id"].get<std::string>()));
  rest("/v1/jobs/{id}", "GET", wait_job(*api, slow.body["id"]));
  rest("/v1/jobs/{id}", "GET", api->get_job("ffff"));
  rest("/v1/games/annotate", "POST", api->annotate({{"pgn", "1. e4 e5 2. Ke3 *"}}, {}));

  stream(*api, {{"moves", {"d2d4"}}, {"limits", {{"depth", 3}}}}, "t1", false);
  stream(*api, {{"game", "draughts"}, {"limits", {{"depth", 3}}}}, "t2", false);
  stream(*api, {{"pgn", "1. d4 d5 *"}, {"limits", {{"depth", 2}}}}, "r1", true);
  stream(*api, {{"limits", {{"depth", -1}}}}, "t3", false);

  api->shutdown();
  rest("/v1/analyze", "POST", analyze(*api, chess));
  rest("/v1/jobs", "POST", api->submit_job(chess, {}));
  return 0;
}
