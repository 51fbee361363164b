#include "chess/eval.h"

#include <algorithm>
#include <array>

KIBITZ_NAMESPACE(chess) {

namespace {

// A middlegame and an endgame value, added up separately and blended at the
// end by the game phase.
struct Score {
  int mg = 0, eg = 0;
  constexpr Score() = default;
  constexpr Score(int m, int e) : mg(m), eg(e) {}
  constexpr Score& operator+=(Score o) { return mg += o.mg, eg += o.eg, *this; }
  constexpr Score& operator-=(Score o) { return mg -= o.mg, eg -= o.eg, *this; }
  friend constexpr Score operator+(Score a, Score b) { return a += b; }
  friend constexpr Score operator-(Score a, Score b) { return a -= b; }
  friend constexpr Score operator*(Score a, int k) { return {a.mg * k, a.eg * k}; }
};

constexpr Score kMaterial[kPieceTypes] = {{0, 0},     {85, 105},   {330, 300}, {345, 320},
                                          {470, 540}, {1000, 980}, {0, 0}};
constexpr int kPhaseWeight[kPieceTypes] = {0, 0, 1, 1, 2, 4, 0};
constexpr int kMaxPhase = 24;

// Piece-square tables from White's side, written as the board is seen: the
// first row is rank 8. Each table is {middlegame, endgame}.
using Table = std::array<int, 64>;
// clang-format off
constexpr Table kPawnMg = {
    0,   0,   0,   0,   0,   0,   0,   0,
   50,  60,  60,  70,  70,  60,  60,  50,
   10,  15,  25,  35,  35,  25,  15,  10,
    0,   5,  10,  25,  25,  10,   5,   0,
   -5,   0,   5,  20,  20,   5,   0,  -5,
   -5,  -3,   0,   5,   5,  -5,  -3,  -5,
   -5,   0,   0, -15, -15,   5,   5,  -5,
    0,   0,   0,   0,   0,   0,   0,   0};
constexpr Table kPawnEg = {
    0,   0,   0,   0,   0,   0,   0,   0,
   90,  85,  80,  75,  75,  80,  85,  90,
   50,  45,  40,  35,  35,  40,  45,  50,
   25,  20,  15,  10,  10,  15,  20,  25,
   10,   8,   5,   0,   0,   5,   8,  10,
    0,   0,  -3,  -5,  -5,  -3,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0};
constexpr Table kKnightMg = {
  -70, -35, -25, -20, -20, -25, -35, -70,
  -30, -15,   0,  10,  10,   0, -15, -30,
  -20,   5,  20,  25,  25,  20,   5, -20,
  -15,   5,  20,  28,  28,  20,   5, -15,
  -15,   0,  15,  20,  20,  15,   0, -15,
  -20,   0,  10,  12,  12,  10,   0, -20,
  -30, -15,   0,   5,   5,   0, -15, -30,
  -50, -25, -20, -15, -15, -20, -25, -50};
constexpr Table kKnightEg = {
  -50, -30, -20, -15, -15, -20, -30, -50,
  -30, -15,   0,   5,   5,   0, -15, -30,
  -20,   0,  10,  15,  15,  10,   0, -20,
  -15,   5,  15,  20,  20,  15,   5, -15,
  -15,   5,  15,  20,  20,  15,   5, -15,
  -20,   0,  10,  15,  15,  10,   0, -20,
  -30, -15,   0,   5,   5,   0, -15, -30,
  -50, -30, -20, -15, -15, -20, -30, -50};
constexpr Table kBishopMg = {
  -20, -10, -10, -10, -10, -10, -10, -20,
  -10,   0,   0,   0,   0,   0,   0, -10,
  -10,   0,   5,  10,  10,   5,   0, -10,
  -10,   5,   5,  12,  12,   5,   5, -10,
  -10,   0,  10,  12,  12,  10,   0, -10,
  -10,  10,  10,  10,  10,  10,  10, -10,
  -10,  10,   0,   5,   5,   0,  10, -10,
  -20, -10, -15, -10, -10, -15, -10, -20};
constexpr Table kBishopEg = {
  -15, -10,  -8,  -5,  -5,  -8, -10, -15,
  -10,  -3,   0,   2,   2,   0,  -3, -10,
   -8,   0,   5,   8,   8,   5,   0,  -8,
   -5,   2,   8,  12,  12,   8,   2,  -5,
   -5,   2,   8,  12,  12,   8,   2,  -5,
   -8,   0,   5,   8,   8,   5,   0,  -8,
  -10,  -3,   0,   2,   2,   0,  -3, -10,
  -15, -10,  -8,  -5,  -5,  -8, -10, -15};
constexpr Table kRookMg = {
    5,  10,  10,  12,  12,  10,  10,   5,
   15,  20,  20,  22,  22,  20,  20,  15,
   -5,   0,   0,   5,   5,   0,   0,  -5,
   -5,   0,   0,   5,   5,   0,   0,  -5,
   -5,   0,   0,   5,   5,   0,   0,  -5,
   -8,   0,   0,   5,   5,   0,   0,  -8,
  -10,  -3,   0,   5,   5,   0,  -3, -10,
   -5,   0,   3,  10,  10,   5,   0,  -5};
constexpr Table kRookEg = {
    8,   8,   8,   8,   8,   8,   8,   8,
   12,  12,  12,  12,  12,  12,  12,  12,
    5,   5,   5,   5,   5,   5,   5,   5,
    2,   2,   2,   2,   2,   2,   2,   2,
    0,   0,   0,   0,   0,   0,   0,   0,
   -2,  -2,  -2,  -2,  -2,  -2,  -2,  -2,
   -5,  -5,  -5,  -5,  -5,  -5,  -5,  -5,
   -5,  -3,   0,   0,   0,   0,  -3,  -5};
constexpr Table kQueenMg = {
  -20, -10, -10,  -5,  -5, -10, -10, -20,
  -10,  -5,   0,   0,   0,   0,  -5, -10,
  -10,   0,   5,   5,   5,   5,   0, -10,
   -5,   0,   5,   5,   5,   5,   0,  -5,
   -5,   0,   5,   5,   5,   5,   0,  -5,
  -10,   3,   5,   5,   5,   5,   0, -10,
  -10,   0,   3,   3,   3,   0,   0, -10,
  -20, -10, -10,  -3,  -5, -10, -10, -20};
constexpr Table kQueenEg = {
  -20, -10,  -5,   0,   0,  -5, -10, -20,
  -10,   0,   5,  10,  10,   5,   0, -10,
   -5,   5,  10,  15,  15,  10,   5,  -5,
    0,  10,  15,  20,  20,  15,  10,   0,
    0,  10,  15,  20,  20,  15,  10,   0,
   -5,   5,  10,  15,  15,  10,   5,  -5,
  -10,   0,   5,  10,  10,   5,   0, -10,
  -20, -10,  -5,   0,   0,  -5, -10, -20};
constexpr Table kKingMg = {
  -40, -50, -50, -60, -60, -50, -50, -40,
  -40, -50, -50, -60, -60, -50, -50, -40,
  -40, -50, -50, -60, -60, -50, -50, -40,
  -40, -50, -50, -60, -60, -50, -50, -40,
  -30, -40, -40, -50, -50, -40, -40, -30,
  -15, -25, -25, -30, -30, -25, -25, -15,
   10,  10,  -5, -15, -15,  -5,  10,  10,
   15,  30,  10, -10,   0,   5,  30,  15};
constexpr Table kKingEg = {
  -55, -35, -25, -20, -20, -25, -35, -55,
  -30, -10,   0,   5,   5,   0, -10, -30,
  -20,   5,  15,  20,  20,  15,   5, -20,
  -20,   5,  20,  30,  30,  20,   5, -20,
  -20,   5,  20,  30,  30,  20,   5, -20,
  -20,   0,  10,  20,  20,  10,   0, -20,
  -30, -15,   0,   5,   5,   0, -15, -30,
  -55, -35, -25, -20, -20, -25, -35, -55};
// clang-format on

// kPsq[piece][square]: material plus table, from that piece's owner's side.
struct PsqTables {
  Score v[kPieces][kSquares];
};

constexpr PsqTables make_psq() {
  const Table* mg[kPieceTypes] = {nullptr,  &kPawnMg,  &kKnightMg, &kBishopMg,
                                  &kRookMg, &kQueenMg, &kKingMg};
  const Table* eg[kPieceTypes] = {nullptr,  &kPawnEg,  &kKnightEg, &kBishopEg,
                                  &kRookEg, &kQueenEg, &kKingEg};
  PsqTables t{};
  for (int pt = Pawn; pt <= King; ++pt)
    for (int s = 0; s < 64; ++s) {
      // Row 0 of a table is rank 8: White's square s is at row 7 - rank.
      const int white_idx = (7 - s / 8) * 8 + s % 8, black_idx = (s / 8) * 8 + s % 8;
      t.v[make_piece(White, PieceType(pt))][s] =
          kMaterial[pt] + Score((*mg[pt])[white_idx], (*eg[pt])[white_idx]);
      t.v[make_piece(Black, PieceType(pt))][s] =
          kMaterial[pt] + Score((*mg[pt])[black_idx], (*eg[pt])[black_idx]);
    }
  return t;
}
constexpr PsqTables kPsq = make_psq();

// Mobility: per square reached, centred on a typical count.
constexpr Score kMobility[kPieceTypes] = {{0, 0}, {0, 0}, {4, 4}, {5, 5}, {2, 4}, {1, 2}, {0, 0}};
constexpr int kMobilityCentre[kPieceTypes] = {0, 0, 4, 6, 7, 13, 0};

constexpr Score kBishopPair{30, 50};
constexpr Score kRookOpenFile{25, 10};
constexpr Score kRookSemiOpenFile{12, 6};
constexpr Score kDoubledPawn{-10, -25};
constexpr Score kIsolatedPawn{-12, -15};
constexpr Score kConnectedPawn{6, 6};
constexpr Score kPassed[8] = {{0, 0},   {5, 10},  {8, 18},   {15, 30},
                              {30, 55}, {50, 95}, {80, 140}, {0, 0}};
constexpr int kTempo = 15;

// King safety: weight of each piece attacking the zone around the king,
// scaled by how many attack it.
constexpr int kAttackWeight[kPieceTypes] = {0, 0, 20, 20, 40, 80, 0};
constexpr int kAttackScale[8] = {0, 0, 50, 75, 88, 94, 97, 99};

constexpr int distance(Square a, Square b) {
  return std::max(std::abs(file_of(a) - file_of(b)), std::abs(rank_of(a) - rank_of(b)));
}

Bitboard forward_files(Color c, Square s) {
  // Squares in front of s on its file and the two next to it.
  Bitboard front =
      c == White ? ~Bitboard(0) << 8 << (8 * rank_of(s)) : ((Bitboard(1) << (8 * rank_of(s))) - 1);
  const Bitboard files =
      file_bb(file_of(s)) | shift<East>(file_bb(file_of(s))) | shift<West>(file_bb(file_of(s)));
  return front & files;
}

template <Color Us>
Score evaluate_side(const Position& pos, Bitboard their_pawn_attacks, Bitboard& attacked_by_us) {
  constexpr Color Them = ~Us;
  Score s;
  const Bitboard occupied = pos.pieces();
  const Bitboard own = pos.pieces(Us);
  const Bitboard our_pawns = pos.pieces(Us, Pawn), their_pawns = pos.pieces(Them, Pawn);
  const Square their_king = pos.king_square(Them);
  const Bitboard king_zone = king_attacks(their_king) | square_bb(their_king);
  const Bitboard mobility_area = ~own & ~their_pawn_attacks;
  int attackers = 0, attack_weight = 0;

  const auto pieces = [&]<PieceType Pt>() {
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
      attacked_by_us |= att;
      s += kMobility[Pt] * (popcount(att & mobility_area) - kMobilityCentre[Pt]);
      if (att & king_zone) ++attackers, attack_weight += kAttackWeight[Pt];
      if constexpr (Pt == Rook) {
        const Bitboard file = file_bb(file_of(sq));
        if (!(file & our_pawns)) s += (file & their_pawns) ? kRookSemiOpenFile : kRookOpenFile;
      }
    }
  };
  pieces.template operator()<Knight>();
  pieces.template operator()<Bishop>();
  pieces.template operator()<Rook>();
  pieces.template operator()<Queen>();

  if (popcount(pos.pieces(Us, Bishop)) >= 2) s += kBishopPair;

  // Attack on the enemy king, only while we have a queen.
  if (attackers >= 2 && pos.pieces(Us, Queen))
    s.mg += attack_weight * kAttackScale[std::min(attackers, 7)] / 100;

  // Pawn shelter in front of our own king, in the middlegame.
  const Square our_king = pos.king_square(Us);
  const int kf = std::clamp(file_of(our_king), 1, 6);
  for (int f = kf - 1; f <= kf + 1; ++f) {
    const Bitboard file_pawns = our_pawns & file_bb(f) & forward_files(Us, our_king);
    if (!file_pawns)
      s.mg -= (pos.pieces(Them, Pawn) & file_bb(f)) ? 15 : 25;
    else {
      const Square p = Square(Us == White ? lsb(file_pawns) : bits::msb(file_pawns));
      s.mg += std::max(0, 12 - 4 * (std::abs(rank_of(p) - rank_of(our_king)) - 1));
    }
  }

  // Pawn structure.
  for (Bitboard b = our_pawns; b;) {
    const Square sq = Square(pop_lsb(b));
    const int f = file_of(sq);
    const Bitboard adjacent = shift<East>(file_bb(f)) | shift<West>(file_bb(f));
    if (!(our_pawns & adjacent)) s += kIsolatedPawn;
    if (our_pawns & file_bb(f) & forward_files(Us, sq) & file_bb(f)) s += kDoubledPawn;
    if (our_pawns & adjacent & (rank_bb(rank_of(sq)) | rank_bb(rank_of(sq - pawn_push(Us)))))
      s += kConnectedPawn;
    if (!(their_pawns & forward_files(Us, sq))) {  // passed
      const int r = relative_rank(Us, sq);
      s += kPassed[r];
      const Square stop = sq + pawn_push(Us);
      if (r >= 3) {
        s.eg += (5 * distance(stop, their_king) - 2 * distance(stop, our_king)) * (r - 2);
        if (pos.empty(stop)) s.eg += 5 * r;
      }
    }
  }
  return s;
}

}  // namespace

