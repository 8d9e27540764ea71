// Tests of run_gpt's checkpoints (train/gpt/gpt_run.h): a run stopped halfway and resumed
// logs exactly what an uninterrupted run logs and ends with the same parameters; the
// checkpoint holds every parameter and the optimizer state; a corrupt or mismatched
// checkpoint is refused with an nl::Error naming the problem, before any file changes.
// Trains on the real fortunes text ([needs-fortunes]: make test skips these without it).
#include <catch2/catch.hpp>

#include "tests/needs.h"
#include "tests/test_files.h"

#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "tests/test_util.h"
#include "train/gpt/gpt_run.h"
#include "train/io/safetensors.h"
#include "tensor/threads.h"

using namespace nl;
using Catch::Contains;
namespace fs = std::filesystem;

using namespace nl::test;

namespace {

// The small run of the brief: 1 layer, dim 32, 2 heads, seq 16, batch 4.
GPTRunConfig small_run(const std::string& out_dir, int64_t steps) {
  GPTRunConfig c;
  c.model.layers = 1;
  c.model.dim = 32;
  c.model.heads = 2;
  c.model.context = 16;
  c.model.norm.name = "ln";
  c.batch = 4;
  c.steps = steps;
  c.warmup = 10;
  c.lr = 3e-3f;
  c.eval_every = 50;
  c.eval_batches = 2;
  c.eval_batch_size = 8;
  c.sample_bytes = 40;
  c.data_dir = kFortunesDir;
  c.out_dir = out_dir;
  c.quiet = true;
  // one thread: these tiny steps only lose time to a second one on a busy machine
  c.threads = 1;
  return c;
}

// A small run of `steps` steps in `dir`, stopped after `stop_after`: its checkpoint is there.
void stopped_run(const std::string& dir, int64_t steps, int64_t stop_after) {
  GPTRunConfig c = small_run(dir, steps);
  c.stop_after = stop_after;
  run_gpt(c);
}

}  // namespace

TEST_CASE("resume: a run stopped at 100 and resumed to 200 logs and ends exactly as a straight run",
          "[train][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  ThreadCountGuard keep;
  TempDir tmp;
  const std::string A = tmp.sub("A"), B = tmp.sub("B");

  GPTRunResult ra = run_gpt(small_run(A, 200));
  CHECK(ra.steps_done == 200);
  CHECK_FALSE(ra.diverged);

  GPTRunConfig first = small_run(B, 200);
  first.stop_after = 100;
  GPTRunResult r1 = run_gpt(first);
  CHECK(r1.steps_done == 100);
  CHECK(read_csv_rows(B + "/log.csv").size() == 101);
  CHECK_FALSE(fs::exists(B + "/sample.txt"));  // written only when the schedule is done
  GPTRunConfig second = small_run(B, 200);
  second.resume = true;
  GPTRunResult r2 = run_gpt(second);
  CHECK(r2.steps_done == 200);

  auto la = read_csv_rows(A + "/log.csv"), lb = read_csv_rows(B + "/log.csv");
  REQUIRE(la.size() == 201);  // header + 200 steps
  CHECK(lb.size() == la.size());
  REQUIRE(!lb.empty());
  CHECK(lb[0] == la[0]);
  REQUIRE(la[0].size() >= 6);
  CHECK(la[0][0] == "step");
  CHECK(la[0][1] == "train_loss");
  CHECK(la[0][5] == "tok_per_s");
  // B's rows by their step, so that a missing or repeated row is named as such
  std::map<std::string, std::vector<std::vector<std::string>>> b_rows;
  for (size_t i = 1; i < lb.size(); ++i)
    if (!lb[i].empty()) b_rows[lb[i][0]].push_back(lb[i]);
  auto join = [](const std::vector<std::string>& row) {
    std::string s;
    for (auto& c : row) s += c + ",";
    return s;
  };
  for (size_t i = 1; i < la.size(); ++i) {
    const std::string step = std::to_string(i);
    REQUIRE(la[i].size() == la[0].size());
    CHECK(la[i][0] == step);
    INFO("log row of step " << step << "\n  A: " << join(la[i]));
    auto it = b_rows.find(step);
    CHECK(it != b_rows.end());  // B's log has this step
    if (it == b_rows.end()) continue;
    CHECK(it->second.size() == 1);  // exactly once
    const auto& rb = it->second.front();
    INFO("  B: " << join(rb));
    REQUIRE(rb.size() == la[0].size());
    CHECK(rb[1] == la[i][1]);  // train_loss, as a string: bit-identical
    // everything else but the speed: val_loss, lr, grad_norm, the residual rms
    for (size_t k = 2; k < la[0].size(); ++k)
      if (k != 5) CHECK(rb[k] == la[i][k]);
  }
  // validation every 50 steps, in both logs
  for (size_t i : {50, 100, 150, 200}) CHECK_FALSE(la[i][2].empty());
  CHECK(la[49][2].empty());

  // the final parameters and optimizer state are identical, bit for bit
  SafetensorsFile fa = load_safetensors(A + "/checkpoint.safetensors");
  SafetensorsFile fb = load_safetensors(B + "/checkpoint.safetensors");
  REQUIRE(fa.tensors.size() == fb.tensors.size());
  for (const auto& [name, t] : fa.tensors) {
    INFO(name);
    REQUIRE(fb.tensors.count(name));
    CHECK(fb.tensors.at(name).to_vector() == t.to_vector());
  }
  CHECK(fa.metadata.at("step") == "200");
  CHECK(fb.metadata.at("step") == "200");
  CHECK(read_bytes(A + "/sample.txt") == read_bytes(B + "/sample.txt"));
  CHECK(ra.final_train_loss == r2.final_train_loss);
  CHECK(ra.final_val_loss == r2.final_val_loss);
  // it learned: the loss fell from ln(256) = 5.55 well below
  CHECK(std::stof(la[200][1]) < 4.5f);
}

