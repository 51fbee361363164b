#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "server/api/config.h"

namespace kibitz::server {
namespace {

// Sets an environment variable for one test.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~EnvVar() { unsetenv(name_); }

 private:
  const char* name_;
};

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/kibitz_config_test_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST(Config, EmbeddedDefaultsMatchTheStructDefaults) {
  // config/kibitz.json documents the defaults; it must say what the code does.
  auto c = load_config("");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(to_json(*c), to_json(Config{}));
  EXPECT_EQ(c->port, 8080);
  EXPECT_EQ(c->address, "127.0.0.1");
  EXPECT_EQ(c->max_body_bytes, size_t(1) << 20);
}

TEST(Config, EnvironmentOverridesTheDefaults) {
  EnvVar port("KIBITZ_PORT", "9001");
  EnvVar address("KIBITZ_ADDRESS", "0.0.0.0");
  EnvVar threads("KIBITZ_SEARCH_THREADS", "3");
  EnvVar access("KIBITZ_ACCESS", R"({"keys": []})");
  auto c = load_config("");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->port, 9001);
  EXPECT_EQ(c->address, "0.0.0.0");
  EXPECT_EQ(c->search_threads, 3);
  EXPECT_TRUE(c->access.contains("keys"));
}

TEST(Config, JobMaxAttemptsReachesTheStore) {
  auto c = load_config("");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->job_max_attempts, 2);
  EXPECT_EQ(c->store.job_max_attempts, 2);
  {
    EnvVar attempts("KIBITZ_JOB_MAX_ATTEMPTS", "5");
    c = load_config("");
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->job_max_attempts, 5);
    EXPECT_EQ(c->store.job_max_attempts, 5);  // the Redis claim script's limit
  }
  EnvVar negative("KIBITZ_JOB_MAX_ATTEMPTS", "-1");
  c = load_config("");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("job_max_attempts"), std::string::npos) << c.error();
}

TEST(Config, EnvironmentOverridesTheFile) {
  const std::string path = write_temp("// a comment\n{\"port\": 7000, \"queue_size\": 5}\n");
  EnvVar port("KIBITZ_PORT", "7001");
  auto c = load_config(path);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->port, 7001);
  EXPECT_EQ(c->queue_size, 5u);
  EXPECT_EQ(c->max_depth, 64);  // untouched keys keep the defaults
  std::remove(path.c_str());
}

TEST(Config, BadEnvironmentValueNamesTheVariable) {
  EnvVar port("KIBITZ_PORT", "eighty");
  auto c = load_config("");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("KIBITZ_PORT"), std::string::npos) << c.error();
}

TEST(Config, OutOfRangeValueNamesTheKey) {
  EnvVar port("KIBITZ_PORT", "70000");
  auto c = load_config("");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("'port'"), std::string::npos) << c.error();
}

TEST(Config, UnknownKeyInTheFileIsNamed) {
  const std::string path = write_temp("{\"prot\": 80}");
  auto c = load_config(path);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("'prot'"), std::string::npos) << c.error();
  std::remove(path.c_str());
}

TEST(Config, WrongTypeInTheFileIsNamed) {
  const std::string path = write_temp("{\"io_threads\": \"two\"}");
  auto c = load_config(path);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("'io_threads'"), std::string::npos) << c.error();
  std::remove(path.c_str());
}

TEST(Config, NegativeSizeIsRefused) {
  const std::string path = write_temp("{\"max_body_bytes\": -1}");
  auto c = load_config(path);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("'max_body_bytes'"), std::string::npos) << c.error();
  std::remove(path.c_str());
}

TEST(Config, InvalidJsonAndMissingFileAreErrors) {
  const std::string path = write_temp("{\"port\": ");
  auto c = load_config(path);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find(path), std::string::npos) << c.error();
  std::remove(path.c_str());
  auto missing = load_config("/nonexistent/kibitz.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/kibitz.json"), std::string::npos);
}

