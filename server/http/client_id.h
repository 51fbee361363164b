// Who a client is. One answer for the connection caps, the rate limits and
// the scheduler's fairness (Caller::owner), so that a client cannot be one
// client to one of them and many to another.
//   - an API key, when access control names one for the request: the owner
//     "key <id>";
//   - else its remote address: IPv4 as text ("203.0.113.7"), an IPv4-mapped
//     IPv6 address as its IPv4, any other IPv6 address by its /64
//     ("2001:db8:1:2::/64"), since one host is commonly given a whole /64.
// Connections are counted by address only (the key is known only once a
// request is read).
#pragma once

#include <string>
#include <string_view>

#include <boost/asio/ip/address.hpp>

namespace kibitz::server {

// The client's address as counted and limited: see above.
std::string client_address(const boost::asio::ip::address& address);
// The same from an address's text; text that is no address is kept as it is.
std::string client_address(std::string_view text);
// The owner of a client's work in the scheduler and the store: "key <id>"
// with a key, else client_address(). The format is stable: the scheduler's
// per-owner caps are keyed by it.
std::string client_owner(std::string_view client, std::string_view key_id);

}  // namespace kibitz::server
