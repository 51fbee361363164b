// Who a client is (server/http/client_id.h) and the connection caps
// counted by it (connection_limits.h).
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <string>
#include <vector>

#include "server/http/client_id.h"
#include "server/http/connection_limits.h"

namespace kibitz::server {
namespace {

TEST(ClientId, Ipv4IsItsAddress) {
  EXPECT_EQ(client_address("203.0.113.7"), "203.0.113.7");
  EXPECT_EQ(client_address("127.0.0.2"), "127.0.0.2");
  EXPECT_NE(client_address("127.0.0.2"), client_address("127.0.0.3"));
}

TEST(ClientId, Ipv4MappedIpv6IsItsIpv4) {
  EXPECT_EQ(client_address("::ffff:203.0.113.7"), "203.0.113.7");
  EXPECT_EQ(client_address("::ffff:cb00:7107"), "203.0.113.7");
  // Not mapped: IPv4-compatible and NAT64 addresses are IPv6 clients.
  EXPECT_EQ(client_address("64:ff9b::cb00:7107"), "64:ff9b::/64");
}

TEST(ClientId, Ipv6IsItsSlash64) {
  EXPECT_EQ(client_address("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  EXPECT_EQ(client_address("2001:db8:1:2::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(client_address("2001:0DB8:0001:0002:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
  EXPECT_EQ(client_address("2001:db8::1"), "2001:db8::/64");
  EXPECT_EQ(client_address("::1"), "::/64");
  EXPECT_EQ(client_address("fe80::1%1"), "fe80::/64");  // the zone says which link, not who
  // The next /64 is another client.
  EXPECT_EQ(client_address("2001:db8:1:3::1"), "2001:db8:1:3::/64");
}

// Against an independent reading: inet_pton, the first 8 bytes kept,
// inet_ntop, for addresses spread over the space.
TEST(ClientId, Slash64AgreesWithInetPton) {
  const std::vector<std::string> addresses = {"2001:db8:85a3::8a2e:370:7334",
                                              "2a00:1450:4001:81c::200e",
                                              "fd12:3456:789a:1::1",
                                              "2001:db8:0:0:1::1",
                                              "ff02::1:ff00:1",
                                              "2001:db8:ffff:ffff:ffff::"};
  for (const auto& text : addresses) {
    unsigned char bytes[16];
    ASSERT_EQ(inet_pton(AF_INET6, text.c_str(), bytes), 1) << text;
    for (int i = 8; i < 16; ++i) bytes[i] = 0;
    char out[INET6_ADDRSTRLEN];
    ASSERT_NE(inet_ntop(AF_INET6, bytes, out, sizeof out), nullptr);
    EXPECT_EQ(client_address(text), std::string(out) + "/64") << text;
  }
}

TEST(ClientId, TextThatIsNoAddressIsKept) {
  EXPECT_EQ(client_address("?"), "?");
  EXPECT_EQ(client_address(""), "");
}

TEST(ClientId, OwnerIsTheKeyElseTheClient) {
  EXPECT_EQ(client_owner("203.0.113.7", ""), "203.0.113.7");
  EXPECT_EQ(client_owner("2001:db8:1:2::/64", ""), "2001:db8:1:2::/64");
  EXPECT_EQ(client_owner("203.0.113.7", "alice"), "key alice");
}

TEST(ConnectionLimits, PerClientThenOverall) {
  ConnectionLimits limits;
  limits.configure(5, 2);
  ConnectionLimits::Refusal why{};
  std::vector<ConnectionSlot> held;
  held.push_back(limits.admit("a", &why));
  held.push_back(limits.admit("a", &why));
  EXPECT_EQ(why, ConnectionLimits::Refusal::none);
  EXPECT_FALSE(limits.admit("a", &why).held());
  EXPECT_EQ(why, ConnectionLimits::Refusal::per_client);
  held.push_back(limits.admit("b", &why));
  held.push_back(limits.admit("b", &why));
  held.push_back(limits.admit("c", &why));
  EXPECT_EQ(limits.open(), 5u);
  EXPECT_FALSE(limits.admit("d", &why).held());
  EXPECT_EQ(why, ConnectionLimits::Refusal::overall);
  // At its own cap a client is told so even when the server is full.
  EXPECT_FALSE(limits.admit("a", &why).held());
  EXPECT_EQ(why, ConnectionLimits::Refusal::per_client);
  held.erase(held.begin());  // one of a's goes
  EXPECT_EQ(limits.open(), 4u);
  EXPECT_EQ(limits.open_of("a"), 1u);
  ConnectionSlot d = limits.admit("d", &why);
  EXPECT_TRUE(d.held());
  EXPECT_EQ(d.client(), "d");
}

TEST(ConnectionLimits, ASlotIsGivenBackExactlyOnce) {
  ConnectionLimits limits;
  limits.configure(10, 0);  // no cap per client
  ConnectionLimits::Refusal why{};
  {
    ConnectionSlot a = limits.admit("x", &why);
    ConnectionSlot b = std::move(a);  // moved: one connection still
    EXPECT_FALSE(a.held());
    EXPECT_EQ(limits.open(), 1u);
    ConnectionSlot c = limits.admit("x", &why);
    c = std::move(b);  // c's own is given back, b's taken over
    EXPECT_EQ(limits.open(), 1u);
    c.release();
    c.release();
    EXPECT_EQ(limits.open(), 0u);
  }
  EXPECT_EQ(limits.open(), 0u);
  EXPECT_EQ(limits.open_of("x"), 0u);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(limits.admit("x", &why).held());  // no per-client cap
}

TEST(ConnectionLimits, AClientsWebSocketsHaveTheirCapWithoutAnAddressCap) {
  ConnectionLimits limits;
  limits.configure(100, 0, 2);
  ConnectionSlot a = limits.admit_websocket("key k");
  ConnectionSlot b = limits.admit_websocket("key k");
  EXPECT_TRUE(a.held() && b.held());
  EXPECT_FALSE(limits.admit_websocket("key k").held());
  EXPECT_TRUE(limits.admit_websocket("key other").held());
  EXPECT_EQ(limits.open(), 0u);  // counted apart from the connections
  b.release();
  EXPECT_EQ(limits.websockets_of_key("key k"), 1u);
  ConnectionSlot c = std::move(a);  // moved: still one, given back once
  c.release();
  EXPECT_EQ(limits.websockets_of_key("key k"), 0u);
  EXPECT_NE(limits.render().find("kibitz_connections_refused_total{reason=\"per_key\"} 1"),
            std::string::npos);
}

TEST(ConnectionLimits, RefusalsUnderWayAreBounded) {
  ConnectionLimits limits;
  // One client: a few at once.
  for (size_t i = 0; i < ConnectionLimits::kMaxRefusingPerClient; ++i)
    EXPECT_TRUE(limits.begin_refusal("a"));
  EXPECT_FALSE(limits.begin_refusal("a"));
  limits.end_refusal("a");
  EXPECT_TRUE(limits.begin_refusal("a"));
  // All clients: kMaxRefusing.
  size_t taken = ConnectionLimits::kMaxRefusingPerClient;
  for (int c = 0; taken < ConnectionLimits::kMaxRefusing; ++c, ++taken)
    EXPECT_TRUE(limits.begin_refusal("c" + std::to_string(c)));
  EXPECT_FALSE(limits.begin_refusal("new"));
  limits.end_refusal("c0");
  EXPECT_TRUE(limits.begin_refusal("new"));
  EXPECT_NE(limits.render().find("kibitz_connections_refused_total{reason=\"closed\"} 2"),
            std::string::npos);
}

TEST(ConnectionLimits, TheDescriptorLimitLowersTheCap) {
  std::string note;
  // Far more than any descriptor limit allows.
  const size_t cap = connection_cap_for_fd_limit(size_t(1) << 40, &note);
  EXPECT_LT(cap, size_t(1) << 40);
  EXPECT_GE(cap, 1u);
  EXPECT_NE(note.find("lowered"), std::string::npos) << note;
  EXPECT_EQ(connection_cap_for_fd_limit(10, &note), 10u);
}

}  // namespace
}  // namespace kibitz::server