TEST(Config, StoreKeysMergeOverTheDefaultsAndEnvironmentOverridesThem) {
  const std::string path = write_temp(R"({"store": {"path": "/tmp/elsewhere.db"}})");
  auto c = load_config(path);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->store.path, "/tmp/elsewhere.db");
  EXPECT_EQ(c->store.backend, "sqlite");  // kept from the defaults
  EXPECT_EQ(c->store.library_mib, 256u);
  {
    EnvVar p("KIBITZ_STORE_PATH", "/var/lib/kibitz/k.db");
    EnvVar b("KIBITZ_STORE_BACKEND", "memory");
    EnvVar m("KIBITZ_STORE_LIBRARY_MIB", "7");
    auto e = load_config(path);
    ASSERT_TRUE(e) << e.error();
    EXPECT_EQ(e->store.path, "/var/lib/kibitz/k.db");
    EXPECT_EQ(e->store.backend, "memory");
    EXPECT_EQ(e->store.library_mib, 7u);
  }
  // The store's threads, their queue and its timeout: defaults, then the
  // environment.
  EXPECT_EQ(c->store.timeout_ms, 500);
  EXPECT_EQ(c->store.threads, 2);
  EXPECT_EQ(c->store.queue_size, 64);
  {
    EnvVar t("KIBITZ_STORE_TIMEOUT_MS", "250");
    EnvVar n("KIBITZ_STORE_THREADS", "4");
    EnvVar q("KIBITZ_STORE_QUEUE_SIZE", "8");
    auto e = load_config(path);
    ASSERT_TRUE(e) << e.error();
    EXPECT_EQ(e->store.timeout_ms, 250);
    EXPECT_EQ(e->store.threads, 4);
    EXPECT_EQ(e->store.queue_size, 8);
  }
  std::remove(path.c_str());
}

TEST(Config, BadStoreSettingsAreNamed) {
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {R"({"store": {"backend": "etcd"}})", "store.backend"},
           {R"({"store": {"backend": "redis", "redis_url": "http://x:1"}})", "store.redis_url"},
           {R"({"store": {"claim_idle_ms": 5}})", "store.claim_idle_ms"},
           {R"({"store": {"timeout_ms": 0}})", "store.timeout_ms"},
           {R"({"store": {"timeout_ms": 60001}})", "store.timeout_ms"},
           {R"({"store": {"threads": 0}})", "store.threads"},
           {R"({"store": {"threads": 65}})", "store.threads"},
           {R"({"store": {"queue_size": 0}})", "store.queue_size"},
           {R"({"store": {"queue_size": "many"}})", "store.queue_size"},
           {R"({"store": {"path": ""}})", "store.path"},
           {R"({"store": {"library_mib": 0}})", "store.library_mib"},
           {R"({"store": {"library_min_depth": "deep"}})", "store.library_min_depth"},
           {R"({"store": {"paht": "x"}})", "store.paht"},
           {R"({"store": 3})", "store"}}) {
    const std::string path = write_temp(text);
    auto c = load_config(path);
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().find(expect), std::string::npos) << c.error();
    std::remove(path.c_str());
  }
  EnvVar m("KIBITZ_STORE_LIBRARY_MIB", "lots");
  auto c = load_config("");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("KIBITZ_STORE_LIBRARY_MIB"), std::string::npos) << c.error();
}

TEST(Config, LogLevelIsChecked) {
  EnvVar level("KIBITZ_LOG_LEVEL", "loud");
  auto c = load_config("");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("log_level"), std::string::npos) << c.error();
}

}  // namespace
}  // namespace kibitz::server

namespace kibitz::server {
namespace {

// The Redis password: from KIBITZ_REDIS_PASSWORD, over the URL's; never in
// the settings as shown (to_json) nor in an error.
TEST(Config, RedisPasswordIsTakenAndNeverShown) {
  {
    EnvVar url("KIBITZ_STORE_REDIS_URL", "redis://kibitz:in-url-S3cret@redis:6379");
    EnvVar backend("KIBITZ_STORE_BACKEND", "redis");
    auto c = load_config("");
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->store.redis_password, "");  // the URL's, read when connecting
    const std::string shown = to_json(*c).dump();
    EXPECT_EQ(shown.find("in-url-S3cret"), std::string::npos) << shown;
    EXPECT_NE(shown.find("redis://kibitz:***@redis:6379"), std::string::npos) << shown;
    EnvVar pw("KIBITZ_REDIS_PASSWORD", "from-env-S3cret");
    c = load_config("");
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->store.redis_password, "from-env-S3cret");
    EXPECT_EQ(to_json(*c).dump().find("from-env-S3cret"), std::string::npos);
  }
  EnvVar bad("KIBITZ_STORE_REDIS_URL", "rediss://:tls-S3cret@redis:6379");
  EnvVar backend("KIBITZ_STORE_BACKEND", "redis");
  auto c = load_config("");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().find("tls-S3cret"), std::string::npos) << c.error();
  EXPECT_NE(c.error().find("store.redis_url"), std::string::npos) << c.error();
}

}  // namespace
}  // namespace kibitz::server