TEST_CASE("resume: the checkpoint holds every parameter, optim.m, optim.v and the step", "[train][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  ThreadCountGuard keep;
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  stopped_run(dir, 6, 3);
  const GPTRunConfig c = small_run(dir, 6);
  SafetensorsFile f = load_safetensors(dir + "/checkpoint.safetensors");
  Generator gen(0);
  GPT model(c.model, gen);
  const auto params = model.named_parameters();
  for (const auto& [name, p] : params) {
    INFO(name);
    REQUIRE(f.tensors.count(name));
    CHECK(f.tensors.at(name).shape() == p.shape());
  }
  REQUIRE(f.tensors.count("optim.m"));
  REQUIRE(f.tensors.count("optim.v"));
  CHECK(f.tensors.at("optim.m").numel() == model.num_parameters());
  CHECK(f.tensors.at("optim.v").numel() == model.num_parameters());
  CHECK(f.tensors.size() == params.size() + 2);
  REQUIRE(f.metadata.count("step"));
  CHECK(f.metadata.at("step") == "3");
  // after three steps the moments are not zero, v is non-negative
  double m2 = 0;
  for (float v : f.tensors.at("optim.m").to_vector()) m2 += (double)v * v;
  CHECK(m2 > 0);
  for (float v : f.tensors.at("optim.v").to_vector()) CHECK(v >= 0.0f);
  // the log has the three steps, the config.json is there
  CHECK(read_csv_rows(dir + "/log.csv").size() == 4);
  CHECK(fs::exists(dir + "/config.json"));
}

namespace {

// Runs a resume that must fail: expects an nl::Error whose message contains every one
// of `needles`, and every file in dir unchanged afterwards. Returns the message.
std::string expect_run_gpt_refused(const GPTRunConfig& c, const std::vector<std::string>& needles) {
  const auto before = snapshot(c.out_dir);
  std::string message;
  try {
    run_gpt(c);
    FAIL_CHECK("run_gpt accepted the checkpoint in " << c.out_dir);
  } catch (const Error& e) {
    message = e.what();
  }
  INFO("message: " << message);
  for (const auto& n : needles) CHECK_THAT(message, Contains(n));
  const auto after = snapshot(c.out_dir);
  CHECK(after.size() == before.size());
  for (const auto& [name, bytes] : before) {
    INFO("file " << name);
    REQUIRE(after.count(name));
    CHECK(after.at(name) == bytes);
  }
  return message;
}

}  // namespace

