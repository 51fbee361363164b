#include "client_id.h"

#include <array>

namespace kibitz::server {

namespace ip = boost::asio::ip;

std::string client_address(const ip::address& address) {
  if (address.is_v4()) return address.to_v4().to_string();
  if (!address.is_v6()) return address.to_string();
  const ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, v6).to_string();
  // The first 64 bits; the scope id (a link-local zone) says which link,
  // not which host, and is dropped with the rest.
  ip::address_v6::bytes_type bytes = v6.to_bytes();
  for (size_t i = 8; i < bytes.size(); ++i) bytes[i] = 0;
  return ip::address_v6(bytes).to_string() + "/64";
}

std::string client_address(std::string_view text) {
  boost::system::error_code ec;
  const ip::address address = ip::make_address(text, ec);
  if (ec) return std::string(text);
  return client_address(address);
}

std::string client_owner(std::string_view client, std::string_view key_id) {
  if (key_id.empty()) return std::string(client);
  std::string owner = "key ";
  owner += key_id;
  return owner;
}

}  // namespace kibitz::server
