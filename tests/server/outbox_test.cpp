// The transport's one outgoing-queue policy (outbox.h), on the WebSocket
// and the NDJSON stream alike: updates coalesce per search while finals and
// kept lines stay; one write at a time.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/http/beast.h"
#include "server/http/ndjson_stream.h"
#include "server/http/outbox.h"
#include "server/http/router.h"
#include "server/http/static_files.h"

namespace kibitz::server {
namespace {

Outbox::Text text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

TEST(Outbox, UpdatesOfOneSearchCoalesceFinalsStay) {
  Outbox box;
  box.push("a", 1, Outbox::Kind::update, text("a1"));
  ASSERT_EQ(*box.start_write(), "a1");  // in flight: never replaced
  for (int i = 2; i <= 50; ++i)
    box.push("a", 1, Outbox::Kind::update, text("a" + std::to_string(i)));
  box.push("b", 2, Outbox::Kind::update, text("b1"));
  box.push("a", 1, Outbox::Kind::kept, text("a-best"));
  box.push("b", 2, Outbox::Kind::update, text("b2"));
  EXPECT_EQ(box.size(), 4u);  // in flight, newest a, newest b, a's final
  EXPECT_EQ(box.coalesced(), 49u);
  box.finish_write();
  std::vector<std::string> order;
  while (auto t = box.start_write()) {
    order.push_back(*t);
    box.finish_write();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"a50", "b2", "a-best"}));
  EXPECT_EQ(box.bytes(), 0u);
}

TEST(Outbox, DropForgetsAReplacedSearchButNotOthers) {
  Outbox box;
  box.push("a", 1, Outbox::Kind::update, text("old"));
  box.push("b", 2, Outbox::Kind::kept, text("b-best"));
  box.push("a", 1, Outbox::Kind::kept, text("old-best"));
  box.drop("a", 1);
  box.push("a", 3, Outbox::Kind::update, text("new"));
  std::vector<std::string> order;
  while (auto t = box.start_write()) {
    order.push_back(*t);
    box.finish_write();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"b-best", "new"}));
}

TEST(Outbox, StartWriteAllSendsEveryQueuedMessageAsOne) {
  Outbox box;
  box.push("", 0, Outbox::Kind::kept, text("k1 "));
  box.push("", 0, Outbox::Kind::update, text("u1 "));
  box.push("", 0, Outbox::Kind::kept, text("k2 "));
  box.push("", 0, Outbox::Kind::update, text("u2 "));  // replaces u1, keeps its place
  auto all = box.start_write_all();
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, "k1 u2 k2 ");
  EXPECT_FALSE(box.start_write_all());                 // one write at a time
  box.push("", 0, Outbox::Kind::update, text("u3 "));  // in flight: not replaced
  box.finish_write();
  EXPECT_EQ(box.size(), 1u);
  EXPECT_EQ(*box.start_write_all(), "u3 ");
  box.finish_write();
  EXPECT_EQ(box.bytes(), 0u);
  EXPECT_FALSE(box.start_write_all());
}

TEST(NdjsonStream, OneWriteAtATimeTheNewestIterationAndTheFinal) {
  NdjsonStream s;
  EXPECT_FALSE(s.take());  // nothing queued
  EXPECT_FALSE(s.started());
  s.push_update("{\"depth\":1}\n");
  auto first = s.take();
  ASSERT_TRUE(first);
  EXPECT_EQ(*first->lines, "{\"depth\":1}\n");
  EXPECT_FALSE(first->last);
  EXPECT_TRUE(s.started());
  // While that is written, a slow client's iterations pile up: only the
  // newest is kept, as on the WebSocket.
  for (int d = 2; d <= 20; ++d) s.push_update("{\"depth\":" + std::to_string(d) + "}\n");
  s.push_final("{\"final\":1}\n");
  EXPECT_FALSE(s.take());  // one write at a time
  s.finish_write();
  const auto rest = s.take();
  ASSERT_TRUE(rest);
  EXPECT_EQ(*rest->lines, "{\"depth\":20}\n{\"final\":1}\n");
  EXPECT_TRUE(rest->last);
  EXPECT_TRUE(s.ended());
  s.finish_write();
  s.push_update("{\"late\":1}\n");  // after the final: nothing more
  EXPECT_FALSE(s.take());
}

