// redis_url: credentials (percent-decoded), hosts and ports, refusals, and
// the redacted form every log line and error shows; the idempotency
// bindings of the memory and SQLite stores (the Redis one runs in
// tests/cluster/test_redis_auth.py and tests/server/test_idempotency.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "server/store/redis_conn.h"
#include "server/store/store.h"

namespace kibitz::server::store {
namespace {

TEST(RedisUrl, CredentialsArePercentDecoded) {
  auto a = parse_redis_url("redis://kibitz:p%40ss%3Aw%2Fo%25rd@redis:6380");
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->user, "kibitz");
  EXPECT_EQ(a->password, "p@ss:w/o%rd");
  EXPECT_EQ(a->host, "redis");
  EXPECT_EQ(a->port, 6380);

  a = parse_redis_url("redis://:secret@10.0.0.1");  // requirepass: no user
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->user, "");
  EXPECT_EQ(a->password, "secret");
  EXPECT_EQ(a->port, 6379);

  a = parse_redis_url("redis://kibitz@redis:6379/0");  // the password from elsewhere
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->user, "kibitz");
  EXPECT_EQ(a->password, "");

  a = parse_redis_url("redis://u:raw@pass/with:colon@h:1");  // the last "@" ends them
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->password, "raw@pass/with:colon");
  EXPECT_EQ(a->host, "h");
  EXPECT_EQ(a->port, 1);

  a = parse_redis_url("redis://[::1]:7000");
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 7000);
  EXPECT_EQ(a->password, "");
}

TEST(RedisUrl, RefusalsNeverShowThePassword) {
  for (const char* url : {"redis://:hunter2@h:0", "redis://:hunter2@h:x", "redis://u:hunter2@",
                          "redis://:hunter2@h/3", "redis://:hunter2%zz@h", "redis://:hunter2@[::1",
                          "http://:hunter2@h:1", "redis://:hunter2%4@h"}) {
    auto a = parse_redis_url(url);
    ASSERT_FALSE(a) << url;
    EXPECT_EQ(a.error().find("hunter2"), std::string::npos) << a.error();
  }
}

TEST(RedisUrl, Redacted) {
  EXPECT_EQ(redact_redis_url("redis://kibitz:s3cret@redis:6379"), "redis://kibitz:***@redis:6379");
  EXPECT_EQ(redact_redis_url("redis://:s3cret@redis:6379/0"), "redis://:***@redis:6379/0");
  EXPECT_EQ(redact_redis_url("redis://:a@b@redis"), "redis://:***@redis");
  EXPECT_EQ(redact_redis_url("redis://kibitz@redis"), "redis://kibitz@redis");
  EXPECT_EQ(redact_redis_url("redis://redis:6379"), "redis://redis:6379");
  EXPECT_EQ(redact_redis_url("rediss://:s3cret@h"), "rediss://:***@h");
  EXPECT_EQ(redact_redis_url(":s3cret@h:1"), "***");
  EXPECT_EQ(redact_redis_url("h:6379"), "h:6379");
}

void binds_once(Store& st) {
  const IdempotencyBinding first{"id-1", "fp-1"};
  auto r = st.bind_idempotency_key("127.0.0.1", "k", first, 60'000);
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->has_value());  // new
  r = st.bind_idempotency_key("127.0.0.1", "k", {"id-2", "fp-2"}, 60'000);
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(r->has_value());  // kept: the first, unchanged
  EXPECT_EQ((*r)->job_id, "id-1");
  EXPECT_EQ((*r)->fingerprint, "fp-1");
  // Another owner, or an owner and key that spell the same text, are others.
  for (auto [owner, key] :
       {std::pair{"127.0.0.2", "k"}, std::pair{"127.0.0.1k", ""}, std::pair{"127.0.0.", "1k"}}) {
    r = st.bind_idempotency_key(owner, key, {"id-3", "fp-3"}, 60'000);
    ASSERT_TRUE(r) << r.error();
    EXPECT_FALSE(r->has_value()) << owner << " " << key;
  }
  // An expired binding is gone.
  r = st.bind_idempotency_key("o", "short", {"id-4", "fp-4"}, 1);
  ASSERT_TRUE(r && !r->has_value());
  ::usleep(20'000);
  r = st.bind_idempotency_key("o", "short", {"id-5", "fp-5"}, 60'000);
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->has_value());
}

TEST(Idempotency, MemoryStoreBindsOnce) {
  auto st = make_memory_store(1);
  binds_once(*st);
}

TEST(Idempotency, SqliteStoreBindsOnceAndKeepsItAcrossReopening) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "kibitz-idem-XXXXXX").string();
  const fs::path dir = ::mkdtemp(tmpl.data());
  Settings s;
  s.backend = "sqlite";
  s.path = (dir / "k.db").string();
  {
    auto st = open(s);
    ASSERT_TRUE(st) << st.error();
    binds_once(**st);
  }
  {
    auto st = open(s);
    ASSERT_TRUE(st) << st.error();
    auto r = (*st)->bind_idempotency_key("127.0.0.1", "k", {"id-9", "fp-9"}, 60'000);
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->job_id, "id-1");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kibitz::server::store
