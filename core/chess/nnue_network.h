// The chess evaluation network (NNUE): its architecture, its weights in
// memory, its file format, and which network the engine uses. This part is
// compiled once (not per instruction-set variant): the weights are data
// that both variants' inference (nnue.h) reads.
//
// Architecture (id 1), from each side's point of view ("perspective"):
//   768 inputs: 12 pieces (own first, pawn..king) x 64 squares, the board
//     flipped vertically for Black, and mirrored horizontally (a<->h) when
//     that side's king stands on files a-d, so its king is always on e-h;
//     times `king_buckets` sets of rows, chosen by where that king stands
//     (king_bucket[square], the square as the side sees it after the flips);
//   -> an accumulator of kHidden int16 units (the rows of the pieces on the
//     board plus the bias, times QA), kept up to date move by move;
//   -> SCReLU, clamp(x, 0, QA)^2, for both perspectives, the side to move's
//     first (2 * kHidden values);
//   -> one output of kOutputBuckets, chosen by the number of pieces on the
//     board ((pieces - 2) / 4);
//   -> centipawns, kScale times the float network's output;
//   -> with a classical share s (the header's, 0-16), the evaluation is
//     (16 - s) / 16 of that and s / 16 of the hand-written evaluation
//     (chess/eval.cpp; the correction left out): an ensemble of the two,
//     whose errors differ, that games chose for the built-in network.
//
// The integers (the file's version says which; both are read):
//   version 1: QA = 255 (kQa1); output weights times 64 (kQb1) and at most
//     [-128, 127] (so that a clamped unit times a weight fits 16 bits), the
//     bias times 255 * 64; centipawns = (sum / 255 + bias) * kScale /
//     (255 * 64), both divisions truncated. Coarse: one step of one output
//     weight at a unit clamped at 1 is 400 / 64 = 6.25 cp, and on held-out
//     positions the integer output of kibitz-2c strays from its float
//     network's by 7.6 cp (s.d.; up to 36), kibitz-2a's by 10.4 (up to 48).
//   version 2: QA = 1024 (kQa2); a clamped unit squared and shifted right by
//     7 (kSquareShift2: 1.0 squared is 8192, in 16 bits); output weights
//     times 1024 (kQb2), the bias times 8192 * 1024 = 2^23; centipawns =
//     (sum + bias) * kScale / 2^23, rounded. Within about 1 cp of the float
//     network (tests/chess/nnue_test.cpp, tests/tools/nnue_train_test.py).
// The loader refuses a file whose integers could overflow: a unit's bias
// plus 32 times its largest row weight must fit int16 (32 pieces at most;
// the accumulator then never wraps), and in version 2 each output bucket's
// positive and negative weights must each sum to at most 2^31 / 8192 (so
// that the 32-bit sum never wraps either).
//
// File format (little-endian; docs: README "The chess network"):
//   offset 0   char[8]  magic "KBZNNUE\0"
//          8   u32      version (1 or 2: the integers' scales, above)
//         12   u32      architecture id (1, the one above)
//         16   u32      hidden units (kHidden)
//         20   u32      king buckets (1..kMaxKingBuckets)
//         24   u32      output buckets (kOutputBuckets)
//         28   u32      the hand-written evaluation's share of the result,
//                       in sixteenths (0..kShareUnits; 0, the network alone,
//                       in files made before this field was used)
//         32   u8[64]   king_bucket: the bucket of each king square (as its
//                       side sees it; squares on files a-d are unused)
//         96   char[32] name, NUL-padded (what /v1/info and `engine` show)
//        128   u64      FNV-1a 64 of the payload, continued over the 4 bytes
//                       at offset 28 when they are not 0 (the share is part
//                       of what evaluates, so of the name and hash shown)
//        136   payload: i16 ft_weights[king_buckets * 768][kHidden],
//                       i16 ft_bias[kHidden],
//                       i16 out_weights[kOutputBuckets][2 * kHidden],
//                       i32 out_bias[kOutputBuckets]
// and nothing after it. In version 1, output weights must lie in [-128, 127]
// (so that a clamped unit times a weight fits 16 bits, which the SIMD path
// relies on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kibitz::nnue {

constexpr int kInputs = 768;
constexpr int kHidden = 256;
constexpr int kMaxKingBuckets = 8;
constexpr int kOutputBuckets = 8;
constexpr int kScale = 400;
constexpr int kShareUnits = 16;  // the classical share's whole
// Version 1's integers.
constexpr int kQa1 = 255;
constexpr int kQb1 = 64;
// Version 2's integers.
constexpr int kQa2 = 1024;
constexpr int kSquareShift2 = 7;  // (1024^2 >> 7) = 8192: a squared unit of 1.0
constexpr int kQb2 = 1024;
constexpr int kOutShift2 = 23;  // log2(8192 * kQb2): the output's scale
// The versions this build reads, and the one nnue_train.py writes.
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1;
constexpr uint32_t kArchitecture = 1;
constexpr size_t kHeaderSize = 136;

struct alignas(64) Network {
  int16_t ft_weights[kMaxKingBuckets * kInputs][kHidden];
  int16_t ft_bias[kHidden];
  int16_t out_weights[kOutputBuckets][2 * kHidden];
  int32_t out_bias[kOutputBuckets];
  uint8_t king_bucket[64];
  int king_buckets;
  int version;          // 1 or 2: the integers' scales
  int qa;               // the accumulator's 1.0 (kQa1 or kQa2), where SCReLU clamps
  int classical_share;  // 0..kShareUnits: the hand-written evaluation's part
  char name[33];
  uint64_t hash;
};

// The bytes of a network file into `net`; an empty string, or why the
// bytes are not a network of this architecture (net is then unspecified).
std::string parse(const unsigned char* data, size_t size, Network& net);

// FNV-1a 64 of the bytes (the file's payload check), and the same hash
// continued over more bytes.
uint64_t fnv1a(const unsigned char* data, size_t size);
uint64_t fnv1a_continue(uint64_t hash, const unsigned char* data, size_t size);

// The network built into the binary (the file under core/chess/nets/ that
// CMake names), or null when the build has none.
const Network* builtin();

// The network the evaluation uses, or null for the hand-written evaluation.
// A search reads it once, when it starts (Position::nn_track).
const Network* current();

// The evaluation the programs start with when nothing names one: "builtin"
// when the build has a network, else "classical". (The library itself
// starts with the hand-written evaluation until select() is called.)
const char* default_eval_file();

// Chooses the evaluation by the `eval_file` setting: "" or "classical" (the
// hand-written evaluation), "builtin" (the network built in), or the path
// of a network file. Returns an
// empty string, or the reason the setting was refused; then the evaluation
// in use is kept. Not to be called while a search runs.
std::string select(const std::string& eval_file);

// What evaluates: "classical", or "nnue <name> <first 8 hex digits of the
// hash>" (so a result can be reproduced with the same network).
std::string describe();

}  // namespace kibitz::nnue
