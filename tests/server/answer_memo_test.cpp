// The I/O thread's memo of cached answers by request body
// (server/http/answer_memo.h).
#include "server/http/answer_memo.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

namespace kibitz::server {
namespace {

std::shared_ptr<const std::string> text(const char* s) {
  return std::make_shared<const std::string>(s);
}

TEST(AnswerMemo, FindsWhatItRemembersWhileTheCacheKeepsIt) {
  AnswerMemo memo;
  auto answer = text(R"({"bestmove":"e2e4"})");
  memo.remember(R"({"fen":"x"})", answer);
  EXPECT_EQ(memo.find(R"({"fen":"x"})"), answer);
  EXPECT_EQ(memo.find(R"({"fen": "x"})"), nullptr);  // other bytes
  answer.reset();                                    // the cache drops it
  EXPECT_EQ(memo.find(R"({"fen":"x"})"), nullptr);
  EXPECT_EQ(memo.size(), 0u);
}

TEST(AnswerMemo, StaysBounded) {
  AnswerMemo memo;
  std::vector<std::shared_ptr<const std::string>> answers;
  for (size_t i = 0; i < AnswerMemo::kMaxEntries * 3; ++i) {
    answers.push_back(text("a"));
    memo.remember("body " + std::to_string(i), answers.back());
    ASSERT_LE(memo.size(), AnswerMemo::kMaxEntries);
  }
  const std::string big(AnswerMemo::kMaxBodyBytes + 1, ' ');
  memo.remember(big, answers.front());
  EXPECT_EQ(memo.find(big), nullptr);
}

TEST(AnswerMemo, OneMemoPerThreadAndServer) {
  int server_a = 0, server_b = 0;
  auto answer = text("a");
  AnswerMemo::of_this_thread(&server_a).remember("body", answer);
  EXPECT_EQ(AnswerMemo::of_this_thread(&server_a).find("body"), answer);
  std::thread([&] {
    EXPECT_EQ(AnswerMemo::of_this_thread(&server_a).find("body"), nullptr);
  }).join();
  EXPECT_EQ(AnswerMemo::of_this_thread(&server_b).find("body"), nullptr);
  EXPECT_EQ(AnswerMemo::of_this_thread(&server_a).find("body"), nullptr);
}

}  // namespace
}  // namespace kibitz::server
