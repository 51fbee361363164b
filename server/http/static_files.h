// GET / and the files below it: the web page, from a root folder. Paths are
// percent-decoded and then checked segment by segment, so neither "../" nor
// "%2e%2e/" nor a symlink leads outside the root.
#pragma once

#include <string>
#include <string_view>

#include <boost/beast/http/file_body.hpp>

namespace kibitz::server {

struct StaticFile {
  std::string path;                // on disk
  std::string_view content_type;   // by extension
  std::string_view cache_control;  // no-cache, or long-lived for content-hashed names
};

enum class StaticStatus { ok, not_found, bad_path };

struct StaticLookup {
  StaticStatus status = StaticStatus::not_found;
  StaticFile file;
  std::string reason;  // for bad_path
};

// `root` must be absolute and canonical ("" = no web page: everything 404).
StaticLookup resolve_static(const std::string& root, std::string_view url_path);

// A static file opened for a GET or HEAD of `url_path`: its lookup and its
// body, or the error to answer (status 400 invalid_request or 404
// not_found, with the message).
struct StaticOpen {
  int status = 200;
  std::string code, message;
  StaticFile file;
  boost::beast::http::file_body::value_type body;
};
StaticOpen open_static(const std::string& root, std::string_view url_path);

// <dir of the running executable>/web when that folder exists, else "".
std::string default_web_root();
// The canonical form of a configured root, "" when it is not a folder.
std::string canonical_root(const std::string& root);

std::string_view content_type_for(std::string_view path);

}  // namespace kibitz::server
