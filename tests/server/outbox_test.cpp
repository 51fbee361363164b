// The bounded queues of the transport: WebSocket updates coalesce per
// search while finals are kept; NDJSON lines are framed as chunks and a
// slow client keeps only the newest iterations.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/http/beast.h"
#include "server/http/ndjson_stream.h"
#include "server/http/router.h"
#include "server/http/static_files.h"
#include "server/http/ws_outbox.h"

namespace kibitz::server {
namespace {

WsOutbox::Text text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

TEST(WsOutbox, UpdatesOfOneSearchCoalesceFinalsStay) {
  WsOutbox box;
  box.push("a", 1, WsOutbox::Kind::update, text("a1"));
  ASSERT_EQ(*box.start_write(), "a1");  // in flight: never replaced
  for (int i = 2; i <= 50; ++i)
    box.push("a", 1, WsOutbox::Kind::update, text("a" + std::to_string(i)));
  box.push("b", 2, WsOutbox::Kind::update, text("b1"));
  box.push("a", 1, WsOutbox::Kind::final, text("a-best"));
  box.push("b", 2, WsOutbox::Kind::update, text("b2"));
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

TEST(WsOutbox, DropForgetsAReplacedSearchButNotOthers) {
  WsOutbox box;
  box.push("a", 1, WsOutbox::Kind::update, text("old"));
  box.push("b", 2, WsOutbox::Kind::final, text("b-best"));
  box.push("a", 1, WsOutbox::Kind::final, text("old-best"));
  box.drop("a", 1);
  box.push("a", 3, WsOutbox::Kind::update, text("new"));
  std::vector<std::string> order;
  while (auto t = box.start_write()) {
    order.push_back(*t);
    box.finish_write();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"b-best", "new"}));
}

TEST(NdjsonStream, ChunksLinesAndEndsWithTheFinal) {
  NdjsonStream s("H\r\n\r\n", true);
  s.push_update("{\"depth\":1}\n");
  EXPECT_EQ(s.take(), "H\r\n\r\nc\r\n{\"depth\":1}\n\r\n");
  // While that is written, a slow client's iterations pile up: only the
  // newest few are kept.
  for (int d = 2; d <= 20; ++d) s.push_update("{\"depth\":" + std::to_string(d) + "}\n");
  s.push_final("{\"final\":1}\n");
  EXPECT_EQ(s.take(), "");  // one write at a time
  s.finish_write();
  const std::string rest = s.take();
  EXPECT_EQ(rest.find("\"depth\":16"), std::string::npos);
  EXPECT_NE(rest.find("\"depth\":17"), std::string::npos);
  EXPECT_NE(rest.find("\"depth\":20"), std::string::npos);
  EXPECT_TRUE(rest.ends_with("{\"final\":1}\n\r\n0\r\n\r\n"));
  EXPECT_TRUE(s.ended());
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
  EXPECT_EQ(query_param("a=1&access_token=xyz&b", "access_token"), "xyz");
  EXPECT_EQ(target_path("/v1/ws?access_token=x"), "/v1/ws");
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
}

}  // namespace
}  // namespace kibitz::server
