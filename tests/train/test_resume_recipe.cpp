// Resume refuses a changed recipe: a checkpoint records its run's config.json, and a
// resumed run whose FlagRole::Recipe flags differ from it (or whose data differs in
// size or checksum) is refused naming the first setting that differs and both values,
// changing no file. The Setting flags (threads, logging, checkpoint cadence) and the
// Control flags (--stop-after, --quiet) may change. docs/reliability.md lists which
// flag is which; the last test holds that list to the parsers'.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "train/flags/train_commands.h"
#include "tests/fake_fashion_mnist.h"
#include "tests/train/run_fixtures.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// A copy of the stopped run `from` to spoil.
std::string copy_of(const std::string& from, const TempDir& tmp) {
  static int n = 0;
  const std::string dir = tmp.sub("copy" + std::to_string(n++));
  fs::copy(from, dir, fs::copy_options::recursive);
  return dir;
}

// `program args --resume --out dir` refused, dir as it was.
void expect_resume_refused(const std::string& program, const std::string& args, const std::string& dir,
                           const std::vector<std::string>& needles, const TempDir& tmp) {
  expect_refused(program, args + " --resume --out " + dir, dir, needles, tmp);
}

}  // namespace

TEST_CASE("resume recipe: train_gpt refuses every changed recipe flag, naming it and both values", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  FakeGptRun f;
  const std::string base = f.tiny + " --steps 6 --warmup 2";
  const std::string run = f.train("run", "--steps 6 --warmup 2 --stop-after 3");
  // the flag, its value in the checkpoint, its value now
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"--batch 4", "--batch 2 in the checkpoint, 4 in this run"},
      {"--seed 7", "--seed 1337 in the checkpoint, 7 in this run"},
      {"--lr 0.002", "--lr 0.001 in the checkpoint, 0.002 in this run"},
      {"--min-lr 0", "--min-lr 0.0001 in the checkpoint, 0 in this run"},
      {"--warmup 3", "--warmup 2 in the checkpoint, 3 in this run"},
      {"--wd 0", "--wd 0.1 in the checkpoint, 0 in this run"},
      {"--clip 0.5", "--clip 1 in the checkpoint, 0.5 in this run"},
      // a longer (or shorter) schedule changes the cosine from the first step on
      {"--steps 8", "--steps 6 in the checkpoint, 8 in this run"},
      {"--dropout 0.1", "--dropout 0 in the checkpoint, 0.1 in this run"},
      {"--train-bytes 9000", "--train-bytes -1 in the checkpoint, 9000 in this run"},
      // the model's own flags are named by the model description, checked first
      {"--dim 32", "\"dim\": 16 in the checkpoint, 32 in this run"},
      {"--norm rms", "\"norm\": \"ln\" in the checkpoint, \"rms\" in this run"},
  };
  for (const auto& [flag, needle] : changes)
    expect_resume_refused(kTrainGpt, base + " " + flag, copy_of(run, f.tmp), {"checkpoint.safetensors", needle}, f.tmp);

  // --data: the same text in another folder is another --data; other text in the same
  // folder is other data (its size and checksum)
  const std::string other = f.tmp.sub("other_text");
  fs::copy(f.data, other, fs::copy_options::recursive);
  expect_resume_refused(kTrainGpt, base + " --data " + other, copy_of(run, f.tmp), {"--data " + f.data, other}, f.tmp);
  const std::string changed = copy_of(run, f.tmp);
  std::string text = read_bytes(f.data + "/fortunes");
  text[text.size() / 2] ^= 1;  // one bit, the same size
  write_bytes(f.data + "/fortunes", text);
  expect_resume_refused(kTrainGpt, base, changed, {"trained on other data", "crc32"}, f.tmp);
  text[text.size() / 2] ^= 1;
  write_bytes(f.data + "/fortunes", text);

  // a checkpoint of an older version, whose config records no --dyt-alpha0 (a norm
  // option registered later): the flag counts as its default there, and the run resumes
  const std::string older = copy_of(run, f.tmp);
  resign(older + "/checkpoint.safetensors", [](nl::SafetensorsFile& file) {
    auto config = nlohmann::ordered_json::parse(file.metadata.at("config"));
    REQUIRE(config.contains("dyt_alpha0"));
    config.erase("dyt_alpha0");
    file.metadata.at("config") = config.dump();
  });
  RunResult resumed = run_limited(kTrainGpt, base + " --resume --out " + older, f.tmp);
  INFO(resumed.err);
  CHECK(resumed.code == 0);
  // but a value other than the default is a change
  expect_resume_refused(kTrainGpt, base + " --dyt-alpha0 0.7", copy_of(run, f.tmp),
                        {"--dyt-alpha0 0.5 in the checkpoint, 0.7 in this run"}, f.tmp);

  // settings and controls may change: each resumes to the end
  for (const std::string flag :
       {"--threads 2", "--eval-every 1", "--eval-batches 2", "--checkpoint-every 1", "--keep-checkpoints 2",
        "--act-stats-every 1", "--act-stats-batch 4", "--on-nonfinite skip", "--stop-after 5", "--device cpu"}) {
    const std::string dir = copy_of(run, f.tmp);
    RunResult ok = run_limited(kTrainGpt, base + " " + flag + " --resume --out " + dir, f.tmp);
    INFO(flag << ": " << ok.err);
    CHECK(ok.code == 0);
  }
}

