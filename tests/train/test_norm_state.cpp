// The state a norm's site pair keeps beside the parameters (nn/norms/site_pair.h: BHyT's
// ||W_V W_O||^2 cache and its count of training forwards) in checkpoints: saved under the
// generic key norm_state and restored from it; a checkpoint written before that key, with
// the cache under "bhyt_c_attn", still resumes exactly as the code that wrote it did
// (tests/data/bhyt-c-attn-v1, whose README gives the commands and the commit).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/gpt.h"
#include "tensor/ops.h"
#include "tests/fake_fashion_mnist.h"
#include "tests/nn/model_fixtures.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/io/safetensors.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kOld = "tests/data/bhyt-c-attn-v1";
// the flags of the committed run (its README), --stop-after and --out apart
const std::string kOldFlags =
    "--data text --norm bhyt --bhyt-refresh 3 --layers 2 --dim 8 --heads 2 --seq 8 --batch 2 --tied-head on "
    "--lr 1e-2 --warmup 1 --steps 8 --eval-every 2 --eval-batches 1 --act-stats-every 2 --threads 1 --quiet";

// log.csv without its timing column (tok_per_s, or img_per_s in a ViT's), as text
std::string log_without_timing(const std::string& path) {
  const auto rows = read_csv_rows(path);
  REQUIRE(!rows.empty());
  size_t skip = rows[0].size();
  for (size_t i = 0; i < rows[0].size(); ++i)
    if (rows[0][i].size() > 6 && rows[0][i].substr(rows[0][i].size() - 6) == "_per_s") skip = i;
  REQUIRE(skip < rows[0].size());
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      if (i != skip) line += (line.empty() ? "" : ",") + row[i];
    text += line + "\n";
  }
  return text;
}

// Two CSV texts cell by cell: the same text, or numbers within 1e-5 of each other
// (relative). The committed values come from the release build (-O3, -march=native: FMA);
// a sanitizer build rounds differently in the last digits (the lr's cosine, 4.7e-10 apart).
// A cache refreshed at other steps moves the losses far more.
void check_same_csv(const std::string& got, const std::string& want) {
  auto split = [](const std::string& text, char sep) {
    std::vector<std::string> out;
    std::string item;
    for (char c : text + std::string(1, sep))
      if (c == sep) out.push_back(item), item.clear();
      else item += c;
    return out;
  };
  const auto a = split(got, '\n'), b = split(want, '\n');
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto x = split(a[i], ','), y = split(b[i], ',');
    INFO("line " << i + 1 << ": " << a[i] << "\nwanted: " << b[i]);
    REQUIRE(x.size() == y.size());
    for (size_t k = 0; k < x.size(); ++k) {
      char *end_x = nullptr, *end_y = nullptr;
      const double u = std::strtod(x[k].c_str(), &end_x), v = std::strtod(y[k].c_str(), &end_y);
      if (x[k].empty() || *end_x || y[k].empty() || *end_y)
        CHECK(x[k] == y[k]);
      else
        CHECK(std::fabs(u - v) <= 1e-5 * std::max(1.0, std::fabs(v)));
    }
  }
}

// train_gpt run from `dir` (the committed run names its text by a relative path)
RunResult train_in(const std::string& dir, const std::string& args, const TempDir& tmp) {
  return run_program("cd " + dir + " && " + fs::absolute(kTrainGpt).string(), args, tmp);
}

GPTConfig bhyt_gpt() {
  GPTConfig c = gpt_config(256, 2, 8, 2, 8, "bhyt");
  c.norm.set("bhyt-refresh", 3);
  return c;
}

const BHyTPair& pair_of(const GPT& model, size_t block) {
  REQUIRE(model.blocks[block]->site_pair() != nullptr);
  return dynamic_cast<const BHyTPair&>(*model.blocks[block]->site_pair());
}

}  // namespace

