#include "record/record.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace kibitz::record {

namespace {

bool is_result(std::string_view t) {
  // Draughts PDN also writes 2-0, 0-2 and 1-1. ("0-0" is castling.)
  return t == "1-0" || t == "0-1" || t == "1/2-1/2" || t == "*" || t == "2-0" || t == "0-2" ||
         t == "1-1";
}

bool is_symbol_char(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && c != '{' && c != '}' && c != '(' &&
         c != ')' && c != '[' && c != ']' && c != ';' && c != '$' && c != '"';
}

class Reader {
 public:
  Reader(std::string_view text, const ReadOptions& o) : s_(text), o_(o) {}

  Expected<std::vector<Game>, ParseError> run() {
    if (s_.size() > o_.max_text)
      return fail("", "the text is larger than " + std::to_string(o_.max_text) + " bytes");
    std::vector<Game> games;
    for (;;) {
      skip_space();
      if (at_end()) break;
      if (games.size() >= o_.max_games)
        return fail("", "more than " + std::to_string(o_.max_games) + " games");
      game_ = int(games.size()) + 1;
      ply_ = 0;
      Game g;
      if (auto err = read_tags(g)) return Unexpected(*err);
      if (auto err = read_movetext(&g.main, g.result, 0)) return Unexpected(*err);
      // Nothing but white space and empty comments is no game, whether the
      // comments are kept (a full read) or dropped (a compact one).
      const bool blank = std::all_of(g.main.comments.begin(), g.main.comments.end(),
                                     [](const std::string& c) { return c.empty(); });
      if (g.tags.empty() && g.main.moves.empty() && blank && g.result.empty()) break;
      if (o_.compact) shrink(g);
      games.push_back(std::move(g));
    }
    if (games.empty()) return fail("", "no game found");
    if (o_.compact) games.shrink_to_fit();
    return games;
  }

 private:
  // No spare capacity left: what a compact game holds is what it uses.
  static void shrink(std::string& s) { s.shrink_to_fit(); }
  static void shrink(std::vector<std::string>& v) {
    for (auto& s : v) s.shrink_to_fit();
    v.shrink_to_fit();
  }
  static void shrink(Variation& v) {
    shrink(v.comments);
    for (Node& n : v.moves) {
      n.move.shrink_to_fit();
      n.nags.shrink_to_fit();
      shrink(n.comments);
      for (Variation& alt : n.variations) shrink(alt);
      n.variations.shrink_to_fit();
    }
    v.moves.shrink_to_fit();
  }
  static void shrink(Game& g) {
    for (Tag& t : g.tags) {
      t.name.shrink_to_fit();
      t.value.shrink_to_fit();
    }
    g.tags.shrink_to_fit();
    shrink(g.main);
    g.result.shrink_to_fit();
  }

  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }

  void skip_space() {
    while (!at_end()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
        // An escape line: '%' in the first column, ignored to its end.
        if (peek() == '%') skip_to_eol();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '%' && (i_ == 0 || s_[i_ - 1] == '\n')) {
        skip_to_eol();
      } else {
        break;
      }
    }
  }
  void skip_to_eol() {
    while (!at_end() && s_[i_] != '\n') ++i_;
  }

  Unexpected<ParseError> fail(std::string token, std::string message) const {
    return Unexpected(ParseError{game_, ply_, line_, std::move(token), std::move(message)});
  }
  std::optional<ParseError> error(std::string token, std::string message) const {
    return ParseError{game_, ply_, line_, std::move(token), std::move(message)};
  }

  std::optional<ParseError> read_tags(Game& g) {
    for (;;) {
      skip_space();
      if (peek() != '[') return std::nullopt;
      ++i_;
      skip_space();
      const size_t start = i_;
      while (!at_end() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      std::string name(s_.substr(start, i_ - start));
      if (name.empty()) return error(std::string(s_.substr(start, 10)), "a tag needs a name");
      skip_space();
      if (peek() != '"') return error(name, "tag " + name + " needs a quoted value");
      ++i_;
      std::string value;
      for (;;) {
        if (at_end() || s_[i_] == '\n') return error(name, "tag " + name + ": unterminated value");
        const char c = s_[i_++];
        if (c == '"') break;
        if (c == '\\' && !at_end() && (s_[i_] == '"' || s_[i_] == '\\')) {
          value += s_[i_++];
        } else {
          value += c;
        }
      }
      skip_space();
      if (peek() != ']') return error(name, "tag " + name + ": expected ']'");
      ++i_;
      if (value.size() > 4096) return error(name, "tag " + name + ": value too long");
      g.set_tag(name, std::move(value));  // a repeated tag: the last value counts
      if (g.tags.size() > 256) return error("", "more than 256 tags");
    }
  }

  // Reads a comment into `to` (a move's or a variation's comments), or
  // past it when `to` is null (a variation that is not kept).
  std::optional<ParseError> read_comment(std::vector<std::string>* to) {
    std::string_view raw;
    if (peek() == '{') {
      ++i_;
      const size_t start = i_;
      while (!at_end() && s_[i_] != '}') {
        if (s_[i_] == '\n') ++line_;
        ++i_;
      }
      if (at_end()) return error("{", "unterminated comment");
      raw = s_.substr(start, i_ - start);
      ++i_;
    } else {  // ';' to the end of the line
      ++i_;
      const size_t start = i_;
      skip_to_eol();
      raw = s_.substr(start, i_ - start);
    }
    if (!to) return std::nullopt;
    // Comments are free text, and writers wrap them over lines: each run of
    // white space (line breaks included) reads as one space, ends trimmed.
    std::string folded;
    for (char ch : raw) {
      if (std::isspace(static_cast<unsigned char>(ch))) {
        if (!folded.empty() && folded.back() != ' ') folded += ' ';
      } else {
        folded += ch;
      }
    }
    if (!folded.empty() && folded.back() == ' ') folded.pop_back();
    if (!o_.compact) {
      to->push_back(std::move(folded));
    } else if (!folded.empty()) {  // one comment per place, empty ones dropped
      if (to->empty()) {
        to->push_back(std::move(folded));
      } else {
        to->back() += ' ';
        to->back() += folded;
      }
    }
    return std::nullopt;
  }

  // Reads moves into `v` up to the end of the variation (depth > 0) or the
  // game. `v` null: a variation that is not kept, read for its syntax only.
  std::optional<ParseError> read_movetext(Variation* v, std::string& result, size_t depth) {
    bool any_move = false;  // of this variation (kept or not)
    for (;;) {
      skip_space();
      if (at_end()) {
        if (depth > 0) return error("", "unterminated variation: expected ')'");
        return std::nullopt;
      }
      const char c = peek();
      if (c == '[') {
        if (depth > 0) return error("[", "a tag inside a variation");
        return std::nullopt;  // the next game starts (its result was missing)
      }
      if (c == '{' || c == ';') {
        std::vector<std::string>* to = nullptr;
        if (v) to = v->moves.empty() ? &v->comments : &v->moves.back().comments;
        if (auto err = read_comment(to)) return err;
        continue;
      }
      if (c == '(') {
        if (!any_move) return error("(", "a variation before any move");
        if (depth + 1 > o_.max_depth) return error("(", "variations nested too deep");
        ++i_;
        const int saved_ply = ply_;
        std::string ignored;
        if (v && o_.keep_variations) {
          Variation alt;
          if (auto err = read_movetext(&alt, ignored, depth + 1)) return err;
          v->moves.back().variations.push_back(std::move(alt));
        } else if (auto err = read_movetext(nullptr, ignored, depth + 1)) {
          return err;
        }
        ply_ = saved_ply;
        continue;
      }
      if (c == ')') {
        if (depth == 0) return error(")", "')' without a variation");
        ++i_;
        return std::nullopt;
      }
      if (c == '$') {
        ++i_;
        const size_t start = i_;
        while (!at_end() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        int nag = 0;
        const auto [p, ec] = std::from_chars(s_.data() + start, s_.data() + i_, nag);
        if (ec != std::errc() || p != s_.data() + i_ || nag > 255)
          return error("$" + std::string(s_.substr(start, i_ - start)),
                       "a NAG is $ and a number 0-255");
        if (!any_move) return error("$" + std::to_string(nag), "a NAG before any move");
        if (v) add_nag(v->moves.back(), nag);
        continue;
      }
      if (c == '"' || c == ']' || c == '}') return error(std::string(1, c), "unexpected character");
      // A symbol: a move number, a move (with suffixes), or a result.
      const size_t start = i_;
      while (!at_end() && is_symbol_char(s_[i_])) ++i_;
      std::string_view tok = s_.substr(start, i_ - start);
      // Move numbers: "12." or "12..." possibly glued to the move ("12.e4"),
      // or to each other.
      for (;;) {
        size_t digits = 0;
        while (digits < tok.size() && std::isdigit(static_cast<unsigned char>(tok[digits])))
          ++digits;
        if (digits == 0 || digits == tok.size() || tok[digits] != '.') break;
        while (digits < tok.size() && tok[digits] == '.') ++digits;
        tok.remove_prefix(digits);
      }
      if (tok.empty()) continue;
      if (is_result(tok)) {
        if (depth > 0) return error(std::string(tok), "a result inside a variation");
        result = std::string(tok);
        return std::nullopt;
      }
      // Suffix annotations glued to the move.
      size_t end = tok.size();
      while (end > 0 && (tok[end - 1] == '!' || tok[end - 1] == '?')) --end;
      const std::string_view suffix = tok.substr(end);
      const std::string_view move = tok.substr(0, end);
      if (move.empty()) {
        const int nag = nag_of_suffix(suffix);
        if (!nag || !any_move) return error(std::string(tok), "not a move");
        if (v) add_nag(v->moves.back(), nag);
        continue;
      }
      if (move.size() > 32) return error(std::string(move.substr(0, 32)), "a move token too long");
      if (is_result(move)) return error(std::string(tok), "a result cannot carry an annotation");
      // SAN and PDN moves start with a letter or a digit ('%' would even
      // start an escape line when a writer wraps there).
      if (!std::isalnum(static_cast<unsigned char>(move[0])))
        return error(std::string(tok), "not a move");
      if (depth == 0) {
        if (size_t(ply_) >= o_.max_plies)
          return error(std::string(move), "more than " + std::to_string(o_.max_plies) + " plies");
        ++ply_;
      } else {
        ++ply_;
      }
      const int nag = nag_of_suffix(suffix);
      if (!nag && !suffix.empty())
        return error(std::string(tok), "unknown annotation '" + std::string(suffix) + "'");
      any_move = true;
      if (!v) continue;
      Node n;
      n.move = std::string(move);
      n.line = line_;
      if (nag) n.nags.push_back(nag);
      v->moves.push_back(std::move(n));
    }
  }

  void add_nag(Node& n, int nag) const {
    // Compact: a NAG said twice of one move is kept once.
    if (o_.compact && std::find(n.nags.begin(), n.nags.end(), nag) != n.nags.end()) return;
    n.nags.push_back(nag);
  }

  std::string_view s_;
  const ReadOptions& o_;
  size_t i_ = 0;
  int line_ = 1;
  int game_ = 0;
  int ply_ = 0;
};

// Appends tokens, wrapping lines at 80 columns.
class Writer {
 public:
  void token(const std::string& t) {
    if (!line_.empty() && line_.size() + 1 + t.size() > 79) flush();
    if (!line_.empty()) line_ += ' ';
    line_ += t;
  }
  // A comment may contain spaces: wrap it as words, inside one pair of braces.
  void comment(const std::string& raw) {
    std::string c = raw;
    std::replace_if(
        c.begin(), c.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
    if (c.find('}') != std::string::npos) {
      // A brace would end a {comment} early: such text goes to the end of
      // the line as a ;comment.
      token(";" + c);
      flush();
      return;
    }
    std::string text = "{" + c + "}";
    if (text.size() <= 24) return token(text);  // short ones ({[%eval 0.34]}) stay whole
    size_t i = 0;
    while (i < text.size()) {
      size_t j = text.find(' ', i);
      if (j == std::string::npos) j = text.size();
      token(text.substr(i, j - i));
      i = j + 1;
    }
  }
  std::string finish() {
    flush();
    return out_;
  }

  void flush() {
    out_ += line_ + "\n";
    line_.clear();
  }

 private:
  std::string out_, line_;
};

void write_variation(Writer& w, const Variation& v, int move_number, bool white) {
  for (const auto& c : v.comments) w.comment(c);
  bool need_number = true;
  for (const Node& n : v.moves) {
    if (white)
      w.token(std::to_string(move_number) + ". " + n.move);
    else if (need_number)
      w.token(std::to_string(move_number) + "... " + n.move);
    else
      w.token(n.move);
    need_number = false;
    for (int nag : n.nags) w.token("$" + std::to_string(nag));
    for (const auto& c : n.comments) w.comment(c);
    for (const auto& alt : n.variations) {
      w.token("(");
      write_variation(w, alt, move_number, white);
      w.token(")");
      need_number = true;
    }
    if (!n.comments.empty()) need_number = true;
    if (!white) ++move_number;
    white = !white;
  }
}

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace

const std::string* Game::tag(std::string_view name) const {
  for (const auto& t : tags)
    if (t.name == name) return &t.value;
  return nullptr;
}

void Game::set_tag(std::string_view name, std::string value) {
  for (auto& t : tags)
    if (t.name == name) {
      t.value = std::move(value);
      return;
    }
  tags.push_back({std::string(name), std::move(value)});
}

int nag_of_suffix(std::string_view s) {
  if (s == "!") return 1;
  if (s == "?") return 2;
  if (s == "!!") return 3;
  if (s == "??") return 4;
  if (s == "!?") return 5;
  if (s == "?!") return 6;
  return 0;
}

Expected<std::vector<Game>, ParseError> read(std::string_view text, const ReadOptions& options) {
  return Reader(text, options).run();
}

std::string termination(const Game& game) {
  if (!game.result.empty()) return game.result;
  const std::string* tag = game.tag("Result");
  return tag && is_result(*tag) ? *tag : "*";
}

std::string write(const Game& game, int first_move_number, bool white_first) {
  std::string out;
  static constexpr std::string_view kRoster[] = {"Event", "Site",  "Date",  "Round",
                                                 "White", "Black", "Result"};
  const std::string result = termination(game);
  for (auto name : kRoster)
    if (const std::string* v = game.tag(name))
      out += "[" + std::string(name) + " \"" + escape(name == "Result" ? result : *v) + "\"]\n";
  for (const auto& t : game.tags)
    if (std::find(std::begin(kRoster), std::end(kRoster), t.name) == std::end(kRoster))
      out += "[" + t.name + " \"" + escape(t.value) + "\"]\n";
  if (!game.tags.empty()) out += "\n";
  Writer w;
  write_variation(w, game.main, std::max(1, first_move_number), white_first);
  w.token(result);
  out += w.finish();
  return out;
}

}  // namespace kibitz::record