TEST(NdjsonStream, KeptLinesAreNeverDropped) {
  NdjsonStream s;
  s.push_kept("0\n");
  ASSERT_TRUE(s.take());
  for (int i = 1; i <= 1000; ++i) s.push_kept(std::to_string(i) + "\n");
  s.push_final("end\n");
  s.finish_write();
  const auto rest = s.take();
  ASSERT_TRUE(rest);
  std::string want;
  for (int i = 1; i <= 1000; ++i) want += std::to_string(i) + "\n";
  EXPECT_EQ(*rest->lines, want + "end\n");
  EXPECT_TRUE(rest->last);
}

TEST(Router, TemplatesMethodsAndIds) {
  auto m = match_route("GET", "/v1/jobs/j42");
  EXPECT_EQ(m.route, Route::job);
  EXPECT_EQ(m.name, "/v1/jobs/{id}");
  EXPECT_EQ(m.id, "j42");
  EXPECT_TRUE(m.method_allowed);
  EXPECT_FALSE(match_route("PUT", "/v1/jobs/j42").method_allowed);
  EXPECT_EQ(match_route("GET", "/v1/jobs/a/b").route, Route::not_found);
  EXPECT_EQ(match_route("GET", "/v1/analyze").allow, "POST, OPTIONS");
  EXPECT_EQ(match_route("GET", "/v1/unknown").name, "other");
  EXPECT_EQ(match_route("GET", "/js/app.js").route, Route::static_file);
}

TEST(Router, TargetsAreParsedAndQueriesDecoded) {
  auto t = parse_target("/v1/ws?a=1&access_token=xyz&b");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path(), "/v1/ws");
  EXPECT_EQ(t->query_param("access_token"), "xyz");
  EXPECT_EQ(t->query_param("b"), "");
  EXPECT_EQ(t->query_param("c"), std::nullopt);
  // A token with characters that must be encoded arrives encoded.
  t = parse_target("/v1/ws?access_token=a%2Bb%2Fc%3D%3D%20d%26e&x=1");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->query_param("access_token"), "a+b/c== d&e");
  EXPECT_EQ(parse_target("/v1/ws?access%5Ftoken=a+b")->query_param("access_token"), "a b");
  // The path stays encoded: the static files decode it themselves.
  EXPECT_EQ(parse_target("/js/%2e%2e/x")->path(), "/js/%2e%2e/x");
  // Absolute-form, as a proxy sends it.
  t = parse_target("http://example.com:8080/v1/info?x=%41");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path(), "/v1/info");
  EXPECT_EQ(t->query_param("x"), "A");
  EXPECT_EQ(parse_target("http://example.com")->path(), "/");
  for (const char* bad : {"/v1/ws?access_token=%zz", "/a%2", "/a b", "/a<b>", "/a{b}", "/a\"b",
                          "v1/analyze", "mailto:x", "*", ""})
    EXPECT_FALSE(parse_target(bad)) << bad;
}

TEST(StaticFiles, TypesAndTraversal) {
  EXPECT_EQ(content_type_for("/a/b.JS"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type_for("/a.b/c"), "application/octet-stream");
  const std::string root = canonical_root("/tmp");
  ASSERT_FALSE(root.empty());
  for (const char* bad : {"/../etc/passwd", "/%2e%2e/etc/passwd", "/a/%2E%2E/b", "/.git/config",
                          "/a//b", "/%zz", "/a%00b", "/a\\b"})
    EXPECT_EQ(resolve_static(root, bad).status, StaticStatus::bad_path) << bad;
  EXPECT_EQ(resolve_static(root, "/no-such-file-here.js").status, StaticStatus::not_found);
  EXPECT_EQ(resolve_static("", "/index.html").status, StaticStatus::not_found);
}

TEST(Logging, AccessTokenNeverReachesTheLog) {
  EXPECT_EQ(loggable_target("/v1/ws?access_token=secret"), "/v1/ws?access_token=***");
  EXPECT_EQ(loggable_target("/v1/ws?x=1&access_token=secret&y=2"),
            "/v1/ws?x=1&access_token=***&y=2");
  EXPECT_EQ(loggable_target("/v1/ws?my_access_token=kept"), "/v1/ws?my_access_token=kept");
  EXPECT_EQ(loggable_target("/v1/analyze"), "/v1/analyze");
  EXPECT_EQ(loggable_target("/a\r\nb"), "/a??b");
  // Decoded names count too; a query that cannot be read is hidden whole.
  EXPECT_EQ(loggable_target("/v1/ws?access%5Ftoken=secret"), "/v1/ws?access%5Ftoken=***");
  EXPECT_EQ(loggable_target("/v1/ws?access_token=secret&access_token=again"),
            "/v1/ws?access_token=***");
  EXPECT_EQ(loggable_target("/v1/ws?access_token=se%zzcret"), "/v1/ws?***");
}

}  // namespace
}  // namespace kibitz::server
