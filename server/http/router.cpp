#include "router.h"

#include <array>

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
    Entry{"/v1/moves", Route::moves, "moves", "POST, OPTIONS"},
    Entry{"/v1/perft", Route::perft, "perft", "POST, OPTIONS"},
    Entry{"/v1/games/annotate", Route::annotate, "annotate", "POST, OPTIONS"},
    Entry{"/v1/ws", Route::ws, "ws", "GET"},
    Entry{"/v1/info", Route::info, "info", "GET, OPTIONS"},
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

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

std::string_view target_query(std::string_view target) {
  const size_t q = target.find('?');
  return q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
}

std::string_view query_param(std::string_view query, std::string_view name) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(pos, end - pos);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name)
      return eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    pos = end + 1;
  }
  return {};
}

}  // namespace kibitz::server
