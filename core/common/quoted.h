// A piece of the client's text, quoted for an error message: 'e9'.
#pragma once

#include <string>
#include <string_view>

namespace kibitz {

inline std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace kibitz
