#include "support/test_data.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kibitz::test {

std::string data_path(const std::string& relative_path) {
  return std::string(KIBITZ_TEST_DATA_DIR) + "/" + relative_path;
}

std::vector<PerftCase> load_perft_cases(const std::string& relative_path) {
  std::ifstream in(data_path(relative_path));
  if (!in) throw std::runtime_error("cannot open " + data_path(relative_path));
  std::vector<PerftCase> cases;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const size_t semi = line.find(';');
    if (semi == std::string::npos) continue;
    std::string fen = line.substr(0, semi);
    while (!fen.empty() && fen.back() == ' ') fen.pop_back();
    std::istringstream fields(line.substr(semi));
    std::string token;
    while (std::getline(fields, token, ';')) {
      int depth = 0;
      unsigned long long nodes = 0;
      if (std::sscanf(token.c_str(), " D%d %llu", &depth, &nodes) == 2)
        cases.push_back({fen, depth, nodes, n});
    }
  }
  return cases;
}

std::vector<std::string> load_perft_fens(const std::string& relative_path) {
  std::vector<std::string> fens;
  for (const auto& c : load_perft_cases(relative_path))
    if (fens.empty() || fens.back() != c.fen) fens.push_back(c.fen);
  return fens;
}

}  // namespace kibitz::test