TEST_CASE("resume: a corrupt or mismatched checkpoint is refused and changes no file", "[train][needs-fortunes]") {
  REQUIRE_RESOURCE(missing_fortunes());
  ThreadCountGuard keep;
  TempDir tmp;
  const std::string good = tmp.sub("good");
  stopped_run(good, 4, 2);
  REQUIRE(fs::exists(good + "/checkpoint.safetensors"));
  const std::string ckpt_bytes = read_bytes(good + "/checkpoint.safetensors");
  REQUIRE(ckpt_bytes.size() > 1000);

  // a fresh copy of the good run to spoil
  static int copies = 0;
  auto copy = [&]() {
    std::string d = tmp.sub("case" + std::to_string(copies++));
    fs::copy(good, d, fs::copy_options::recursive);
    return d;
  };
  auto resume_cfg = [&](const std::string& d) {
    GPTRunConfig c = small_run(d, 4);
    c.resume = true;
    return c;
  };

  // each corrupt file in place of the checkpoint: refused naming it, nothing trained
  auto header_filled = [&](size_t from, size_t to, char c) {
    std::string bytes = ckpt_bytes;
    for (size_t i = from; i < to; ++i) bytes[i] = c;
    return bytes;
  };
  const std::vector<std::pair<std::string, std::string>> corrupt = {
      {"truncated in the data", ckpt_bytes.substr(0, ckpt_bytes.size() / 2)},
      {"truncated inside the length prefix", ckpt_bytes.substr(0, 5)},
      {"empty file", ""},
      {"header garbage", header_filled(8, 48, '#')},
      {"header length far beyond the file", header_filled(0, 8, (char)0x7f)},
      {"not a checkpoint at all: a text file", "step,train_loss\n1,5.5\n"},
  };
  for (const auto& [what, bytes] : corrupt) DYNAMIC_SECTION(what) {
      std::string d = copy();
      write_bytes(d + "/checkpoint.safetensors", bytes);
      expect_run_gpt_refused(resume_cfg(d), {"checkpoint.safetensors"});
    }
  SECTION("a different --dim") {
    std::string d = copy();
    GPTRunConfig c = resume_cfg(d);
    c.model.dim = 48;
    expect_run_gpt_refused(c, {"checkpoint.safetensors", "32", "48"});
  }
  SECTION("a different number of layers") {
    std::string d = copy();
    GPTRunConfig c = resume_cfg(d);
    c.model.layers = 2;
    expect_run_gpt_refused(c, {"checkpoint.safetensors"});
  }
  // another norm: with the same parameter shapes (cbwc), other parameters (rms: no
  // biases; dyt: an alpha per site); each refused naming the norm
  for (const char* norm : {"cbwc", "rms", "dyt"}) DYNAMIC_SECTION("a different norm: " << norm << " for ln") {
      std::string d = copy();
      GPTRunConfig c = resume_cfg(d);
      c.model.norm.name = norm;
      expect_run_gpt_refused(c, {"checkpoint.safetensors", "norm", norm});
    }
  SECTION("a checkpoint past the end of the schedule") {
    std::string d = copy();
    GPTRunConfig c = resume_cfg(d);
    c.steps = 1;  // the checkpoint is at step 2
    expect_run_gpt_refused(c, {"step"});
  }
  SECTION("no checkpoint: nothing is created") {
    const std::string d = tmp.sub("empty");
    GPTRunConfig c = resume_cfg(d);
    CHECK_THROWS_AS(run_gpt(c), Error);
    CHECK_FALSE(fs::exists(d));
  }
  SECTION("and the good checkpoint itself resumes to the end") {
    std::string d = copy();
    GPTRunResult r = run_gpt(resume_cfg(d));
    CHECK(r.steps_done == 4);
    CHECK(read_csv_rows(d + "/log.csv").size() == 5);
  }
}
