#include "chess/eval.h"

#include <algorithm>
#include <array>
#include <memory>

#include "chess/eval_weights.h"
#include "chess/nn.h"

KIBITZ_NAMESPACE(chess) {

namespace {

constexpr const EvalWeights& W = kEvalWeights;
constexpr int kPhaseWeight[kPieceTypes] = {0, 0, 1, 1, 2, 4, 0};
constexpr int kMaxPhase = 24;

// King safety: the attackers' weights count for more the more of them there
// are (per cent, by number of attackers).
constexpr int kAttackScale[8] = {0, 0, 50, 75, 88, 94, 97, 99};

// King steps between two squares, by table (passed pawns ask it twice each).
constexpr auto kDistance = [] {
  std::array<std::array<uint8_t, kSquares>, kSquares> d{};
  for (int a = 0; a < kSquares; ++a)
    for (int b = 0; b < kSquares; ++b)
      d[a][b] = uint8_t(detail::distance(a, b));  // bitboard.h; constexpr, unlike std::abs
  return d;
}();
inline int distance(Square a, Square b) { return kDistance[a][b]; }

// kForwardFiles[c][s]: the squares in front of s (from c's side) on its file
// and the two next to it.
struct ForwardFiles {
  Bitboard v[kColors][kSquares];
};
constexpr ForwardFiles make_forward_files() {
  ForwardFiles t{};
  for (int s = 0; s < 64; ++s) {
    const int r = s / 8, f = s % 8;
    const Bitboard files = file_bb(f) | shift<East>(file_bb(f)) | shift<West>(file_bb(f));
    t.v[White][s] = files & (~Bitboard(0) << 8 << (8 * r));
    t.v[Black][s] = files & ((Bitboard(1) << (8 * r)) - 1);
  }
  return t;
}
constexpr ForwardFiles kForwardFiles = make_forward_files();

constexpr Bitboard forward_files(Color c, Square s) { return kForwardFiles.v[c][s]; }

// What the first pass over both sides learns for the second. Every entry the
// second pass reads is written by pieces_and_pawns() first; the struct is
// not zeroed, which cost more than the rest of its setup.
struct Attacks {
  Bitboard by[kColors][kPieceTypes];         // by piece type; [c][0]: every piece of c
  int zone_attackers[kColors][kPieceTypes];  // pieces of c attacking the enemy king's zone
};

// Adds term `field` `n` times for Us, and counts it in the trace.
template <Color Us, bool kTrace>
Score pieces_and_pawns(const Position& pos, Attacks& a, EvalTrace* trace) {
  constexpr Color Them = ~Us;
  Score s;
  const Bitboard occupied = pos.pieces();
  const Bitboard own = pos.pieces(Us);
  const Bitboard our_pawns = pos.pieces(Us, Pawn), their_pawns = pos.pieces(Them, Pawn);
  const Square their_king = pos.king_square(Them), our_king = pos.king_square(Us);
  const Bitboard king_zone = king_attacks(their_king) | square_bb(their_king);
  const Bitboard their_pawn_attacks = pawn_attacks_bb<Them>(their_pawns);
  const Bitboard our_pawn_attacks = pawn_attacks_bb<Us>(our_pawns);
  const Bitboard mobility_area = ~own & ~their_pawn_attacks;
  a.by[Us][Pawn] = our_pawn_attacks;
  a.by[Us][King] = king_attacks(our_king);

  const auto pieces = [&]<PieceType Pt>() {
    Bitboard all = 0;
    int zone = 0;
    for (Bitboard b = pos.pieces(Us, Pt); b;) {
      const Square sq = Square(pop_lsb(b));
      // Sliders see through their own queen and rooks/bishops of the same line.
      Bitboard att;
      if constexpr (Pt == Bishop)
        att = bishop_attacks(sq, occupied ^ pos.pieces(Us, Queen));
      else if constexpr (Pt == Rook)
        att = rook_attacks(sq, occupied ^ pos.pieces(Us, Queen, Rook));
      else
        att = attacks_bb<Pt>(sq, occupied);
      all |= att;
      const int mob = popcount(att & mobility_area);
      if constexpr (Pt == Knight) KIBITZ_EVAL_TERM(knight_mobility[mob], 1);
      if constexpr (Pt == Bishop) KIBITZ_EVAL_TERM(bishop_mobility[mob], 1);
      if constexpr (Pt == Rook) KIBITZ_EVAL_TERM(rook_mobility[mob], 1);
      if constexpr (Pt == Queen) KIBITZ_EVAL_TERM(queen_mobility[mob], 1);
      zone += bool(att & king_zone);
      if constexpr (Pt == Bishop)
        KIBITZ_EVAL_TERM(
            bishop_pawns,
            popcount(our_pawns & ((kDarkSquares & square_bb(sq)) ? kDarkSquares : ~kDarkSquares)));
      if constexpr (Pt == Knight || Pt == Bishop) {
        const int r = relative_rank(Us, sq);
        if (r >= 3 && r <= 5 && (our_pawn_attacks & square_bb(sq)) &&
            !(their_pawns & forward_files(Us, sq) & ~file_bb(file_of(sq)))) {
          if constexpr (Pt == Knight)
            KIBITZ_EVAL_TERM(knight_outpost, 1);
          else
            KIBITZ_EVAL_TERM(bishop_outpost, 1);
        }
      }
      if constexpr (Pt == Rook) {
        const Bitboard file = file_bb(file_of(sq));
        if (!(file & our_pawns)) {
          if (file & their_pawns)
            KIBITZ_EVAL_TERM(rook_semi_open_file, 1);
          else
            KIBITZ_EVAL_TERM(rook_open_file, 1);
        }
        if (relative_rank(Us, sq) == 6 &&
            (relative_rank(Us, their_king) == 7 || (their_pawns & relative_rank_bb(Us, 6))))
          KIBITZ_EVAL_TERM(rook_on_seventh, 1);
      }
    }
    a.by[Us][Pt] = all;
    a.zone_attackers[Us][Pt] = zone;
  };
  pieces.template operator()<Knight>();
  pieces.template operator()<Bishop>();
  pieces.template operator()<Rook>();
  pieces.template operator()<Queen>();
  a.by[Us][0] = a.by[Us][Pawn] | a.by[Us][Knight] | a.by[Us][Bishop] | a.by[Us][Rook] |
                a.by[Us][Queen] | a.by[Us][King];

  if (popcount(pos.pieces(Us, Bishop)) >= 2) KIBITZ_EVAL_TERM(bishop_pair, 1);
  {
    constexpr Direction Down = Us == White ? South : North;
    const Bitboard pawns = our_pawns | their_pawns;
    if (const int n = popcount(pos.pieces(Us, Knight, Bishop) & shift<Down>(pawns)))
      KIBITZ_EVAL_TERM(minor_behind_pawn, n);
  }
  return s;
}

// The terms of Us's king that depend on the pawns alone: the nearest pawn
// of ours, and the shelter and storm on the king's file and the two beside it.
template <Color Us, bool kTrace>
Score king_and_pawns(Bitboard our_pawns, Bitboard their_pawns, Square our_king, EvalTrace* trace) {
  Score s;
  if (our_pawns) {
    int nearest = 7;
    for (Bitboard b = our_pawns; b;)
      nearest = std::min(nearest, distance(our_king, Square(pop_lsb(b))));
    KIBITZ_EVAL_TERM(king_pawn_distance, nearest);
  }

  // Pawn shelter in front of our own king.
  const int kf = std::clamp(file_of(our_king), 1, 6);
  for (int f = kf - 1; f <= kf + 1; ++f) {
    const Bitboard file_pawns = our_pawns & file_bb(f) & forward_files(Us, our_king);
    if (!file_pawns) {
      if (their_pawns & file_bb(f))
        KIBITZ_EVAL_TERM(shelter_missing_semi, 1);
      else
        KIBITZ_EVAL_TERM(shelter_missing_open, 1);
    } else {
      const Square p = Square(Us == White ? lsb(file_pawns) : bits::msb(file_pawns));
      KIBITZ_EVAL_TERM(shelter_pawn[std::abs(rank_of(p) - rank_of(our_king))], 1);
    }
    if (const Bitboard storm = their_pawns & file_bb(f) & forward_files(Us, our_king)) {
      const Square p = Square(Us == White ? lsb(storm) : bits::msb(storm));
      KIBITZ_EVAL_TERM(storm_pawn[std::abs(rank_of(p) - rank_of(our_king))], 1);
    }
  }

  return s;
}

// The terms of Us's pawns that depend on pawns alone (isolated, doubled,
// connected, passed by rank); sets `passed` to Us's passed pawns.
template <Color Us, bool kTrace>
Score pawn_structure(Bitboard our_pawns, Bitboard their_pawns, Bitboard& passed, EvalTrace* trace) {
  constexpr Color Them = ~Us;
  Score s;
  const Bitboard their_attacks = pawn_attacks_bb<Them>(their_pawns);
  {
    // Space: central files, our second to fourth ranks, not hit by their pawns.
    constexpr Direction Down = Us == White ? South : North;
    constexpr Bitboard kCenterFiles = file_bb(2) | file_bb(3) | file_bb(4) | file_bb(5);
    constexpr Bitboard kOurSide =
        Us == White ? rank_bb(1) | rank_bb(2) | rank_bb(3) : rank_bb(6) | rank_bb(5) | rank_bb(4);
    const Bitboard safe = kCenterFiles & kOurSide & ~our_pawns & ~their_attacks;
    Bitboard behind = our_pawns;
    behind |= shift<Down>(behind);
    behind |= shift<Down>(shift<Down>(behind));
    if (const int n = popcount(safe) + popcount(safe & behind)) KIBITZ_EVAL_TERM(space, n);
  }
  for (Bitboard b = our_pawns; b;) {
    const Square sq = Square(pop_lsb(b));
    const int f = file_of(sq);
    const int r = relative_rank(Us, sq);
    const Bitboard adjacent = shift<East>(file_bb(f)) | shift<West>(file_bb(f));
    if (!(our_pawns & adjacent))
      KIBITZ_EVAL_TERM(isolated_pawn, 1);
    else if (!(our_pawns & adjacent & ~forward_files(Us, sq)) &&
             (their_attacks & square_bb(sq + pawn_push(Us))))
      KIBITZ_EVAL_TERM(backward_pawn, 1);
    if (our_pawns & file_bb(f) & forward_files(Us, sq)) KIBITZ_EVAL_TERM(doubled_pawn, 1);
    if (our_pawns & adjacent & (rank_bb(rank_of(sq)) | rank_bb(rank_of(sq - pawn_push(Us)))))
      KIBITZ_EVAL_TERM(connected_pawn[r], 1);
    if (!(their_pawns & forward_files(Us, sq))) {
      KIBITZ_EVAL_TERM(passed[r], 1);
      passed |= square_bb(sq);
    }
  }
  return s;
}

// The terms of Us's passed pawns that depend on the kings and the stop square.
template <Color Us, bool kTrace>
Score passed_pawns(const Position& pos, Bitboard passed, EvalTrace* trace) {
  Score s;
  const Square our_king = pos.king_square(Us), their_king = pos.king_square(~Us);
  for (Bitboard b = passed; b;) {
    const Square sq = Square(pop_lsb(b));
    const int r = relative_rank(Us, sq);
    const Square stop = sq + pawn_push(Us);
    KIBITZ_EVAL_TERM(passed_their_king[r], distance(stop, their_king));
    KIBITZ_EVAL_TERM(passed_our_king[r], distance(stop, our_king));
    if (pos.empty(stop)) KIBITZ_EVAL_TERM(passed_free[r], 1);
  }
  return s;
}

// Each thread's cache of pawn_structure() by the two sides' pawns. A zeroed
// entry is right as it stands: no pawns, no terms.
struct PawnEntry {
  Bitboard pawns[kColors];
  Bitboard passed[kColors];
  Score score;                     // White's terms minus Black's
  Score king_score[kColors];       // king_and_pawns() of each side, for its king on
  uint8_t king_plus_one[kColors];  // this square plus one; 0: not yet
};
constexpr int kPawnCacheBits = 13;

// The entry for pos's pawns, found (and its cache line asked for) before
// the rest of the evaluation, so the load overlaps with that work.
PawnEntry& pawn_slot(const Position& pos) {
  thread_local std::unique_ptr<PawnEntry[]> cache;
  if (!cache) cache = std::make_unique<PawnEntry[]>(size_t(1) << kPawnCacheBits);
  const Bitboard w = pos.pieces(White, Pawn), b = pos.pieces(Black, Pawn);
  PawnEntry& e =
      cache[((w * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL)) >> (64 - kPawnCacheBits)];
  __builtin_prefetch(&e);
  return e;
}

PawnEntry& pawn_entry(const Position& pos, PawnEntry& e) {
  const Bitboard w = pos.pieces(White, Pawn), b = pos.pieces(Black, Pawn);
  if (e.pawns[White] != w || e.pawns[Black] != b) {
    e.pawns[White] = w, e.pawns[Black] = b;
    e.passed[White] = e.passed[Black] = 0;
    e.king_plus_one[White] = e.king_plus_one[Black] = 0;
    e.score = pawn_structure<White, false>(w, b, e.passed[White], nullptr) -
              pawn_structure<Black, false>(b, w, e.passed[Black], nullptr);
  }
  return e;
}

// king_and_pawns() for Us from the entry of pos's pawns, computed there once
// per king square.
template <Color Us>
Score cached_king_and_pawns(const Position& pos, PawnEntry& e) {
  const Square king = pos.king_square(Us);
  if (e.king_plus_one[Us] != king + 1) {
    e.king_plus_one[Us] = uint8_t(king + 1);
    e.king_score[Us] = king_and_pawns<Us, false>(e.pawns[Us], e.pawns[~Us], king, nullptr);
  }
  return e.king_score[Us];
}

// Threats and the attack on the enemy king: needs both sides' attacks.
template <Color Us, bool kTrace>
Score threats_and_king(const Position& pos, const Attacks& a, EvalTrace* trace) {
  constexpr Color Them = ~Us;
  Score s;
  const Bitboard theirs = pos.pieces(Them);
  const Bitboard pawn_defended = a.by[Them][Pawn];
  // Their pieces each kind of attacker hits (minors count only when not
  // pawn-defended); most positions have none, and skip the count by type.
  const Bitboard minors = pos.pieces(Them, Knight, Bishop);
  const Bitboard majors = pos.pieces(Them, Rook, Queen);
  const Bitboard weak = (minors & ~pawn_defended) | majors;
  const Bitboard by_pawn = (minors | majors) & a.by[Us][Pawn];
  const Bitboard by_minor = weak & (a.by[Us][Knight] | a.by[Us][Bishop]);
  const Bitboard by_rook = weak & a.by[Us][Rook];
  if (by_pawn | by_minor | by_rook) {
    for (int pt = Knight; pt <= Queen; ++pt) {
      const Bitboard victims = pos.pieces(Them, PieceType(pt));
      if (const int n = popcount(victims & by_pawn)) KIBITZ_EVAL_TERM(threat_by_pawn[pt], n);
      if (const int n = popcount(victims & by_minor)) KIBITZ_EVAL_TERM(threat_by_minor[pt], n);
      if (const int n = popcount(victims & by_rook)) KIBITZ_EVAL_TERM(threat_by_rook[pt], n);
    }
  }
  if (const int n = popcount(theirs & ~pos.pieces(Them, Pawn, King) & a.by[Us][0] & ~a.by[Them][0]))
    KIBITZ_EVAL_TERM(hanging, n);
  {
    // Safe pushes (one or two squares) that would attack one of their pieces.
    constexpr Direction Up = Us == White ? North : South;
    const Bitboard empty = ~pos.pieces();
    Bitboard pushes = shift<Up>(pos.pieces(Us, Pawn)) & empty;
    pushes |= shift<Up>(pushes & relative_rank_bb(Us, 2)) & empty;
    pushes &= ~a.by[Them][Pawn] & (a.by[Us][0] | ~a.by[Them][0]);
    if (const int n = popcount(pawn_attacks_bb<Us>(pushes) & (theirs & ~pos.pieces(Them, Pawn))))
      KIBITZ_EVAL_TERM(threat_by_push, n);
  }

  // Attack on the enemy king, only while we have a queen.
  const int* zone = a.zone_attackers[Us];
  const int attackers = zone[Knight] + zone[Bishop] + zone[Rook] + zone[Queen];
  if (attackers >= 2 && pos.pieces(Us, Queen)) {
    const int scale = kAttackScale[std::min(attackers, 7)];
    Score units;
    for (int pt = Knight; pt <= Queen; ++pt) units += W.king_attack[pt] * zone[pt];
    s += units * scale / 100;
    if constexpr (kTrace)
      for (int pt = Knight; pt <= Queen; ++pt)
        trace->king_attack[pt] += float(Us == White ? 1 : -1) * float(zone[pt] * scale) / 100.f;
  }
  // Checks we can give on squares they do not guard.
  const Square king = pos.king_square(Them);
  const Bitboard occupied = pos.pieces();
  const Bitboard safe = ~pos.pieces(Us) & ~a.by[Them][0];
  const Bitboard bishop_checks = bishop_attacks(king, occupied) & safe;
  const Bitboard rook_checks = rook_attacks(king, occupied) & safe;
  if (const int n = popcount(knight_attacks(king) & safe & a.by[Us][Knight]))
    KIBITZ_EVAL_TERM(safe_check[Knight], n);
  if (const int n = popcount(bishop_checks & a.by[Us][Bishop]))
    KIBITZ_EVAL_TERM(safe_check[Bishop], n);
  if (const int n = popcount(rook_checks & a.by[Us][Rook])) KIBITZ_EVAL_TERM(safe_check[Rook], n);
  if (const int n = popcount((bishop_checks | rook_checks) & a.by[Us][Queen]))
    KIBITZ_EVAL_TERM(safe_check[Queen], n);
  return s;
}

// White's score before the phase blend, and with a trace the count of every term.
template <bool kTrace>
Score evaluate_score(const Position& pos, EvalTrace* trace) {
  PawnEntry* slot = nullptr;
  if constexpr (!kTrace) slot = &pawn_slot(pos);
  // Material and piece-square tables: kept up to date by the position; the
  // trace counts them piece by piece.
  Score s = pos.psq();
  if constexpr (kTrace)
    for (int pt = Pawn; pt <= King; ++pt) {
      for (Bitboard b = pos.pieces(White, PieceType(pt)); b;) {
        const int sq = pop_lsb(b);
        trace->material[pt] += 1.f, trace->psq[pt][sq] += 1.f;
      }
      for (Bitboard b = pos.pieces(Black, PieceType(pt)); b;) {
        const int sq = pop_lsb(b);
        trace->material[pt] -= 1.f, trace->psq[pt][sq ^ 56] -= 1.f;
      }
    }
  Attacks a;
  s += pieces_and_pawns<White, kTrace>(pos, a, trace);
  s -= pieces_and_pawns<Black, kTrace>(pos, a, trace);
  Bitboard passed[kColors] = {0, 0};
  if constexpr (kTrace) {
    const Bitboard w = pos.pieces(White, Pawn), b = pos.pieces(Black, Pawn);
    s += pawn_structure<White, true>(w, b, passed[White], trace);
    s -= pawn_structure<Black, true>(b, w, passed[Black], trace);
    s += king_and_pawns<White, true>(w, b, pos.king_square(White), trace);
    s -= king_and_pawns<Black, true>(b, w, pos.king_square(Black), trace);
  } else {
    PawnEntry& e = pawn_entry(pos, *slot);
    s += e.score;
    s += cached_king_and_pawns<White>(pos, e);
    s -= cached_king_and_pawns<Black>(pos, e);
    passed[White] = e.passed[White], passed[Black] = e.passed[Black];
  }
  s += passed_pawns<White, kTrace>(pos, passed[White], trace);
  s -= passed_pawns<Black, kTrace>(pos, passed[Black], trace);
  s += threats_and_king<White, kTrace>(pos, a, trace);
  s -= threats_and_king<Black, kTrace>(pos, a, trace);
  const bool white = pos.side_to_move() == White;
  s += white ? W.tempo : Score() - W.tempo;
  if constexpr (kTrace) trace->tempo += white ? 1.f : -1.f;
  return s;
}

// The blend and the scale of hard-to-win endings, White's side.
int finish(const Position& pos, Score s) {
  const int phase = game_phase(pos);
  int v = (s.mg * phase + s.eg * (kMaxPhase - phase)) / kMaxPhase;
  // Without pawns, an advantage of less than a rook is hard to convert.
  const Color strong = v > 0 ? White : Black;
  if (!pos.pieces(strong, Pawn) && std::abs(v) < 400) v /= 4;
  return v;
}

// The hand-written evaluation, without the correction, from the side to move.
int hand_written(const Position& pos) {
  const int v = finish(pos, evaluate_score<false>(pos, nullptr));
  return pos.side_to_move() == White ? v : -v;
}

}  // namespace

int game_phase(const Position& pos) {
  int phase = 0;
  for (int pt = Knight; pt <= Queen; ++pt)
    phase += kPhaseWeight[pt] * popcount(pos.pieces(PieceType(pt)));
  return std::min(phase, kMaxPhase);
}

int evaluate(const Position& pos) {
  // The network when one is selected: the one the position tracks (chosen
  // when its search started); for a position that tracks nothing, the one
  // selected now. A search position that tracks the correction's units
  // (no network selected when it started) asks nothing more.
  const nnue::Network* net = pos.nnue_network();
  if (!net && !pos.nn_accumulator()) net = nnue::current();
  if (net) {
    int v = nnue_evaluate(*net, pos);
    // A network file may give the hand-written evaluation (without its
    // correction) a share of the result, in sixteenths: the two err apart.
    if (const int share = net->classical_share)
      v = (v * (nnue::kShareUnits - share) + hand_written(pos) * share) / nnue::kShareUnits;
    return std::clamp(v, -kEvalLimit, kEvalLimit);
  }
  return std::clamp(hand_written(pos) + nn_correction(pos), -kEvalLimit, kEvalLimit);
}

EvalTraceResult evaluate_with_trace(const Position& pos) {
  EvalTraceResult r{};
  const Score s = evaluate_score<true>(pos, &r.trace);
  const int v = finish(pos, s);
  const int unscaled = (s.mg * game_phase(pos) + s.eg * (kMaxPhase - game_phase(pos))) / kMaxPhase;
  r.white_eval = v;
  r.phase = game_phase(pos);
  r.scale = unscaled != v ? 0.25 : 1.0;
  return r;
}

}  // KIBITZ_NAMESPACE(chess)
