// The store (server/store) with arbitrary contents: the bytes become a
// job's request, progress and result, a review ply and a library entry in a
// real SQLite store (a temporary file, opened once), and what is read back
// is checked. Invariants: nothing written is changed by the round trip
// (JSON compared as values, library bodies byte for byte); the decoding of
// stored results (result_codec) never throws and what it accepts encodes
// back to the same result; lookups never return an entry that does not meet
// them.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "server/store/result_codec.h"
#include "server/store/store.h"

using namespace kibitz;
using namespace kibitz::server;
using nlohmann::json;

namespace {

std::shared_ptr<store::Store>& the_store() {
  static std::shared_ptr<store::Store> st = [] {
    std::string dir =
        (std::filesystem::temp_directory_path() / "kibitz-store-fuzz-XXXXXX").string();
    if (!::mkdtemp(dir.data())) std::abort();
    store::Settings s;
    s.path = dir + "/fuzz.db";
    s.library_mib = 1;  // small: eviction runs too
    auto opened = store::open(s);
    if (!opened) std::abort();
    return *opened;
  }();
  return st;
}

void check_codec(const json& j) {
  auto r = store::result_from_json(j);
  if (!r) return;
  auto again = store::result_from_json(store::result_to_json(*r));
  if (!again || store::result_to_json(*again) != store::result_to_json(*r)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded()) parsed = text;  // a string then
  check_codec(parsed);
  if (parsed.is_object())
    for (auto& [k, v] : parsed.items()) check_codec(v);

  store::Store& st = *the_store();
  static uint64_t n = 0;
  const std::string id = "job" + std::to_string(++n);
  store::JobRecord r;
  r.id = id;
  r.kind = size % 2 ? "analyze" : "annotate";
  r.owner = text.substr(0, 64);
  r.request = parsed;
  r.created_ms = int64_t(n);
  if (!st.create_job(r)) std::abort();
  store::JobUpdate u;
  u.id = id;
  u.progress = parsed;
  u.result = json{{"echo", parsed}};
  u.status = "done";
  u.finished_ms = int64_t(n);
  if (!st.update_job(u, true)) std::abort();
  st.save_ply(id, int(size % 7), parsed);

  const std::string position = "fuzz|" + std::to_string(size % 13);
  const int depth = size ? data[0] % 40 : 0, multipv = size > 1 ? 1 + data[1] % 5 : 1;
  st.put_eval(position, {depth, multipv, text});
  st.flush();

  // Read back: the job as written (strict dumps compare as JSON values;
  // invalid UTF-8 is stored replaced, so compare what a dump would send).
  const auto dumped = [](const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  bool found = false;
  for (auto& j : st.load_jobs()) {
    if (j.id != id) continue;
    found = true;
    if (dumped(j.request) != dumped(parsed) || dumped(j.progress) != dumped(parsed) ||
        j.status != "done" || j.finished_ms != int64_t(n))
      std::abort();
  }
  if (!found) std::abort();
  auto plies = st.load_plies(id);
  if (plies.size() != 1 || dumped(plies.begin()->second) != dumped(parsed)) std::abort();

  auto e = st.find_eval(position, multipv, depth);
  if (e && (e->depth < depth || e->multipv < multipv)) std::abort();
  // An entry as deep with as many lines is this one: an equal depth replaces.
  if (e && e->depth == depth && e->multipv == multipv && e->body != text) std::abort();
  st.remove_job(id);
  st.expire_jobs(int64_t(n));
  return 0;
}