int game_phase(const Position& pos) {
  int phase = 0;
  for (int pt = Knight; pt <= Queen; ++pt)
    phase += kPhaseWeight[pt] * popcount(pos.pieces(PieceType(pt)));
  return std::min(phase, kMaxPhase);
}

int evaluate(const Position& pos) {
  Score s;
  for (Bitboard b = pos.pieces(); b;) {
    const Square sq = Square(pop_lsb(b));
    const Piece p = pos.piece_on(sq);
    if (color_of(p) == White)
      s += kPsq.v[p][sq];
    else
      s -= kPsq.v[p][sq];
  }
  Bitboard white_attacks = pawn_attacks_bb<White>(pos.pieces(White, Pawn));
  Bitboard black_attacks = pawn_attacks_bb<Black>(pos.pieces(Black, Pawn));
  const Bitboard wpa = white_attacks, bpa = black_attacks;
  s += evaluate_side<White>(pos, bpa, white_attacks);
  s -= evaluate_side<Black>(pos, wpa, black_attacks);

  const int phase = game_phase(pos);
  int v = (s.mg * phase + s.eg * (kMaxPhase - phase)) / kMaxPhase;

  // Without pawns, an advantage of less than a rook is hard to convert.
  const Color strong = v > 0 ? White : Black;
  if (!pos.pieces(strong, Pawn) && std::abs(v) < 400) v /= 4;

  v = pos.side_to_move() == White ? v : -v;
  return v + kTempo;
}

}  // KIBITZ_NAMESPACE(chess)
