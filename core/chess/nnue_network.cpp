#include "chess/nnue_network.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <vector>

// The built-in network: the file CMake names in KIBITZ_NNUE_BUILTIN, taken
// into the binary by the assembler (.incbin), so that nothing is read at
// run time and no generated source holds a megabyte of numbers.
#if defined(KIBITZ_NNUE_BUILTIN)
asm(".section .rodata\n"
    ".balign 64\n"
    ".globl kibitz_nnue_builtin_begin\n"
    ".hidden kibitz_nnue_builtin_begin\n"
    "kibitz_nnue_builtin_begin:\n"
    ".incbin \"" KIBITZ_NNUE_BUILTIN
    "\"\n"
    ".globl kibitz_nnue_builtin_end\n"
    ".hidden kibitz_nnue_builtin_end\n"
    "kibitz_nnue_builtin_end:\n"
    ".previous\n");
extern "C" const unsigned char kibitz_nnue_builtin_begin[];
extern "C" const unsigned char kibitz_nnue_builtin_end[];
#endif

namespace kibitz::nnue {

namespace {

uint32_t u32_at(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// Little-endian values of n bytes each into dst (this x86-64 build is
// little-endian: a copy).
template <class T>
const unsigned char* read_array(const unsigned char* p, T* dst, size_t count) {
  static_assert(std::endian::native == std::endian::little);
  std::memcpy(dst, p, count * sizeof(T));
  return p + count * sizeof(T);
}

std::atomic<const Network*> current_{nullptr};
std::mutex select_mutex_;
// Every network loaded stays alive: a position may still point at one.
std::vector<std::unique_ptr<Network>> loaded_;

}  // namespace

uint64_t fnv1a_continue(uint64_t h, const unsigned char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

uint64_t fnv1a(const unsigned char* data, size_t size) {
  return fnv1a_continue(0xcbf29ce484222325ull, data, size);
}

std::string parse(const unsigned char* data, size_t size, Network& net) {
  if (size < kHeaderSize || std::memcmp(data, "KBZNNUE\0", 8) != 0)
    return "not a Kibitz network file (no KBZNNUE header)";
  const uint32_t version = u32_at(data + 8);
  if (version < kOldestVersion || version > kVersion)
    return "network file version " + std::to_string(version) + ", this build reads " +
           std::to_string(kOldestVersion) + " to " + std::to_string(kVersion);
  if (u32_at(data + 12) != kArchitecture || u32_at(data + 16) != uint32_t(kHidden) ||
      u32_at(data + 24) != uint32_t(kOutputBuckets))
    return "network architecture " + std::to_string(u32_at(data + 12)) + " with " +
           std::to_string(u32_at(data + 16)) + " hidden units, this build runs architecture " +
           std::to_string(kArchitecture) + " with " + std::to_string(kHidden);
  const uint32_t buckets = u32_at(data + 20);
  if (buckets < 1 || buckets > uint32_t(kMaxKingBuckets))
    return "network with " + std::to_string(buckets) + " king buckets (1 to " +
           std::to_string(kMaxKingBuckets) + ")";
  const size_t payload = size_t(buckets) * kInputs * kHidden * 2 + kHidden * 2 +
                         kOutputBuckets * 2 * kHidden * 2 + kOutputBuckets * 4;
  if (size != kHeaderSize + payload)
    return "network file of " + std::to_string(size) + " bytes, its header says " +
           std::to_string(kHeaderSize + payload);
  const uint32_t share = u32_at(data + 28);
  if (share > uint32_t(kShareUnits))
    return "network classical share " + std::to_string(share) + " (0 to " +
           std::to_string(kShareUnits) + " sixteenths)";
  uint64_t hash;
  std::memcpy(&hash, data + 128, 8);
  uint64_t computed = fnv1a(data + kHeaderSize, payload);
  if (share) computed = fnv1a_continue(computed, data + 28, 4);
  if (computed != hash)
    return "network file damaged (its payload does not match the hash in its header)";
  std::memcpy(net.king_bucket, data + 32, 64);
  for (int s = 0; s < 64; ++s)
    if (net.king_bucket[s] >= buckets) return "network king bucket out of range";
  std::memcpy(net.name, data + 96, 32);
  net.name[32] = 0;
  net.king_buckets = int(buckets);
  net.version = int(version);
  net.qa = version == 1 ? kQa1 : kQa2;
  net.classical_share = int(share);
  net.hash = hash;
  const unsigned char* p = data + kHeaderSize;
  p = read_array(p, &net.ft_weights[0][0], size_t(buckets) * kInputs * kHidden);
  p = read_array(p, net.ft_bias, kHidden);
  p = read_array(p, &net.out_weights[0][0], size_t(kOutputBuckets) * 2 * kHidden);
  read_array(p, net.out_bias, kOutputBuckets);
  // No accumulator can wrap: at most 32 pieces, each adding one row.
  for (int j = 0; j < kHidden; ++j) {
    int largest = 0;
    for (size_t i = 0; i < size_t(buckets) * kInputs; ++i)
      largest = std::max(largest, std::abs(int(net.ft_weights[i][j])));
    if (std::abs(int(net.ft_bias[j])) + 32 * largest > 32767)
      return "network accumulator unit " + std::to_string(j) + " could overflow 16 bits";
  }
  for (const auto& bucket : net.out_weights) {
    int64_t positive = 0, negative = 0;
    for (const int16_t w : bucket) {
      if (version == 1 && (w < -128 || w > 127)) return "network output weight outside [-128, 127]";
      (w > 0 ? positive : negative) += std::abs(int(w));
    }
    // Version 2's 32-bit sum of squared units (each at most 8192) times
    // these weights never wraps.
    if (version == 2 && std::max(positive, negative) > INT32_MAX / ((kQa2 * kQa2) >> kSquareShift2))
      return "network output weights too large (their sum could overflow 32 bits)";
  }
  return {};
}

const Network* builtin() {
#if defined(KIBITZ_NNUE_BUILTIN)
  static const Network* const net = [] {
    static Network n;
    const std::string error = parse(kibitz_nnue_builtin_begin,
                                    size_t(kibitz_nnue_builtin_end - kibitz_nnue_builtin_begin), n);
    return error.empty() ? &n : nullptr;
  }();
  return net;
#else
  return nullptr;
#endif
}

const char* default_eval_file() { return builtin() ? "builtin" : "classical"; }

const Network* current() { return current_.load(std::memory_order_acquire); }

std::string select(const std::string& eval_file) {
  std::lock_guard lock(select_mutex_);
  if (eval_file.empty() || eval_file == "classical") {
    current_.store(nullptr, std::memory_order_release);
    return {};
  }
  if (eval_file == "builtin") {
    if (!builtin()) return "this build has no built-in network";
    current_.store(builtin(), std::memory_order_release);
    return {};
  }
  std::ifstream in(eval_file, std::ios::binary);
  if (!in) return "cannot read network file " + eval_file;
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
  auto net = std::make_unique<Network>();
  if (std::string error = parse(bytes.data(), bytes.size(), *net); !error.empty())
    return eval_file + ": " + error;
  current_.store(net.get(), std::memory_order_release);
  loaded_.push_back(std::move(net));
  return {};
}

std::string describe() {
  const Network* net = current();
  if (!net) return "classical";
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08llx", static_cast<unsigned long long>(net->hash >> 32));
  return std::string("nnue ") + net->name + " " + hash;
}

}  // namespace kibitz::nnue
