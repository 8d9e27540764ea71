// Tests of reading a study's results file back (--reuse, regime_study --cells-from):
// a field missing or of another type is refused with one line naming the flag, the
// file and the field, exit 2, never an abort (each study's typed record, read by
// read_record: train/io/json_fields.h). Each program reads a file it wrote, or a
// committed one, with every top-level field and every field of the first run removed,
// and then given another type, in turn.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "studies/regime/regime_records.h"
#include "studies/regime/regime_study.h"
#include "studies/report/study.h"
#include "train/io/files.h"
#include "tests/needs.h"
#include "tests/studies/results_doc.h"
#include "tests/studies/study_programs.h"
#include "tests/test_files.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// `doc` with one field removed, or given a value of another kind: every top-level field
// and every field of runs[0], with what was done ("runs[0].val_end removed").
std::vector<std::pair<std::string, json>> mutations(const json& doc) {
  std::vector<std::pair<std::string, json>> out;
  auto other = [](const json& v) { return v.is_string() ? json(7) : json("x"); };
  for (const auto& [key, value] : doc.items()) {
    json removed = doc, retyped = doc;
    removed.erase(key);
    retyped[key] = other(value);
    out.push_back({key + " removed", removed});
    out.push_back({key + " retyped", retyped});
  }
  if (!doc.contains("runs") || doc["runs"].empty()) return out;
  for (const auto& [key, value] : doc["runs"][0].items()) {
    json removed = doc, retyped = doc;
    removed["runs"][0].erase(key);
    retyped["runs"][0][key] = other(value);
    out.push_back({"runs[0]." + key + " removed", removed});
    out.push_back({"runs[0]." + key + " retyped", retyped});
  }
  return out;
}

// `program args` on `file` holding each mutation of `doc`: it renders (exit 0), or it
// refuses with one line naming `flag` and the file (exit 2); it never aborts. Returns
// how many were refused.
int expect_no_abort(const std::string& program, const std::string& args, const std::string& file, const json& doc,
                    const std::string& flag, const TempDir& tmp) {
  int refused = 0;
  for (const auto& [what, mutated] : mutations(doc)) {
    write_bytes(file, mutated.dump(1));
    const RunResult r = run_program(program, args, tmp);
    INFO(what << "\nstderr: " << r.err);
    CHECK((r.code == 0 || r.code == 2));
    if (r.code != 2) continue;
    ++refused;
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Contains(flag) && Contains(file));
  }
  return refused;
}

// `program args` on `file` holding `text`: exit 2 and one line holding each needle.
void expect_refused(const std::string& program, const std::string& args, const std::string& file,
                    const std::string& text, const std::vector<std::string>& needles, const TempDir& tmp) {
  write_bytes(file, text);
  const RunResult r = run_program(program, args, tmp);
  INFO(text.substr(0, 200) << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  for (const std::string& n : needles) CHECK_THAT(r.err, Contains(n));
}


}  // namespace

TEST_CASE("regime records: every committed regime results file loads", "[results]") {
  int files = 0;
  for (const auto& e : fs::directory_iterator("docs/results")) {
    const std::string path = e.path().string();
    if (e.path().extension() != ".json" || e.path().filename().string().rfind("regime", 0) != 0) continue;
    INFO(path);
    CHECK_NOTHROW(regime_results_of(json::parse(read_bytes(path)), "--reuse", path));
    ++files;
  }
  CHECK(files >= 10);
}

