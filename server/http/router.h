// Which route a request targets: the route template (for metrics and logs),
// the access scope, and the methods it answers.
#pragma once

#include <string_view>

namespace kibitz::server {

enum class Route {
  analyze,
  jobs,
  job,
  moves,
  perft,
  annotate,
  ws,
  info,
  healthz,
  readyz,
  metrics,
  static_file,
  not_found,
};

struct RouteMatch {
  Route route = Route::not_found;
  std::string_view name = "other";  // template: "/v1/jobs/{id}", "static", "other"
  std::string_view scope;           // access scope; "" = open to all
  std::string_view allow;           // the Allow header: methods this route answers
  std::string_view id;              // {id} of /v1/jobs/{id}
  bool method_allowed = false;      // OPTIONS is never "allowed" here: answered apart
};

// `path` is the request target without its query string.
RouteMatch match_route(std::string_view method, std::string_view path);

// The target's path (before '?') and query (after it).
std::string_view target_path(std::string_view target);
std::string_view target_query(std::string_view target);
// The value of `name` in a query string ("" when missing), not decoded.
std::string_view query_param(std::string_view query, std::string_view name);

}  // namespace kibitz::server