TEST_CASE("norm state: a BHyT checkpoint written before norm_state resumes as the code that wrote it did",
          "[norm-state][train]") {
  TempDir tmp;
  write_fake_text(tmp.sub("text"), 20000);
  fs::copy(kOld + "/stopped", tmp.sub("run"));
  REQUIRE(load_safetensors(tmp.sub("run/checkpoint.safetensors")).metadata.count("bhyt_c_attn") == 1);
  const RunResult r = train_in(tmp.path.string(), kOldFlags + " --resume --out run", tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  // steps 5 to 8 and their statistics, number for number: the cache of step 4 (computed
  // at forward 3 with --bhyt-refresh 3) and the count of forwards came back
  check_same_csv(log_without_timing(tmp.sub("run/log.csv")), read_bytes(kOld + "/resumed/log-without-tok-per-s.csv"));
  check_same_csv(read_bytes(tmp.sub("run/act_stats.csv")), read_bytes(kOld + "/resumed/act_stats.csv"));
  // the checkpoint it leaves holds the state under the generic key alone
  const auto metadata = load_safetensors(tmp.sub("run/checkpoint.safetensors")).metadata;
  CHECK(metadata.count("bhyt_c_attn") == 0);
  CHECK(metadata.count(kNormStateKey) == 1);
}

TEST_CASE("norm state: a run stopped and resumed keeps the pairs' states under norm_state", "[norm-state][train]") {
  TempDir tmp;
  write_fake_text(tmp.sub("text"), 20000);
  REQUIRE(train_in(tmp.path.string(), kOldFlags + " --out straight", tmp).code == 0);
  REQUIRE(train_in(tmp.path.string(), kOldFlags + " --stop-after 4 --out stopped", tmp).code == 0);
  const auto metadata = load_safetensors(tmp.sub("stopped/checkpoint.safetensors")).metadata;
  CHECK(metadata.count("bhyt_c_attn") == 0);
  REQUIRE(metadata.count(kNormStateKey) == 1);
  const auto states = nlohmann::json::parse(metadata.at(kNormStateKey));
  REQUIRE(states.is_array());
  REQUIRE(states.size() == 2);
  for (const auto& s : states) CHECK_THAT(s.get<std::string>(), Catch::EndsWith(":4"));  // 4 training forwards
  const RunResult r = train_in(tmp.path.string(), kOldFlags + " --resume --out stopped", tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(log_without_timing(tmp.sub("stopped/log.csv")) == log_without_timing(tmp.sub("straight/log.csv")));
  CHECK(read_bytes(tmp.sub("stopped/act_stats.csv")) == read_bytes(tmp.sub("straight/act_stats.csv")));
  // a norm without a site pair writes no state
  REQUIRE(train_in(tmp.path.string(), "--data text --layers 1 --dim 8 --heads 2 --seq 8 --batch 2 --steps 2 "
                                      "--eval-every 2 --eval-batches 1 --threads 1 --quiet --out ln",
                   tmp)
              .code == 0);
  CHECK(load_safetensors(tmp.sub("ln/checkpoint.safetensors")).metadata.count(kNormStateKey) == 0);
}

TEST_CASE("norm state: encode and restore round-trip every block's cache exactly, the old key read too",
          "[norm-state]") {
  Generator g1(3), data(4);
  GPT trained(bhyt_gpt(), g1);
  const Tensor ids = Tensor::from_ints({1, 2, 3, 4, 5, 6, 7, 8}, {1, 8});
  for (int step = 0; step < 5; ++step) {
    for (auto& [name, p] : trained.named_parameters()) p.value().copy_from(add_scalar(p.value(), 0.01f));
    trained.loss(ids, ids);  // a training forward: counted, and the cache refreshed at 0 and 3
  }
  const std::string text = encode_norm_state(trained);
  Generator g2(3);
  GPT fresh(bhyt_gpt(), g2);
  restore_norm_state(fresh, {{kNormStateKey, text}});
  for (size_t b = 0; b < 2; ++b) {
    CHECK(pair_of(fresh, b).cached_frobenius2() == pair_of(trained, b).cached_frobenius2());
    CHECK(pair_of(fresh, b).training_forwards() == 5);
  }
  // the key of the checkpoints written before it: "frobenius2:forwards" joined by commas
  Generator g3(3);
  GPT old(bhyt_gpt(), g3);
  restore_norm_state(old, {{"bhyt_c_attn", "0.00131357287:4,0.000604979403:7"}});
  CHECK(pair_of(old, 0).cached_frobenius2() == 0.00131357287f);
  CHECK(pair_of(old, 1).training_forwards() == 7);
  // no state at all: nothing changes
  restore_norm_state(old, {{"step", "4"}});
  CHECK(pair_of(old, 1).training_forwards() == 7);
}

TEST_CASE("norm state: a state that does not fit the model is refused naming the key", "[norm-state]") {
  Generator g(5);
  GPT model(bhyt_gpt(), g);
  CHECK_THROWS_WITH(restore_norm_state(model, {{kNormStateKey, "[\"1:2\"]"}}),
                    Contains("norm_state holds 1 entries for 2 blocks"));
  CHECK_THROWS_WITH(restore_norm_state(model, {{kNormStateKey, "{\"a\": 1}"}}),
                    Contains("norm_state is not a JSON array of strings"));
  CHECK_THROWS_WITH(restore_norm_state(model, {{kNormStateKey, "[\"1:2\", \"x\"]"}}), Contains("malformed"));
  CHECK_THROWS_WITH(restore_norm_state(model, {{"bhyt_c_attn", "1:2"}}), Contains("1 entries for 2 blocks"));
  GPTConfig ln = bhyt_gpt();
  ln.norm.name = "ln";
  ln.norm.options.clear();
  GPT plain(ln, g);
  CHECK_THROWS_WITH(restore_norm_state(plain, {{kNormStateKey, "[\"1:2\", \"1:2\"]"}}), Contains("keeps none"));
  restore_norm_state(plain, {{"bhyt_c_attn", "1:2,1:2"}});  // another kind's old key means nothing to ln
}

TEST_CASE("norm state: a BHyT ViT stopped and resumed keeps its caches, as the straight run", "[norm-state][train]") {
  FakeVitRun f;
  // refreshed every 3 steps, stopped at 4: a resume with fresh caches would refresh at
  // other steps than the straight run (before: the ViT saved no norm state)
  const std::string run = f.tiny + " --norm bhyt --bhyt-refresh 3 --steps 8 --lr 1e-2";
  REQUIRE(run_program(kTrainVit, run + " --out " + f.tmp.sub("straight"), f.tmp).code == 0);
  REQUIRE(run_program(kTrainVit, run + " --stop-after 4 --out " + f.tmp.sub("stopped"), f.tmp).code == 0);
  const auto metadata = load_safetensors(f.tmp.sub("stopped/checkpoint.safetensors")).metadata;
  REQUIRE(metadata.count(kNormStateKey) == 1);
  const RunResult r = run_program(kTrainVit, run + " --resume --out " + f.tmp.sub("stopped"), f.tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(log_without_timing(f.tmp.sub("stopped/log.csv")) == log_without_timing(f.tmp.sub("straight/log.csv")));
}
