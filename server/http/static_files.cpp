#include "static_files.h"

#include "beast.h"

#include <array>
#include <boost/url/pct_string_view.hpp>
#include <cctype>
#include <filesystem>
#include <system_error>
#include <utility>

namespace kibitz::server {

namespace fs = std::filesystem;

namespace {

// Percent-decodes (Boost.URL); false on a malformed escape or a NUL byte.
bool url_decode(std::string_view in, std::string& out) {
  const auto pct = boost::urls::make_pct_string_view(in);
  if (!pct) return false;
  out = pct->decode();
  return out.find('\0') == std::string::npos;
}

// A file name with a content hash in it ("app-3f9a1c2b.js", "main.8c1d2e3f.css")
// never changes content: it may be cached for a year.
bool looks_hashed(std::string_view name) {
  const size_t dot = name.rfind('.');
  const std::string_view stem = name.substr(0, dot);
  const size_t sep = stem.find_last_of("-.");
  if (sep == std::string_view::npos) return false;
  const std::string_view hash = stem.substr(sep + 1);
  if (hash.size() < 8) return false;
  bool digit = false;
  for (char c : hash) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    digit |= std::isdigit(static_cast<unsigned char>(c)) != 0;
  }
  return digit;
}

}  // namespace

std::string_view content_type_for(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 18> kTypes{{
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".woff", "font/woff"},
      {".wasm", "application/wasm"},
      {".txt", "text/plain; charset=utf-8"},
  }};
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash))
    return "application/octet-stream";
  std::string ext(path.substr(dot));
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [e, type] : kTypes)
    if (e == ext) return type;
  return "application/octet-stream";
}

StaticLookup resolve_static(const std::string& root, std::string_view url_path) {
  StaticLookup r;
  if (root.empty()) return r;
  std::string decoded;
  if (!url_decode(url_path, decoded)) {
    r.status = StaticStatus::bad_path;
    r.reason = "malformed percent-encoding in the path";
    return r;
  }
  if (decoded.empty() || decoded.front() != '/' || decoded.find('\\') != std::string::npos) {
    r.status = StaticStatus::bad_path;
    r.reason = "the path must start with '/' and hold no backslash";
    return r;
  }
  // Segment by segment: no "..", no hidden names, no empty segments inside.
  std::string relative;
  size_t pos = 1;
  while (pos <= decoded.size()) {
    size_t end = decoded.find('/', pos);
    if (end == std::string::npos) end = decoded.size();
    const std::string_view seg = std::string_view(decoded).substr(pos, end - pos);
    if (seg.empty()) {
      if (end != decoded.size()) {
        r.status = StaticStatus::bad_path;
        r.reason = "empty path segment";
        return r;
      }
    } else if (seg.front() == '.') {
      r.status = StaticStatus::bad_path;
      r.reason = "path segments may not start with '.'";
      return r;
    } else {
      if (!relative.empty()) relative.push_back('/');
      relative.append(seg);
    }
    pos = end + 1;
  }
  fs::path file = fs::path(root) / relative;
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "index.html";
  if (!fs::is_regular_file(file, ec)) return r;
  // A symlink inside the root must not lead out of it.
  const fs::path real = fs::canonical(file, ec);
  if (ec) return r;
  const std::string real_s = real.string();
  if (real_s.size() <= root.size() || real_s.compare(0, root.size(), root) != 0 ||
      real_s[root.size()] != '/')
    return r;
  r.status = StaticStatus::ok;
  r.file.path = file.string();
  r.file.content_type = content_type_for(r.file.path);
  const std::string name = file.filename().string();
  r.file.cache_control = looks_hashed(name) && !name.ends_with(".html")
                             ? "public, max-age=31536000, immutable"
                             : "no-cache";
  return r;
}

std::string canonical_root(const std::string& root) {
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return {};
  const fs::path real = fs::canonical(root, ec);
  return ec ? std::string{} : real.string();
}

std::string default_web_root() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return canonical_root((exe.parent_path() / "web").string());
}

StaticOpen open_static(const std::string& root, std::string_view url_path) {
  StaticOpen open;
  const StaticLookup found = resolve_static(root, url_path);
  const auto fail = [&](int status, std::string code, std::string message) {
    open.status = status;
    open.code = std::move(code);
    open.message = std::move(message);
    return std::move(open);
  };
  if (found.status == StaticStatus::bad_path) return fail(400, "invalid_request", found.reason);
  if (found.status == StaticStatus::not_found)
    return fail(404, "not_found", "no such file: " + loggable(url_path, 100));
  boost::beast::error_code ec;
  open.body.open(found.file.path.c_str(), boost::beast::file_mode::scan, ec);
  if (ec) return fail(404, "not_found", "cannot open " + loggable(url_path, 100));
  open.file = found.file;
  return open;
}

}  // namespace kibitz::server
