// A chess position: bitboards by type and colour, a mailbox, and a stack of
// per-ply states so do_move/undo_move are incremental (key, rights, counters)
// and repetitions can be found. A Position is a self-contained value: copying
// one copies its history, and it never allocates.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chess/attacks.h"
#include "chess/nn.h"
#include "chess/nnue.h"
#include "chess/psq.h"
#include "chess/zobrist.h"
#include "common/expected.h"

KIBITZ_NAMESPACE(chess) {

// What changes from ply to ply. do_move copies the first group from the
// previous state and computes the rest.
struct StateInfo {
  Key key;
  Bitboard checkers;        // pieces giving check to the side to move
  int16_t rule50;           // plies since the last capture or pawn move
  int16_t plies_from_null;  // plies since the last null move (bounds repetition search)
  CastlingRights castling;
  Square ep_square;  // set only when an en-passant capture is legal
  Piece captured;    // the piece the move into this state captured
};

enum class FenError {
  unknown,
  field_count,  // not 4 or 6 space-separated fields
  bad_piece,    // a character that is not a piece letter or digit 1-8
  rank_length,  // a rank that does not describe exactly 8 squares
  rank_count,   // not 8 ranks
  king_count,   // not exactly one king per side
  pawn_on_back_rank,
  side_to_move,       // not 'w' or 'b'
  opponent_in_check,  // the side not to move is in check
  castling_rights,    // a right without king and rook on their squares, or a bad letter
  en_passant,         // malformed or impossible en-passant square
  counters,           // bad half-move clock or full-move number
  too_many_pieces,    // more than 16 pieces of one colour
  too_many_pawns,     // more than 8 pawns of one colour
  too_many_promoted,  // more pieces beyond the starting set than missing pawns allow
  chess960_castling,  // rights only Chess960 has, in a position read as standard chess
};

std::string_view to_string(FenError e);

struct FenParseError {
  FenError kind;
  std::string message;
};

class Position {
 public:
  static constexpr std::string_view kStartFen =
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
  // Plies of history kept: enough for the search depth plus the plies that can
  // still matter for repetitions (a position 150 plies back lies beyond the
  // 75-move rule). do_move drops the oldest states when it runs out.
  static constexpr int kHistory = 1024;
  static constexpr int kHistoryKept = 256;

  Position();  // the start position
  // Copies only the live part of the history.
  Position(const Position& other) { *this = other; }
  Position& operator=(const Position& other);

  // Parses FEN (4 or 6 fields). Every rule of a legal setup is checked.
  // Castling rights are read as X-FEN (KQkq: the outermost rook on that
  // side of the king; a file letter for another rook) or Shredder-FEN (file
  // letters only, HAha), for any king and rook placement (fen_castling.cpp).
  // `variant`: see Variant; standard refuses rights only Chess960 has.
  static Expected<Position, FenParseError> from_fen(std::string_view fen,
                                                    Variant variant = Variant::automatic);
  // FEN of the position; the en-passant square is written only when an
  // en-passant capture is legal. Castling rights are written in the form
  // they were read in: Shredder-FEN letters when the FEN had only file
  // letters, else X-FEN (KQkq for standard chess).
  std::string fen() const;
  // Chess960 rules: castling moves are written king takes rook (e1h1), and
  // the key differs from the standard position's.
  bool is_chess960() const { return chess960_; }
  // The rook square of a single right the position has.
  Square castling_rook_square(CastlingRights cr) const { return castling_.rook[right_index(cr)]; }
  // Squares that must be empty for that right's castling (all between king
  // and its destination and rook and its destination, but the two), and
  // the squares the king crosses or lands on, which must not be attacked.
  Bitboard castling_path(CastlingRights cr) const { return castling_.path[right_index(cr)]; }
  Bitboard castling_king_path(CastlingRights cr) const {
    return castling_.king_path[right_index(cr)];
  }

  // Accessors
  Bitboard pieces() const { return by_type_[NoPieceType]; }
  Bitboard pieces(Color c) const { return by_color_[c]; }
  Bitboard pieces(PieceType pt) const { return by_type_[pt]; }
  Bitboard pieces(PieceType a, PieceType b) const { return by_type_[a] | by_type_[b]; }
  Bitboard pieces(Color c, PieceType pt) const { return by_color_[c] & by_type_[pt]; }
  Bitboard pieces(Color c, PieceType a, PieceType b) const { return by_color_[c] & pieces(a, b); }
  Piece piece_on(Square s) const { return board_[s]; }
  bool empty(Square s) const { return board_[s] == NoPiece; }
  Square king_square(Color c) const { return Square(lsb(pieces(c, King))); }
  Color side_to_move() const { return side_; }

  const StateInfo& state() const { return states_[idx_]; }
  Key key() const { return state().key; }
  Bitboard checkers() const { return state().checkers; }
  bool in_check() const { return state().checkers != 0; }
  CastlingRights castling_rights() const { return state().castling; }
  bool can_castle(CastlingRights cr) const { return state().castling & cr; }
  Square ep_square() const { return state().ep_square; }
  int rule50() const { return state().rule50; }
  int game_ply() const { return game_ply_; }
  int fullmove_number() const { return 1 + game_ply_ / 2; }
  Piece captured_piece() const { return state().captured; }
  // Material plus piece-square values of all pieces, White's minus Black's,
  // kept up to date by every piece placed, removed or moved.
  Score psq() const { return psq_; }
  // The learned evaluation's accumulators, kept up to date by every piece
  // placed, removed or moved once nn_track() is called (the search does;
  // perft and the parsers do not pay for it): the network's (nnue.h) when
  // one is selected (nnue::current()), else the correction's (nn.h); null
  // until then.
  void nn_track();
  const NnAccumulator* nn_accumulator() const { return nn_on_ ? &nn_ : nullptr; }
  const NnueAccumulator* nnue_accumulator() const { return nnue_ ? &nnue_acc_ : nullptr; }
  const nnue::Network* nnue_network() const { return nnue_; }

  // Attacks
  Bitboard attackers_to(Square s, Bitboard occupied) const;
  Bitboard attackers_to(Square s) const { return attackers_to(s, pieces()); }
  bool attacked_by(Color c, Square s, Bitboard occupied) const;
  // Pieces of colour c that are pinned to c's king.
  Bitboard pinned(Color c) const { return sole_blockers(king_square(c), ~c) & pieces(c); }
  // Pieces of either colour that stand alone between ksq and a slider of
  // colour `sliders` aiming at it (pins, and for the slider's side, the
  // pieces whose leaving uncovers a check).
  Bitboard sole_blockers(Square ksq, Color sliders) const;
  // Whether the side to move may capture en passant with the pawn on `from`
  // without leaving its king attacked (the pawn pins that only this capture
  // exposes, e.g. along the fifth rank).
  bool ep_capture_safe(Square from, Square ep) const;

  // Moves
  Piece moved_piece(Move m) const { return board_[m.from()]; }
  bool is_capture(Move m) const {
    return (!empty(m.to()) && m.kind() != MoveKind::Castling) || m.kind() == MoveKind::EnPassant;
  }
  // Whether legal move m checks the opponent (directly or by uncovering a
  // slider), without making it.
  bool gives_check(Move m) const;
  // The key after m, close enough to fetch its table entry early: a plain
  // move or capture is exact; castling, en passant, promotion and lost
  // rights are not accounted for.
  Key key_after(Move m) const {
    const Piece pc = board_[m.from()], captured = board_[m.to()];
    Key k = key() ^ kZobrist.side ^ kZobrist.piece_square[pc][m.from()] ^
            kZobrist.piece_square[pc][m.to()];
    if (captured != NoPiece) k ^= kZobrist.piece_square[captured][m.to()];
    return k;
  }
  // m must be legal.
  void do_move(Move m);
  void undo_move(Move m);
  void do_null_move();
  void undo_null_move();

  // Draws by rule. `ply` is the distance to the root of a search: a
  // repetition inside the search tree counts as a draw at once; one that
  // reaches back before the root only when it is the third occurrence.
  bool is_repetition(int ply) const;
  bool is_threefold_repetition() const { return is_repetition(0); }
  // Whether some position since the last capture or pawn move occurred
  // before in that stretch (the tablebases' root ranking then plays wins
  // by distance: chess/syzygy.h).
  bool has_repeated() const;
  // 100 plies without capture or pawn move (a mate on that ply still wins:
  // see game_status()).
  bool fifty_move_rule() const { return state().rule50 >= 100; }
  bool has_insufficient_material() const;

  // The key computed from scratch (tests compare it with the incremental one).
  Key compute_key() const;
  // psq() summed from scratch (tests compare it with the incremental one).
  Score compute_psq() const;

  friend bool operator==(const Position& a, const Position& b);

 private:
  struct EmptyTag {};
  explicit Position(EmptyTag) {}

  void put_piece(Piece pc, Square s);
  void remove_piece(Square s);
  void move_piece(Square from, Square to);
  void compact_history();
  // Adds c's right to castle with the rook on rsq (the king on c's back rank).
  void add_castling_right(Color c, Square rsq);
  std::optional<FenParseError> parse_castling(std::string_view field, Variant variant);
  std::string castling_fen() const;
  // Sets the en-passant square after a double push to `ep` when the side to
  // move can take legally.
  void set_ep_if_capturable(StateInfo& st, Square ep) const;

  Bitboard by_type_[kPieceTypes]{};  // [0] = all pieces
  Bitboard by_color_[kColors]{};
  Piece board_[kSquares]{};
  Score psq_;
  bool nn_on_ = false;
  NnAccumulator nn_;
  const nnue::Network* nnue_ = nullptr;
  NnueAccumulator nnue_acc_;
  Color side_ = White;
  bool chess960_ = false;
  bool shredder_fen_ = false;  // castling rights were read as file letters only
  // What castling needs to know of the start position, by right index.
  struct CastlingLayout {
    uint8_t lost_on[kSquares]{};  // rights lost when a move starts or ends on a square
    Square rook[4]{};
    Bitboard path[4]{};
    Bitboard king_path[4]{};
    Key key[4]{};  // the right's Zobrist key (by its rook's file)
  } castling_;
  int game_ply_ = 0;
  int idx_ = 0;
  StateInfo states_[kHistory];
};

// Whether moves of the side to move give check, for many moves of one
// position: what makes a check is found once (the squares each piece type
// checks from, and the pieces whose leaving uncovers a slider), then each
// plain move is two table tests. Other moves ask Position::gives_check.
// The position must not change while the test is used.
class CheckTest {
 public:
  explicit CheckTest(const Position& pos);
  bool operator()(Move m) const {
    if (m.kind() != MoveKind::Normal) return pos_.gives_check(m);
    if (check_squares_[type_of(pos_.moved_piece(m))] & square_bb(m.to())) return true;
    return (discoverers_ & square_bb(m.from())) && !aligned(m.from(), m.to(), king_);
  }

 private:
  const Position& pos_;
  Square king_;                            // theirs
  Bitboard check_squares_[kPieceTypes]{};  // by our piece type
  Bitboard discoverers_ = 0;               // our pieces alone between their king and our slider
};

}  // KIBITZ_NAMESPACE(chess)
