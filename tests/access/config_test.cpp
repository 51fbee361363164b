// The `access` config: what it accepts, and errors that name the bad key.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "server/access/access.h"

namespace kibitz::server {
namespace {

using nlohmann::json;

std::string error_of(const char* config) {
  auto ac = AccessControl::create(json::parse(config));
  return ac ? std::string("(accepted)") : ac.error();
}

TEST(AccessConfig, FullExampleIsAccepted) {
  ::setenv("KIBITZ_TEST_ACCESS_TOKEN", "from-the-environment", 1);
  auto ac = AccessControl::create(json::parse(R"({
    "keys": [
      {"id": "alice", "token": "s3cret-alice", "scopes": ["analyze", "ws", "info"],
       "rate": {"per_second": 5, "burst": 10}, "max_concurrent_searches": 2},
      {"id": "env", "token_env": "KIBITZ_TEST_ACCESS_TOKEN"}
    ],
    "anonymous_scopes": ["info"],
    "rate_limit": {"per_key": {"per_second": 10, "burst": 20}, "per_ip": {"per_second": 20, "burst": 40},
                   "max_tracked_ips": 5000},
    "max_concurrent_searches_per_key": 4,
    "max_concurrent_searches_per_ip": 2,
    "cors": {"allowed_origins": ["https://example.org", "http://localhost:5173"], "max_age_s": 600}
  })"));
  ASSERT_TRUE(ac) << ac.error();
  AccessRequest r;
  r.scope = "perft";
  r.authorization = "Bearer from-the-environment";
  r.ip = "127.0.0.1";
  const auto d = (*ac)->check(r);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.key_id, "env");
}

TEST(AccessConfig, ErrorsNameTheKey) {
  EXPECT_EQ(error_of(R"({"rate_limt": {}})"), "access.rate_limt: unknown setting");
  EXPECT_EQ(error_of(R"([])"), "access: must be an object");
  EXPECT_EQ(error_of(R"({"keys": {}})"), "access.keys: must be an array");
  EXPECT_EQ(error_of(R"({"keys": [{"token": "long-enough"}]})"),
            "access.keys[0].id: must be a non-empty string");
  EXPECT_EQ(error_of(R"({"keys": [{"id": "a"}]})"),
            "access.keys[0]: needs exactly one of \"token\" and \"token_env\"");
  EXPECT_EQ(error_of(R"({"keys": [{"id": "a", "token": "short"}]})"),
            "access.keys[0].token: must be at least 8 characters");
  EXPECT_EQ(error_of(R"({"keys": [{"id": "a", "token": "has a space"}]})"),
            "access.keys[0].token: only printable ASCII without spaces");
  EXPECT_EQ(
      error_of(R"({"keys": [{"id": "a", "token": "long-enough", "scopes": ["analyze", "prft"]}]})"),
      "access.keys[0].scopes[1]: unknown scope \"prft\"");
  EXPECT_EQ(
      error_of(
          R"({"keys": [{"id": "a", "token": "long-enough"}, {"id": "a", "token": "long-enough-2"}]})"),
      "access.keys[1].id: \"a\" appears twice");
  EXPECT_EQ(
      error_of(
          R"({"keys": [{"id": "a", "token": "long-enough"}, {"id": "b", "token": "long-enough"}]})"),
      "access.keys[1].token: the same token as another key");
  EXPECT_EQ(
      error_of(R"({"keys": [{"id": "a", "token_env": "KIBITZ_NO_SUCH_VARIABLE_SET"}]})"),
      "access.keys[0].token_env: environment variable KIBITZ_NO_SUCH_VARIABLE_SET is not set");
  EXPECT_EQ(error_of(R"({"keys": [{"id": "a", "token": "long-enough", "colour": 1}]})"),
            "access.keys[0].colour: unknown setting");
  EXPECT_EQ(error_of(R"({"rate_limit": {"per_ip": {"per_second": -1}}})"),
            "access.rate_limit.per_ip.per_second: must be between 0 and 1000000");
  EXPECT_EQ(error_of(R"({"rate_limit": {"per_ip": {"per_second": "5"}}})"),
            "access.rate_limit.per_ip.per_second: must be a number");
  EXPECT_EQ(error_of(R"({"rate_limit": {"max_tracked_ips": 0}})"),
            "access.rate_limit.max_tracked_ips: must be at least 1");
  EXPECT_EQ(error_of(R"({"max_concurrent_searches_per_key": 1.5})"),
            "access.max_concurrent_searches_per_key: must be an integer between 0 and 1000000");
  EXPECT_EQ(error_of(R"({"cors": {"allowed_origins": ["https://example.org/"]}})"),
            "access.cors.allowed_origins[0]: must look like https://host[:port]");
  EXPECT_EQ(error_of(R"({"cors": {"allowed_origins": "https://example.org"}})"),
            "access.cors.allowed_origins: must be an array");
  EXPECT_EQ(error_of(R"({"anonymous_scopes": [1]})"),
            "access.anonymous_scopes[0]: must be a string");
}

TEST(AccessConfig, EmptyKeyListLeavesTheServerOpen) {
  auto ac = AccessControl::create(json::parse(R"({"keys": []})"));
  ASSERT_TRUE(ac);
  EXPECT_FALSE((*ac)->enabled());
}

}  // namespace
}  // namespace kibitz::server
