// Reading the perft and move-list files under tests/data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kibitz::test {

struct PerftCase {
  std::string fen;
  int depth;
  uint64_t nodes;
  int line;  // 1-based line in the file, for test names
};

// Every (position, depth) of an EPD-style file "FEN ;D1 n ;D2 n ...".
std::vector<PerftCase> load_perft_cases(const std::string& relative_path);

// The distinct FENs of such a file.
std::vector<std::string> load_perft_fens(const std::string& relative_path);

std::string data_path(const std::string& relative_path);

}  // namespace kibitz::test
