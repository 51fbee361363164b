#include "router.h"

#include <array>
#include <boost/url/grammar/error.hpp>
#include <boost/url/parse.hpp>

namespace kibitz::server {

namespace {

struct Entry {
  std::string_view path;
  Route route;
  std::string_view scope;
  std::string_view allow;
};

constexpr std::array kRoutes{
    Entry{"/v1/analyze", Route::analyze, "analyze", "POST, OPTIONS"},
    Entry{"/v1/jobs", Route::jobs, "jobs", "POST, OPTIONS"},
    Entry{"/v1/evals", Route::evals, "analyze", "GET, OPTIONS"},
    Entry{"/v1/moves", Route::moves, "moves", "POST, OPTIONS"},
    Entry{"/v1/tablebase", Route::tablebase, "moves", "GET, OPTIONS"},
    Entry{"/api/cloud-eval", Route::cloud_eval, "analyze", "GET, OPTIONS"},
    Entry{"/v1/batch", Route::batch, "analyze", "POST, OPTIONS"},
    Entry{"/v1/perft", Route::perft, "perft", "POST, OPTIONS"},
    Entry{"/v1/games/annotate", Route::annotate, "annotate", "POST, OPTIONS"},
    Entry{"/v1/ws", Route::ws, "ws", "GET"},
    Entry{"/v1/info", Route::info, "info", "GET, OPTIONS"},
    Entry{"/v1/openapi.yaml", Route::openapi, "", "GET, HEAD, OPTIONS"},
    Entry{"/healthz", Route::healthz, "", "GET, HEAD"},
    Entry{"/readyz", Route::readyz, "", "GET, HEAD"},
    Entry{"/metrics", Route::metrics, "metrics", "GET"},
};

bool allows(std::string_view allow, std::string_view method) {
  // `allow` is a short comma list; match whole words.
  size_t pos = 0;
  while (pos < allow.size()) {
    size_t end = allow.find(',', pos);
    if (end == std::string_view::npos) end = allow.size();
    std::string_view word = allow.substr(pos, end - pos);
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    if (word == method) return true;
    pos = end + 1;
  }
  return false;
}

RouteMatch make(Route route, std::string_view name, std::string_view scope, std::string_view allow,
                std::string_view method) {
  RouteMatch m;
  m.route = route;
  m.name = name;
  m.scope = scope;
  m.allow = allow;
  m.method_allowed = method != "OPTIONS" && allows(allow, method);
  return m;
}

}  // namespace

RouteMatch match_route(std::string_view method, std::string_view path) {
  for (const auto& e : kRoutes)
    if (path == e.path) return make(e.route, e.path, e.scope, e.allow, method);
  constexpr std::string_view kJobPrefix = "/v1/jobs/";
  if (path.starts_with(kJobPrefix) && path.size() > kJobPrefix.size() &&
      path.find('/', kJobPrefix.size()) == std::string_view::npos) {
    RouteMatch m = make(Route::job, "/v1/jobs/{id}", "jobs", "GET, DELETE, OPTIONS", method);
    m.id = path.substr(kJobPrefix.size());
    return m;
  }
  // The API lives under /v1/; everything else is the web page's files.
  if (path == "/v1" || path.starts_with("/v1/"))
    return make(Route::not_found, "other", "", "", method);
  return make(Route::static_file, "static", "", "GET, HEAD", method);
}

std::string_view RequestTarget::path() const {
  const std::string_view p = url.encoded_path();
  return p.empty() ? std::string_view("/") : p;
}

std::optional<std::string> RequestTarget::query_param(std::string_view name) const {
  const auto params = url.params();  // decodes keys and values
  const auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return (*it).value;
}

boost::system::result<RequestTarget> parse_target(std::string_view target) {
  auto parsed = target.starts_with('/') ? boost::urls::parse_origin_form(target)
                                        : boost::urls::parse_absolute_uri(target);
  if (!parsed) return parsed.error();
  // An absolute-form names a server: "http://host/path", not "mailto:x".
  // (With an authority, the path is empty or absolute.)
  if (!target.starts_with('/') && !parsed->has_authority())
    return boost::urls::grammar::error::mismatch;
  return RequestTarget{*parsed};
}

}  // namespace kibitz::server
