#include "chess/position.h"

#include <algorithm>
#include <bit>
#include <cstring>

KIBITZ_NAMESPACE(chess) {

Position::Position() { *this = *from_fen(kStartFen); }

Position& Position::operator=(const Position& other) {
  if (this == &other) return *this;
  std::memcpy(by_type_, other.by_type_, sizeof by_type_);
  std::memcpy(by_color_, other.by_color_, sizeof by_color_);
  std::memcpy(board_, other.board_, sizeof board_);
  psq_ = other.psq_;
  nn_on_ = other.nn_on_;
  if (nn_on_) nn_ = other.nn_;
  nnue_ = other.nnue_;
  if (nnue_) nnue_acc_ = other.nnue_acc_;
  side_ = other.side_;
  chess960_ = other.chess960_;
  shredder_fen_ = other.shredder_fen_;
  castling_ = other.castling_;
  game_ply_ = other.game_ply_;
  idx_ = other.idx_;
  std::copy(other.states_, other.states_ + other.idx_ + 1, states_);
  return *this;
}

bool operator==(const Position& a, const Position& b) {
  const StateInfo &sa = a.state(), &sb = b.state();
  return std::equal(a.board_, a.board_ + kSquares, b.board_) &&
         std::equal(a.by_type_, a.by_type_ + kPieceTypes, b.by_type_) &&
         std::equal(a.by_color_, a.by_color_ + kColors, b.by_color_) && a.side_ == b.side_ &&
         a.chess960_ == b.chess960_ && a.game_ply_ == b.game_ply_ && sa.key == sb.key &&
         sa.checkers == sb.checkers && sa.rule50 == sb.rule50 && sa.castling == sb.castling &&
         sa.ep_square == sb.ep_square;
}

void Position::put_piece(Piece pc, Square s) {
  const Bitboard b = square_bb(s);
  board_[s] = pc;
  by_type_[NoPieceType] |= b;
  by_type_[type_of(pc)] |= b;
  by_color_[color_of(pc)] |= b;
  psq_ += kPsq.v[pc][s];
  if (nn_on_) nn_add(nn_, pc, s);
  if (nnue_) nnue_add(*nnue_, nnue_acc_, pc, s);
}

void Position::remove_piece(Square s) {
  const Piece pc = board_[s];
  const Bitboard b = square_bb(s);
  by_type_[NoPieceType] ^= b;
  by_type_[type_of(pc)] ^= b;
  by_color_[color_of(pc)] ^= b;
  board_[s] = NoPiece;
  psq_ -= kPsq.v[pc][s];
  if (nn_on_) nn_remove(nn_, pc, s);
  if (nnue_) nnue_remove(*nnue_, nnue_acc_, pc, s);
}

void Position::move_piece(Square from, Square to) {
  const Piece pc = board_[from];
  const Bitboard b = square_bb(from) | square_bb(to);
  by_type_[NoPieceType] ^= b;
  by_type_[type_of(pc)] ^= b;
  by_color_[color_of(pc)] ^= b;
  board_[from] = NoPiece;
  board_[to] = pc;
  psq_ += kPsq.v[pc][to] - kPsq.v[pc][from];
  if (nn_on_) nn_move(nn_, pc, from, to);
  if (nnue_) nnue_move(*nnue_, nnue_acc_, pc, from, to);
}

void Position::nn_track() {
  nnue_ = nnue::current();
  nn_on_ = !nnue_;
  if (nnue_) {
    nnue_refresh(*nnue_, nnue_acc_, *this, White);
    nnue_refresh(*nnue_, nnue_acc_, *this, Black);
  } else {
    nn_refresh(nn_, *this);
  }
}

Bitboard Position::attackers_to(Square s, Bitboard occupied) const {
  return (pawn_attacks(Black, s) & pieces(White, Pawn)) |
         (pawn_attacks(White, s) & pieces(Black, Pawn)) | (knight_attacks(s) & pieces(Knight)) |
         (rook_attacks(s, occupied) & pieces(Rook, Queen)) |
         (bishop_attacks(s, occupied) & pieces(Bishop, Queen)) | (king_attacks(s) & pieces(King));
}

bool Position::attacked_by(Color c, Square s, Bitboard occupied) const {
  return (pawn_attacks(~c, s) & pieces(c, Pawn)) || (knight_attacks(s) & pieces(c, Knight)) ||
         (king_attacks(s) & pieces(c, King)) ||
         (rook_attacks(s, occupied) & pieces(c, Rook, Queen)) ||
         (bishop_attacks(s, occupied) & pieces(c, Bishop, Queen));
}

Bitboard Position::sole_blockers(Square ksq, Color sliders) const {
  const Bitboard occupied = pieces();
  Bitboard snipers = (rook_pseudo_attacks(ksq) & pieces(sliders, Rook, Queen)) |
                     (bishop_pseudo_attacks(ksq) & pieces(sliders, Bishop, Queen));
  Bitboard result = 0;
  while (snipers) {
    const Bitboard b = between_bb(ksq, Square(pop_lsb(snipers))) & occupied;
    if (b && !more_than_one(b)) result |= b;
  }
  return result;
}

bool Position::ep_capture_safe(Square from, Square ep) const {
  const Color us = color_of(board_[from]);
  const Square captured = make_square(file_of(ep), rank_of(from));
  const Square ksq = king_square(us);
  const Bitboard occupied = (pieces() ^ square_bb(from) ^ square_bb(captured)) | square_bb(ep);
  // Only sliders can be uncovered; a checking pawn is the one captured, and
  // knight checks are excluded by the caller's check mask.
  return !(rook_attacks(ksq, occupied) & pieces(~us, Rook, Queen)) &&
         !(bishop_attacks(ksq, occupied) & pieces(~us, Bishop, Queen));
}

void Position::set_ep_if_capturable(StateInfo& st, Square ep) const {
  // Called after the pawn moved and before side_ flips: the capturer is ~side_.
  const Color them = ~side_;
  Bitboard capturers = pawn_attacks(side_, ep) & pieces(them, Pawn);
  while (capturers) {
    const Square from = Square(pop_lsb(capturers));
    const Square ksq = king_square(them);
    const Bitboard occupied =
        (pieces() ^ square_bb(from) ^ square_bb(ep + pawn_push(side_))) | square_bb(ep);
    if (!(rook_attacks(ksq, occupied) & pieces(side_, Rook, Queen)) &&
        !(bishop_attacks(ksq, occupied) & pieces(side_, Bishop, Queen))) {
      st.ep_square = ep;
      st.key ^= kZobrist.ep_file[file_of(ep)];
      return;
    }
  }
}

void Position::compact_history() {
  std::copy(states_ + idx_ + 1 - kHistoryKept, states_ + idx_ + 1, states_);
  idx_ = kHistoryKept - 1;
}

bool Position::gives_check(Move m) const {
  const Color us = side_;
  const Square ksq = king_square(~us), from = m.from(), to = m.to();
  PieceType pt = type_of(board_[from]);
  Bitboard occupied = (pieces() ^ square_bb(from)) | square_bb(to);
  Bitboard straight = pieces(us, Rook, Queen), diagonal = pieces(us, Bishop, Queen);
  Square moved_to = to;
  switch (m.kind()) {
    case MoveKind::Promotion:
      pt = m.promotion_type();
      break;
    case MoveKind::EnPassant:
      occupied ^= square_bb(to - pawn_push(us));
      break;
    case MoveKind::Castling: {
      const bool king_side = to > from;
      const Square rfrom = castling_rook_square(castling_right(us, king_side));
      moved_to = relative_square(us, king_side ? F1 : D1);
      occupied = (pieces() ^ square_bb(from) ^ square_bb(rfrom)) |
                 square_bb(relative_square(us, king_side ? G1 : C1)) | square_bb(moved_to);
      straight ^= square_bb(rfrom);
      pt = Rook;
      break;
    }
    case MoveKind::Normal:
      break;
  }
  // The moving piece (the rook, for castling) stands on moved_to afterwards.
  straight &= ~square_bb(from);
  diagonal &= ~square_bb(from);
  if (pt == Rook || pt == Queen) straight |= square_bb(moved_to);
  if (pt == Bishop || pt == Queen) diagonal |= square_bb(moved_to);
  if ((rook_attacks(ksq, occupied) & straight) || (bishop_attacks(ksq, occupied) & diagonal))
    return true;
  if (pt == Knight) return knight_attacks(moved_to) & square_bb(ksq);
  if (pt == Pawn) return pawn_attacks(us, moved_to) & square_bb(ksq);
  return false;
}

CheckTest::CheckTest(const Position& pos) : pos_(pos) {
  const Color us = pos.side_to_move(), them = ~us;
  king_ = pos.king_square(them);
  const Bitboard occupied = pos.pieces();
  check_squares_[Pawn] = pawn_attacks(them, king_);
  check_squares_[Knight] = knight_attacks(king_);
  check_squares_[Bishop] = bishop_attacks(king_, occupied);
  check_squares_[Rook] = rook_attacks(king_, occupied);
  check_squares_[Queen] = check_squares_[Bishop] | check_squares_[Rook];
  discoverers_ = pos.sole_blockers(king_, us) & pos.pieces(us);
}

void Position::do_move(Move m) {
  if (idx_ + 1 == kHistory) [[unlikely]]
    compact_history();
  const StateInfo& prev = states_[idx_];
  StateInfo& st = states_[++idx_];
  Key key = prev.key ^ kZobrist.side;
  st.rule50 = int16_t(prev.rule50 + 1);
  st.plies_from_null = int16_t(prev.plies_from_null + 1);
  st.castling = prev.castling;
  st.ep_square = NoSquare;
  if (prev.ep_square != NoSquare) key ^= kZobrist.ep_file[file_of(prev.ep_square)];

  const Color us = side_, them = ~us;
  const Square from = m.from(), to = m.to();
  const Piece pc = board_[from];
  Piece captured = NoPiece;

  if (m.kind() == MoveKind::Castling) {
    const bool king_side = to > from;
    const Square rfrom = castling_rook_square(castling_right(us, king_side));
    const Square kto = relative_square(us, king_side ? G1 : C1);
    const Square rto = relative_square(us, king_side ? F1 : D1);
    const Piece rook = make_piece(us, Rook);
    if (chess960_) {  // king and rook may land on each other's squares
      remove_piece(from);
      remove_piece(rfrom);
      put_piece(pc, kto);
      put_piece(rook, rto);
    } else {
      move_piece(from, kto);
      move_piece(rfrom, rto);
    }
    key ^= kZobrist.piece_square[pc][from] ^ kZobrist.piece_square[pc][kto] ^
           kZobrist.piece_square[rook][rfrom] ^ kZobrist.piece_square[rook][rto];
  } else {
    const Square capsq = m.kind() == MoveKind::EnPassant ? to - pawn_push(us) : to;
    captured = board_[capsq];
    if (captured != NoPiece) {
      remove_piece(capsq);
      key ^= kZobrist.piece_square[captured][capsq];
      st.rule50 = 0;
    }
    move_piece(from, to);
    key ^= kZobrist.piece_square[pc][from] ^ kZobrist.piece_square[pc][to];
    if (type_of(pc) == Pawn) {
      st.rule50 = 0;
      if (m.kind() == MoveKind::Promotion) {
        const Piece promoted = make_piece(us, m.promotion_type());
        remove_piece(to);
        put_piece(promoted, to);
        key ^= kZobrist.piece_square[pc][to] ^ kZobrist.piece_square[promoted][to];
      } else if ((int(from) ^ int(to)) == 16) {
        st.key = key;
        set_ep_if_capturable(st, from + pawn_push(us));
        key = st.key;
      }
    }
  }
  if (const unsigned loss = (castling_.lost_on[from] | castling_.lost_on[to]) & st.castling) {
    for (unsigned b = loss; b; b &= b - 1) key ^= castling_.key[std::countr_zero(b)];
    st.castling = CastlingRights(st.castling & ~loss);
  }
  st.key = key;
  st.captured = captured;
  if (nnue_ && type_of(pc) == King) nnue_king_moved(*nnue_, nnue_acc_, *this, us);
  side_ = them;
  ++game_ply_;
  // Our pieces attacking their king (kings never give check).
  const Square ksq = king_square(them);
  const Bitboard occupied = pieces();
  st.checkers = (pawn_attacks(them, ksq) & pieces(us, Pawn)) |
                (knight_attacks(ksq) & pieces(us, Knight)) |
                (bishop_attacks(ksq, occupied) & pieces(us, Bishop, Queen)) |
                (rook_attacks(ksq, occupied) & pieces(us, Rook, Queen));
}

void Position::undo_move(Move m) {
  side_ = ~side_;
  --game_ply_;
  const Color us = side_;
  const Square from = m.from(), to = m.to();
  const StateInfo& st = states_[idx_];
  if (m.kind() == MoveKind::Castling) {
    const bool king_side = to > from;
    const Square rfrom = castling_rook_square(castling_right(us, king_side));
    const Square kto = relative_square(us, king_side ? G1 : C1);
    const Square rto = relative_square(us, king_side ? F1 : D1);
    if (chess960_) {
      const Piece king = board_[kto], rook = board_[rto];
      remove_piece(kto);
      remove_piece(rto);
      put_piece(king, from);
      put_piece(rook, rfrom);
    } else {
      move_piece(kto, from);
      move_piece(rto, rfrom);
    }
  } else {
    if (m.kind() == MoveKind::Promotion) {
      remove_piece(to);
      put_piece(make_piece(us, Pawn), to);
    }
    move_piece(to, from);
    if (st.captured != NoPiece) {
      const Square capsq = m.kind() == MoveKind::EnPassant ? to - pawn_push(us) : to;
      put_piece(st.captured, capsq);
    }
  }
  if (nnue_ && type_of(board_[from]) == King) nnue_king_moved(*nnue_, nnue_acc_, *this, us);
  --idx_;
}

void Position::do_null_move() {
  if (idx_ + 1 == kHistory) [[unlikely]]
    compact_history();
  const StateInfo& prev = states_[idx_];
  StateInfo& st = states_[++idx_];
  st = prev;
  st.key ^= kZobrist.side;
  if (prev.ep_square != NoSquare) st.key ^= kZobrist.ep_file[file_of(prev.ep_square)];
  st.ep_square = NoSquare;
  st.rule50 = int16_t(prev.rule50 + 1);
  st.plies_from_null = 0;
  st.captured = NoPiece;
  st.checkers = 0;  // null moves are never made in check
  side_ = ~side_;
  ++game_ply_;
}

void Position::undo_null_move() {
  side_ = ~side_;
  --game_ply_;
  --idx_;
}

bool Position::is_repetition(int ply) const {
  const StateInfo& st = states_[idx_];
  const int end = std::min({int(st.rule50), int(st.plies_from_null), idx_});
  int seen = 0;
  for (int i = 4; i <= end; i += 2) {
    if (states_[idx_ - i].key == st.key) {
      if (i < ply || ++seen == 2) return true;
    }
  }
  return false;
}

bool Position::has_repeated() const {
  const int end = std::min({int(states_[idx_].rule50), int(states_[idx_].plies_from_null), idx_});
  for (int back = 0; back + 4 <= end; ++back) {
    const Key k = states_[idx_ - back].key;
    for (int i = back + 4; i <= end; i += 2)
      if (states_[idx_ - i].key == k) return true;
  }
  return false;
}

bool Position::has_insufficient_material() const {
  if (pieces(Pawn, Rook) | pieces(Queen)) return false;
  const Bitboard minors = pieces(Knight, Bishop);
  if (!more_than_one(minors)) return true;  // K v K, K+minor v K
  // Only bishops, all on squares of one colour: no mate is possible.
  if (pieces(Knight)) return false;
  const Bitboard b = pieces(Bishop);
  return !(b & kDarkSquares) || !(b & ~kDarkSquares);
}

Key Position::compute_key() const {
  Key k = side_ == Black ? kZobrist.side : 0;
  for (Bitboard b = pieces(); b;) {
    const Square s = Square(pop_lsb(b));
    k ^= kZobrist.piece_square[board_[s]][s];
  }
  for (unsigned b = castling_rights(); b; b &= b - 1) k ^= castling_.key[std::countr_zero(b)];
  if (chess960_) k ^= kZobrist.chess960;
  if (ep_square() != NoSquare) k ^= kZobrist.ep_file[file_of(ep_square())];
  return k;
}

Score Position::compute_psq() const {
  Score v;
  for (Bitboard b = pieces(); b;) {
    const Square s = Square(pop_lsb(b));
    v += kPsq.v[board_[s]][s];
  }
  return v;
}

}  // KIBITZ_NAMESPACE(chess)
