// JSON helpers shared by the API's parts: safe parsing and error replies.
#pragma once

#include <string>
#include <string_view>

namespace kibitz::server {

// Replaces bytes that are not valid UTF-8 with '?': every string that goes
// into a reply must serialise without throwing.
std::string valid_utf8(std::string_view s);

}  // namespace kibitz::server
