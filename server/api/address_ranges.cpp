#include "server/api/address_ranges.h"

#include <charconv>

namespace kibitz::server {

namespace ip = boost::asio::ip;

namespace {

ip::address_v6::bytes_type as_v6_bytes(const ip::address& a) {
  if (a.is_v4()) return ip::make_address_v6(ip::v4_mapped, a.to_v4()).to_bytes();
  return a.to_v6().to_bytes();
}

bool same_prefix(const ip::address_v6::bytes_type& a, const ip::address_v6::bytes_type& b,
                 int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;
    if ((a[i] & mask) != (b[i] & mask)) return false;
  }
  return true;
}

}  // namespace

Expected<AddressRanges, std::string> AddressRanges::parse(std::string_view list) {
  AddressRanges out;
  size_t i = 0;
  while (i < list.size()) {
    const size_t end = list.find_first_of(", \t", i);
    const std::string_view entry = list.substr(i, end == std::string_view::npos ? end : end - i);
    i = end == std::string_view::npos ? list.size() : end + 1;
    if (entry.empty()) continue;
    const auto bad = [&](const char* why) {
      return Unexpected("'" + std::string(entry.substr(0, 64)) + "' " + why);
    };
    const size_t slash = entry.find('/');
    boost::system::error_code ec;
    const ip::address address = ip::make_address(std::string(entry.substr(0, slash)), ec);
    if (ec) return bad("is not an IP address or range (like 10.0.0.0/8 or fd00::/8)");
    const int width = address.is_v4() ? 32 : 128;
    int prefix = width;
    if (slash != std::string_view::npos) {
      const std::string_view p = entry.substr(slash + 1);
      const auto [ptr, err] = std::from_chars(p.data(), p.data() + p.size(), prefix);
      if (err != std::errc() || ptr != p.data() + p.size() || p.empty() || prefix < 0 ||
          prefix > width)
        return bad(address.is_v4() ? "has no prefix length from 0 to 32"
                                   : "has no prefix length from 0 to 128");
    }
    out.ranges_.push_back({as_v6_bytes(address), address.is_v4() ? prefix + 96 : prefix});
  }
  return out;
}

bool AddressRanges::contains(const ip::address& address) const {
  const auto bytes = as_v6_bytes(address);
  for (const Range& r : ranges_)
    if (same_prefix(bytes, r.base, r.prefix)) return true;
  return false;
}

}  // namespace kibitz::server
