#include "server/api/json_util.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "server/api/api.h"
#include "server/store/json_text.h"

namespace kibitz::server {

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; ok && k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      ok = (d >> 6) == 0x2;
      cp = (cp << 6) | (d & 0x3F);
    }
    // No overlong forms, surrogates or code points past U+10FFFF.
    if (ok && ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
               (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
      ok = false;
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

Reply error_reply(int status, std::string code, std::string message) {
  Reply r;
  r.status = status;
  r.body = {{"error", {{"code", valid_utf8(code)}, {"message", valid_utf8(message)}}}};
  return r;
}

const std::shared_ptr<const std::string>& Reply::wire() {
  if (!text) text = std::make_shared<const std::string>(to_wire(body));
  return text;
}

nlohmann::json& Reply::json_body() {
  if (body.is_null() && text) body = nlohmann::json::parse(*text, nullptr, false);
  return body;
}

nlohmann::json Reply::error() const {
  if (status == 200 || !body.is_object()) return nlohmann::json::object();
  return body.value("error", nlohmann::json::object());
}

Reply cache_hit_reply(std::shared_ptr<const std::string> text) {
  Reply r{200, nullptr, std::move(text), {{"X-Kibitz-Cache", "hit"}}};
  r.cached = true;
  return r;
}

Reply cache_hit_reply(nlohmann::json body) {
  Reply r{200, std::move(body), nullptr, {{"X-Kibitz-Cache", "hit"}}};
  r.cached = true;
  return r;
}

Reply internal_reply(std::string_view what) {
  return error_reply(500, "internal", "internal error: " + std::string(what.substr(0, 200)));
}

namespace {

// The DOM builder of nlohmann::json with a nesting cap: parsing stops at the
// first container deeper than the cap, before any memory is spent on it.
class CappedDomParser {
 public:
  using json = nlohmann::json;
  CappedDomParser(json& root, int max_depth) : dom_(root, false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return enter() && dom_.start_object(n); }
  bool key(json::string_t& v) { return dom_.key(v); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    error_ = true;
    position_ = position;
    token_ = token;
    what_ = e.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  bool error() const { return error_; }
  size_t position() const { return position_; }
  const std::string& what() const { return what_; }
  size_t depth_position = 0;

 private:
  bool enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false, error_ = false;
  size_t position_ = 0;
  std::string token_, what_;
};

}  // namespace

Expected<nlohmann::json, Reply> parse_body(std::string_view body, const Config& config) {
  nlohmann::json root;
  CappedDomParser sax(root, config.max_json_depth);
  const bool ok = nlohmann::json::sax_parse(body.begin(), body.end(), &sax,
                                            nlohmann::json::input_format_t::json, true, false);
  if (sax.too_deep())
    return Unexpected(error_reply(
        400, "invalid_json",
        "the request body nests deeper than " + std::to_string(config.max_json_depth) + " levels"));
  if (!ok || sax.error()) {
    std::string detail = sax.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> after the prefix.
    if (auto p = detail.find("] "); p != std::string::npos) detail = detail.substr(p + 2);
    return Unexpected(error_reply(400, "invalid_json",
                                  "the request body is not valid JSON at offset " +
                                      std::to_string(sax.position()) + ": " + detail));
  }
  return root;
}

}  // namespace kibitz::server