TEST_CASE("resume recipe: train_vit refuses a changed recipe flag, accepts a changed setting", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainVit));
  FakeVitRun v;
  const std::string base = v.tiny + " --steps 6";
  const std::string run = v.tmp.sub("run");
  RunResult r = run_program(kTrainVit, base + " --stop-after 3 --out " + run, v.tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const auto& [flag, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--val-size 50", "--val-size 40 in the checkpoint, 50 in this run"},
           {"--split-seed 2", "--split-seed 1 in the checkpoint, 2 in this run"},
           {"--flip", "--flip false in the checkpoint, true in this run"},
           {"--epochs 3", "--epochs 12 in the checkpoint, 3 in this run"}})
    expect_resume_refused(kTrainVit, base + " " + flag, copy_of(run, v.tmp), {needle}, v.tmp);
  const std::string dir = copy_of(run, v.tmp);
  RunResult ok = run_limited(kTrainVit, base + " --eval-batch 8 --threads 2 --resume --out " + dir, v.tmp);
  INFO(ok.err);
  CHECK(ok.code == 0);
}

namespace {

// The flags in backticks of one cell of the row of `program` in the table after `marker`.
std::set<std::string> doc_flags(const std::string& doc, const std::string& marker, const std::string& program,
                                int column) {
  const size_t at = doc.find(marker);
  REQUIRE(at != std::string::npos);
  std::istringstream in(doc.substr(at));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| " + program + " |", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(cell);
    REQUIRE((int)cells.size() > column + 1);
    std::set<std::string> flags;
    const std::regex flag("`(--[a-z0-9-]+)`");
    for (std::sregex_iterator it(cells[column + 1].begin(), cells[column + 1].end(), flag), end; it != end; ++it)
      flags.insert((*it)[1]);
    return flags;
  }
  FAIL("no row for " << program << " after " << marker);
  return {};
}

// The parser's flags of each role: recipe, setting, control (every other flag --help lists).
std::array<std::set<std::string>, 3> parser_flags(nl::FlagParser& p) {
  std::array<std::set<std::string>, 3> roles;
  for (const std::string& key : p.recipe_keys()) roles[0].insert(nl::flag_of_key(key));
  const nlohmann::ordered_json values = p.values();
  for (const auto& [key, value] : values.items())
    if (key != "program" && !roles[0].count(nl::flag_of_key(key))) roles[1].insert(nl::flag_of_key(key));
  const std::string help = p.help();
  const std::regex flag("  (--[a-z0-9-]+)");
  for (std::sregex_iterator it(help.begin(), help.end(), flag), end; it != end; ++it) {
    const std::string f = (*it)[1];
    if (f != "--help" && f != "--config" && !roles[0].count(f) && !roles[1].count(f)) roles[2].insert(f);
  }
  return roles;
}

std::string listed(const std::set<std::string>& flags) {
  std::string s;
  for (const auto& f : flags) s += (s.empty() ? "`" : ", `") + f + "`";
  return s;
}

}  // namespace

TEST_CASE(
    "resume recipe: docs/reliability.md lists each program's recipe, setting and control flags as the parser has them",
    "[cli]") {
  const std::string doc = read_bytes("docs/reliability.md");
  REQUIRE_FALSE(doc.empty());
  for (const std::string program : {"train_gpt", "train_vit"}) {
    nl::FlagParser p(program, "");
    nl::TrainGptCommand gpt;
    nl::TrainVitCommand vit;
    if (program == "train_gpt") nl::add_train_gpt_flags(p, gpt);
    else nl::add_train_vit_flags(p, vit);
    const auto roles = parser_flags(p);
    for (int role = 0; role < 3; ++role) {
      INFO(program << ", column " << role << " should read: " << listed(roles[role]));
      CHECK(doc_flags(doc, "<!-- flag roles -->", program, role + 1) == roles[role]);
    }
  }
}