TEST_CASE("regime_study --reuse and --cells-from: a results file lacking a field is refused, never an abort",
          "[results][regime][cli]") {
  TempDir tmp;
  const json doc = committed("regime_diff100k");  // a committed regime study's results
  fs::create_directories(tmp.sub("runs"));
  const std::string file = tmp.sub("runs") + "/results.json";
  const std::string reuse = "--reuse --out " + tmp.sub("runs") + " --doc " + tmp.sub("r.md");
  write_bytes(file, doc.dump(1));
  const RunResult whole = run_program(kRegimeStudy, reuse, tmp);
  INFO("stderr: " << whole.err);
  REQUIRE(whole.code == 0);  // the file as committed renders
  CHECK(expect_no_abort(kRegimeStudy, reuse, file, doc, "--reuse", tmp) > 20);
  expect_refused(kRegimeStudy, reuse, file, "{}", {"--reuse", file, "is missing"}, tmp);
  json no_val_end = doc;
  no_val_end["runs"][1].erase("val_end");
  expect_refused(kRegimeStudy, reuse, file, no_val_end.dump(), {"--reuse", file, "runs[1].val_end is missing"}, tmp);

  // --cells-from: the file an earlier invocation left, read before any cell is planned to train
  const std::string from = tmp.sub("earlier.json");
  const std::string cells = "--dry-run --cells-from " + from;
  CHECK(expect_no_abort(kRegimeStudy, cells, from, doc, "--cells-from", tmp) > 20);
  for (const char* key : {"runs", "recipe"}) {
    json lacking = doc;
    lacking.erase(key);
    expect_refused(kRegimeStudy, cells, from, lacking.dump(), {"--cells-from", from, std::string(key) + " is missing"},
                   tmp);
  }
  expect_refused(kRegimeStudy, cells, from, "{}", {"--cells-from", from, "is missing"}, tmp);
  expect_refused(kRegimeStudy, cells, from, no_val_end.dump(), {"--cells-from", from, "runs[1].val_end is missing"},
                 tmp);
  json retyped = doc;
  retyped["runs"][0]["size"] = "100000";
  expect_refused(kRegimeStudy, cells, from, retyped.dump(),
                 {"--cells-from", from, "runs[0].size is a string, not an integer"}, tmp);
}

TEST_CASE("compare_norms and depth_study --reuse: a results file lacking a field is refused, never an abort",
          "[results][compare][cli][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string tiny = "--layers 2 --dim 16 --heads 2 --seq 8 --batch 2 --steps 2 --warmup 1 --eval-every 2 "
                           "--eval-batches 1";
  const std::string out = tmp.sub("demo");
  const RunResult first = run_program(kCompareNorms, tiny + " --runs ln --out " + out, tmp);
  INFO("stderr: " << first.err);
  REQUIRE(first.code == 0);
  const std::string file = out + "/results.json";
  const json doc = json::parse(read_bytes(file));
  const std::string reuse = tiny + " --runs ln --out " + out + " --reuse";
  CHECK(expect_no_abort(kCompareNorms, reuse, file, doc, "--reuse", tmp) > 10);
  expect_refused(kCompareNorms, reuse, file, "{}", {"--reuse", file, "is missing"}, tmp);
  json lacking = doc;
  lacking.erase("runs");
  expect_refused(kCompareNorms, reuse, file, lacking.dump(), {"--reuse", file, "runs is missing"}, tmp);

  const std::string depth_out = tmp.sub("depth");
  const std::string depth = "--depths 1 --seeds 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 2 --warmup 1 "
                            "--eval-every 2 --eval-batches 1 --act-stats-every 2 --speed-steps 0 --out " +
                            depth_out + " --doc " + tmp.sub("depth.md");
  const RunResult d = run_program(kDepthStudy, depth, tmp);
  INFO("stderr: " << d.err);
  REQUIRE(d.code == 0);
  const std::string depth_file = depth_out + "/results.json";
  const json depth_doc = json::parse(read_bytes(depth_file));
  CHECK(expect_no_abort(kDepthStudy, depth + " --reuse", depth_file, depth_doc, "--reuse", tmp) > 10);
}

TEST_CASE("regime_study --cells-from: a committed results file written before a flag existed still matches its grid",
          "[results][regime][cli]") {
  // docs/results/regime_verma_b1.json predates the RMSNorm gain options (and others): a
  // flag it does not record ran at its default, which is this grid's, so its cells are kept
  TempDir tmp;
  REQUIRE_FALSE(committed("regime_verma_b1")["recipe"].contains("rms_gain0_attn"));
  const RunResult r = run_program(kRegimeStudy,
                                  "--recipe verma --arms 'ln=--norm ln,dyt-a2=--norm dyt --dyt-alpha0 2' "
                                  "--sizes 30000 --seeds 1337 --vit-images 0 --cells-from "
                                  "docs/results/regime_verma_b1.json --dry-run --out " + tmp.sub("runs"),
                                  tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  const auto later = later_flag_defaults();
  CHECK(later["rms_gain0_attn"] == 1);
  CHECK(later["bhyt_gamma0"] == "one");
  CHECK(later["schedule"] == "cosine");
  CHECK_FALSE(later.contains("lr"));  // a file without --lr is refused (tests/studies/test_regime_study.cpp)
}
