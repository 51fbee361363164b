// Which route a request targets: the route template (for metrics and logs),
// the access scope, and the methods it answers.
#pragma once

#include <boost/url/url_view.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kibitz::server {

enum class Route {
  analyze,
  jobs,
  job,
  evals,
  tablebase,
  cloud_eval,
  batch,
  moves,
  perft,
  annotate,
  ws,
  info,
  healthz,
  readyz,
  metrics,
  openapi,
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

// `path` is the request target's path (RequestTarget::path).
RouteMatch match_route(std::string_view method, std::string_view path);

// A request target as Boost.URL parses it: origin-form ("/path?query"), or
// absolute-form ("http://host/path?query", which RFC 9112 has servers
// accept). It views the target string, which must outlive it.
struct RequestTarget {
  boost::urls::url_view url;
  // The path, still percent-encoded ("/" when the target has none).
  std::string_view path() const;
  // The first query parameter named `name`, percent-decoded ("+" is a space,
  // as in a form); nullopt when there is none.
  std::optional<std::string> query_param(std::string_view name) const;
};

// Parses a request target; the reason when it is malformed (not a path with
// an optional query, a bad %-escape, a character that must be encoded).
// The asterisk-form "*" is not a target here: OPTIONS * is answered apart.
boost::system::result<RequestTarget> parse_target(std::string_view target);

}  // namespace kibitz::server
