// The route table: what answers each route (router.h names the routes and
// router.cpp matches a path to one). A new endpoint is its row in router.cpp's
// kRoutes, a row in kRouteTable here, and its handler; the Api call it
// makes, in server/api/api.h.
//
// Every handler answers through reply() or send() (http_response.cpp); a
// call that may wait for the store runs on the store's threads (via_store)
// and comes back to this connection's strand (deliver).
#include "http_session.h"
#include "openapi_document.h"
#include "static_files.h"

namespace kibitz::server {

const HttpSession::RouteRow HttpSession::kRouteTable[] = {
    {Route::analyze, &HttpSession::analyze},          // POST /v1/analyze
    {Route::jobs, &HttpSession::submit_job},          // POST /v1/jobs
    {Route::job, &HttpSession::job},                  // GET, DELETE /v1/jobs/{id}
    {Route::evals, &HttpSession::evals},              // GET /v1/evals
    {Route::moves, &HttpSession::moves},              // POST /v1/moves
    {Route::tablebase, &HttpSession::tablebase},      // GET /v1/tablebase
    {Route::cloud_eval, &HttpSession::cloud_eval},    // GET /api/cloud-eval
    {Route::batch, &HttpSession::batch},              // POST /v1/batch
    {Route::perft, &HttpSession::perft},              // POST /v1/perft
    {Route::annotate, &HttpSession::annotate},        // POST /v1/games/annotate
    {Route::ws, &HttpSession::ws_without_upgrade},    // GET /v1/ws (an upgrade is not routed)
    {Route::info, &HttpSession::info},                // GET /v1/info
    {Route::healthz, &HttpSession::healthz},          // GET /healthz
    {Route::readyz, &HttpSession::readyz},            // GET /readyz
    {Route::metrics, &HttpSession::metrics},          // GET /metrics
    {Route::openapi, &HttpSession::openapi},          // GET /v1/openapi.yaml
    {Route::static_file, &HttpSession::static_file},  // GET / and the web page's files
};

void HttpSession::dispatch_route(Request& req) {
  const RouteMatch& route = ex_.route;
  if (ex_.method == "OPTIONS" && route.route != Route::not_found) return options(req);
  if (route.route == Route::not_found)
    return reply_error(404, "not_found", "no such endpoint: " + loggable(ex_.parsed.path(), 100));
  if (!route.method_allowed) {
    return reply_error(405, "method_not_allowed",
                       ex_.method + " is not allowed on " + std::string(route.name),
                       {{"Allow", std::string(route.allow)}});
  }
  if (!check_access(req)) return;
  for (const RouteRow& row : kRouteTable)
    if (row.route == route.route) return (this->*row.handle)(req);
  reply_error(404, "not_found", "no such endpoint");
}

// A CORS preflight, or a client asking which methods a route answers.
void HttpSession::options(Request& req) {
  http::response<http::empty_body> res{http::status::no_content, ex_.version};
#if KIBITZ_HAVE_ACCESS
  if (ctx_.access) {
    AccessRequest ar;
    ar.scope = ex_.route.scope.empty() ? std::string_view("info") : ex_.route.scope;
    ar.method = ex_.method;
    ar.origin = sv(req[http::field::origin]);
    ar.host = sv(req[http::field::host]);
    ar.ip = ex_.client;
    ex_.extra = ctx_.access->preflight(ar).headers;
  }
#else
  (void)req;
#endif
  res.set(http::field::allow, ex_.route.allow);
  send(std::move(res));
}

std::optional<nlohmann::json> HttpSession::parse_request(const Request& req) {
  auto body = parse_body(req.body(), ctx_.config);
  if (!body) {
    reply(body.error());
    return std::nullopt;
  }
  return std::move(*body);
}

std::function<void(Reply)> HttpSession::deliver() {
  return [weak = weak_from_this(), gate = ctx_.gate, seq = ex_.seq](Reply r) {
    post_to(weak, gate, [seq, r = std::move(r)](HttpSession& s) mutable {
      if (s.ex_.seq == seq && s.busy_) s.reply(std::move(r));
    });
  };
}

void HttpSession::via_store(std::function<Reply()> call) {
  ctx_.api.store_call(std::move(call), deliver());
}

void HttpSession::healthz(Request&) {
  Reply r;
  r.body = {{"status", "ok"}};
  reply(std::move(r));
}

void HttpSession::readyz(Request&) {
  // Not ready: shutting down, or the store (Redis) cannot be reached,
  // as the store's health thread last saw it (no round trip here).
  if (!ctx_.api.ready()) {
    if (ctx_.stopping) return reply_error(503, "shutting_down", "not ready: shutting down");
    return reply_error(503, "storage_unavailable",
                       "not ready: the store cannot be reached; retry later");
  }
  Reply r;
  r.body = {{"status", "ready"}};
  reply(std::move(r));
}

void HttpSession::metrics(Request&) {
  send_body(
      200, "text/plain; version=0.0.4; charset=utf-8",
      std::make_shared<const std::string>(ctx_.api.metrics().render() + ctx_.connections.render()));
}

void HttpSession::info(Request&) { reply(ctx_.api.info()); }

void HttpSession::openapi(Request&) {
  static const auto document = std::make_shared<const std::string>(kOpenApiDocument);
  send_body(200, "application/yaml", document, {{"Cache-Control", "no-cache"}});
}

void HttpSession::analyze(Request& req) {
  if (answer_from_memo(req)) return;
  if (auto body = parse_request(req)) handle_analyze(req, *body);
}

void HttpSession::perft(Request& req) {
  if (auto body = parse_request(req)) handle_perft(*body);
}

void HttpSession::moves(Request& req) {
  if (auto body = parse_request(req)) reply(ctx_.api.moves(*body));
}

// POST /v1/jobs and POST /v1/games/annotate: a job submission, refused
// before its body was read when its client is at a cap; a big one is read
// (parsed and decoded) and stored on the bulk thread at nice 19
// (Api::bulk_call), the others on the store's threads.
void HttpSession::submit_job(Request& req) {
  if (ex_.early_refusal) return reply(std::move(*ex_.early_refusal));
  using Submit = Reply (*)(Api&, const nlohmann::json&, const Caller&);
  const Submit submit = ex_.route.route == Route::annotate
                            ? Submit([](Api& a, const nlohmann::json& b, const Caller& o) {
                                return a.annotate(b, o);
                              })
                            : Submit([](Api& a, const nlohmann::json& b, const Caller& o) {
                                return a.submit_job(b, o);
                              });
  Api& api = ctx_.api;
  if (req.body().size() >= kBulkBodyBytes) {
    Caller o = job_caller(req);
    const std::string owner = o.owner;
    return api.bulk_call(
        owner,
        [&api, submit, o = std::move(o), text = std::move(req.body())] {
          auto body = parse_body(text, api.config());
          return body ? submit(api, *body, o) : std::move(body.error());
        },
        deliver());
  }
  if (auto body = parse_request(req))
    via_store([&api, submit, body = std::move(*body), o = job_caller(req)] {
      return submit(api, body, o);
    });
}

void HttpSession::annotate(Request& req) { submit_job(req); }

void HttpSession::job(Request&) {
  Api& api = ctx_.api;
  // Answered once the job has stopped; no thread waits meanwhile.
  if (ex_.method == "DELETE") return api.delete_job_then(ex_.route.id, deliver());
  via_store([&api, id = std::string(ex_.route.id)] { return api.get_job(id); });
}

void HttpSession::evals(Request&) {
  via_store([&api = ctx_.api, game = ex_.parsed.query_param("game").value_or(""),
             fen = ex_.parsed.query_param("fen").value_or(""),
             multipv = ex_.parsed.query_param("multipv").value_or(""),
             variant = ex_.parsed.query_param("variant").value_or("")] {
    return api.evals(game, fen, multipv, variant);
  });
}

// On the store's threads: a probe reads the tables' files (mmapped, from
// disk) and waits for the lock the search threads' probes take.
void HttpSession::tablebase(Request&) {
  via_store([&api = ctx_.api, fen = ex_.parsed.query_param("fen").value_or("")] {
    return api.tablebase(fen);
  });
}

// On the store's threads: the evaluation library is read there.
void HttpSession::cloud_eval(Request&) {
  via_store([&api = ctx_.api, fen = ex_.parsed.query_param("fen").value_or(""),
             multipv = ex_.parsed.query_param("multiPv").value_or(""),
             variant = ex_.parsed.query_param("variant").value_or("")] {
    return api.cloud_eval(fen, multipv, variant);
  });
}

void HttpSession::batch(Request& req) { handle_batch(req); }

void HttpSession::ws_without_upgrade(Request&) {
  reply_error(426, "invalid_request", "GET /v1/ws needs a WebSocket upgrade",
              {{"Upgrade", "websocket"}});
}

void HttpSession::static_file(Request& req) {
  const std::string_view path = ex_.parsed.path();
  StaticOpen found = open_static(ctx_.web_root, path);
  if (found.status != 200) return reply_error(found.status, found.code, found.message);
  const auto size = found.body.size();
  const auto set_fields = [&](auto& res) {
    res.set(http::field::content_type, found.file.content_type);
    res.set(http::field::cache_control, found.file.cache_control);
    res.content_length(size);
  };
  if (req.method() == http::verb::head) {
    http::response<http::empty_body> res{http::status::ok, ex_.version};
    set_fields(res);
    return send(std::move(res));
  }
  http::response<http::file_body> res{std::piecewise_construct,
                                      std::make_tuple(std::move(found.body)),
                                      std::make_tuple(http::status::ok, ex_.version)};
  set_fields(res);
  send(std::move(res));
}

}  // namespace kibitz::server
