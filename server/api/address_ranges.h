// A list of address ranges ("10.0.0.0/8, 127.0.0.1, fd00::/8"), for the
// proxies whose X-Forwarded-For is believed (config trusted_proxies). An
// address without a prefix is that one address; IPv4 ranges also match
// IPv4-mapped IPv6 addresses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "common/expected.h"

namespace kibitz::server {

class AddressRanges {
 public:
  AddressRanges() = default;
  // Comma- or space-separated ranges; "" is none. An error names the entry.
  static Expected<AddressRanges, std::string> parse(std::string_view list);
  bool contains(const boost::asio::ip::address& address) const;
  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    boost::asio::ip::address_v6::bytes_type base{};  // IPv4 as IPv4-mapped
    int prefix = 128;                                // bits of `base` that must match
  };
  std::vector<Range> ranges_;
};

}  // namespace kibitz::server
