// PGN/PDN record reader: any text either fails with a located error or reads
// to games that write back to text reading to the same games.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "record/record.h"

using namespace kibitz::record;

namespace {

bool same(const Variation& a, const Variation& b);
bool same(const Node& a, const Node& b) {
  if (a.move != b.move || a.nags != b.nags || a.comments != b.comments ||
      a.variations.size() != b.variations.size())
    return false;
  for (size_t i = 0; i < a.variations.size(); ++i)
    if (!same(a.variations[i], b.variations[i])) return false;
  return true;
}
bool same(const Variation& a, const Variation& b) {
  if (a.comments != b.comments || a.moves.size() != b.moves.size()) return false;
  for (size_t i = 0; i < a.moves.size(); ++i)
    if (!same(a.moves[i], b.moves[i])) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  ReadOptions o;
  o.max_games = 8;
  o.max_plies = 200;
  o.max_depth = 8;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto games = read(input, o);
  // As a review reads (variations skipped, comments joined): the same
  // verdict at the same place, and the same main line.
  ReadOptions review = o;
  review.keep_variations = false;
  review.compact = true;
  auto compact = read(input, review);
  if (bool(games) != bool(compact)) std::abort();
  if (!games) {
    if (games.error().message.empty() || games.error().game < 0 || games.error().ply < 0)
      std::abort();
    const ParseError &e = games.error(), &f = compact.error();
    if (e.message != f.message || e.game != f.game || e.ply != f.ply || e.line != f.line)
      std::abort();
    return 0;
  }
  if (games->size() != compact->size()) std::abort();
  for (size_t i = 0; i < games->size(); ++i) {
    const Variation &full = (*games)[i].main, &kept = (*compact)[i].main;
    if (full.moves.size() != kept.moves.size()) std::abort();
    for (size_t m = 0; m < full.moves.size(); ++m)
      if (full.moves[m].move != kept.moves[m].move || !kept.moves[m].variations.empty())
        std::abort();
  }
  for (const Game& g : *games) {
    const std::string text = write(g);
    auto again = read(text, o);
    if (!again || again->size() != 1) std::abort();
    const Game& h = (*again)[0];
    // The result written is the game's termination (its marker, else its
    // Result tag's result, else "*"), and a Result tag written repeats it.
    if (!same(g.main, h.main) || termination(g) != h.result) std::abort();
    if (const std::string* tag = h.tag("Result"); tag && *tag != h.result) std::abort();
    if (g.tags.size() != h.tags.size()) std::abort();
  }
  return 0;
}
