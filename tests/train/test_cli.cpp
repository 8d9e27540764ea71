// Tests of the train_gpt command line (apps/train_gpt.cpp), run as a program: each
// kind of bad input prints exactly one line on stderr naming the problem and exits with
// code 2, leaving the files already in --out as they were; --help exits 0 and lists the
// flags. `make test` builds the program first; nl::test::build_dir() names this build's folder.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <tuple>

#include "tensor/device.h"
#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // expect_refused
#include "train/flags/flag_parser.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using Catch::Contains;
namespace fs = std::filesystem;

using namespace nl::test;

namespace {

// Runs train_gpt with the given arguments, output captured.
RunResult run_train_gpt(const std::string& args, const TempDir& scratch) {
  return run_program(kTrainGpt, args, scratch);
}

// Small model flags: every successful run is a few milliseconds.
const std::string kTiny =
    "--layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --eval-every 1 --eval-batches 1 --threads 1 --quiet";

// An --out folder holding a log.csv of known content, which a refused run must leave as it was.
struct RunFolderWithLog {
  TempDir tmp;
  std::string out;
  RunFolderWithLog() : out(tmp.sub("out")) {
    fs::create_directories(out);
    write_bytes(out + "/log.csv", "step,train_loss\n1,9.99\n");
  }
};

}  // namespace

TEST_CASE("train_gpt cli --help exits 0 and lists the flags", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  TempDir tmp;
  const std::string help = help_text(kTrainGpt, tmp);
  for (const char* flag : {"--norm", "--layers", "--dim", "--heads", "--seq", "--batch", "--steps", "--lr", "--data",
                           "--out", "--resume", "--stop-after", "--seed", "--threads"})
    CHECK_THAT(help, Contains(flag));
  // the norm flag's help names the choices
  CHECK_THAT(help, Contains("cbwc") && Contains("dyt") && Contains("bhyt"));
  // --help wins over the other flags: it trains nothing and writes nothing
  const std::string out = tmp.sub("out");
  RunResult r2 = run_train_gpt("--out " + out + " --steps 3 --help", tmp);
  CHECK(r2.code == 0);
  CHECK_THAT(r2.out, Contains("--norm"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("FlagParser --help: each number flag shows the values it accepts", "[cli]") {
  nl::FlagParser p("prog", "a program");
  int64_t layers = 4, seed = 1, stop = -1;
  double lr = 1e-3, clip = 1, dropout = 0;
  float scale = 1;
  std::vector<int64_t> sizes = {30000};
  p.integer("--layers", layers, 1, 256, "transformer blocks");
  p.integer("--seed", seed, 0, INT64_MAX, "the seed");
  p.integer("--stop-after", stop, -1, 100, "stop after this step");
  p.real("--lr", lr, 0, 1e300, "learning rate");
  p.real("--clip", clip, 0, 10, "clip");
  p.real("--dropout", dropout, 0, 1, "dropout (in [0, 1))");
  p.positive("--scale", scale, 1e300, "a scale");
  p.integer_list("--sizes", sizes, -1, INT64_MAX, "subsets");
  const std::string help = p.help();
  CHECK_THAT(help, Contains("transformer blocks (1 to 256)"));
  CHECK_THAT(help, Contains("the seed (at least 0)"));
  CHECK_THAT(help, Contains("stop after this step (-1 to 100)"));
  CHECK_THAT(help, Contains("learning rate (at least 0)"));
  CHECK_THAT(help, Contains("clip (in [0, 10])"));
  CHECK_THAT(help, Contains("dropout (in [0, 1))") && !Contains("dropout (in [0, 1)) ("));  // stated once
  CHECK_THAT(help, Contains("a scale (above 0)"));
  CHECK_THAT(help, Contains("subsets (each at least -1)"));
}

TEST_CASE("FlagParser alias: an older name sets the flag, is recorded under the flag's name, is in --help",
          "[cli]") {
  auto parse = [](const std::vector<std::string>& args) {
    auto p = std::make_unique<nl::FlagParser>("prog", "a program");
    auto arms = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"ln"});
    p->list("--arms", *arms, "the arms");
    p->alias("--arms", "--runs");
    REQUIRE(p->parse(args));
    return std::make_tuple(std::move(p), arms);
  };
  {
    auto [p, arms] = parse({"--runs", "a,b"});
    CHECK(*arms == std::vector<std::string>{"a", "b"});
    CHECK(p->given("--arms"));
    CHECK(p->values()["arms"] == "a,b");
    CHECK_FALSE(p->values().contains("runs"));
    CHECK_THAT(p->help(), Contains("(also --runs, its older name)"));
  }
  {
    auto [p, arms] = parse({"--runs=c", "--arms", "d"});  // the last one wins, whichever name it has
    CHECK(*arms == std::vector<std::string>{"d"});
  }
  {
    auto [p, arms] = parse({"--arms", "e"});
    CHECK(*arms == std::vector<std::string>{"e"});
  }
  {
    auto [p, arms] = parse({"--arms", "--runs"});  // a value that reads like the older name stays a value
    CHECK(*arms == std::vector<std::string>{"--runs"});
  }
  nl::FlagParser q("prog", "");
  std::vector<std::string> v;
  q.list("--arms", v, "");
  CHECK_THROWS_WITH(q.alias("--nope", "--runs"), Contains("internal: alias --runs for --nope"));
}

TEST_CASE("train_gpt cli: an unknown --norm names the valid ones", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--norm layernorm " + kTiny, f.out,
                      {"layernorm", "ln", "rms", "cbwc", "dyt", "bhyt", "bhyt-exact"}, f.tmp);
}

// the device is opened after the text is loaded: this one needs the real data
TEST_CASE("train_gpt cli: a bad --device is named; cuda without a GPU is refused", "[cli][needs-fortunes]") {
  if (!program_built(kTrainGpt)) return;
  REQUIRE_RESOURCE(missing_fortunes());
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--device tpu " + kTiny, f.out, {"--device", "tpu", "cpu", "cuda"}, f.tmp);
  // --overwrite: the run in f.out is not replaced by a run that is refused
  if (!nl::cuda_available())
    expect_refused_into(kTrainGpt, "--device cuda --overwrite " + kTiny, f.out, {"cuda", "no CUDA"}, f.tmp);
}

// refused at the flag, before the data (missing here) is looked for or a model built
TEST_CASE("train_gpt cli: --device cuda on a build without CUDA is refused at the flag", "[cli]") {
  if (!program_built(kTrainGpt) || nl::cuda_built()) return;
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--device cuda --overwrite --data /nonexistent/fortunes " + kTiny, f.out,
                      {"--device cuda", "this build has no CUDA", "make CUDA=1"}, f.tmp);
}

TEST_CASE("train_gpt cli: --dim not divisible by --heads", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--layers 1 --dim 30 --heads 4 --steps 1 --threads 1", f.out, {"30", "heads"}, f.tmp);
}

TEST_CASE("train_gpt cli: missing data names the folder; only the package's own folder says to install it", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  RunFolderWithLog f;
  // before: every missing --data said to install the package
  expect_refused_into(kTrainGpt, "--data /nonexistent/fortunes --steps 1 --overwrite " + kTiny, f.out,
                      {"--data /nonexistent/fortunes: no such folder"}, f.tmp);
  const RunResult r =
      run_program(kTrainGpt, "--data /nonexistent/fortunes --steps 1 " + kTiny + " --out " + f.out, f.tmp);
  CHECK_THAT(r.err, !Contains("apt-get"));
  fs::create_directories(f.tmp.sub("empty"));
  expect_refused_into(kTrainGpt, "--data " + f.tmp.sub("empty") + " --steps 1 --overwrite " + kTiny, f.out,
                      {"--data " + f.tmp.sub("empty") + ": no text files"}, f.tmp);
}

TEST_CASE("train_gpt cli: an unknown flag is named", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--steps 1 --bogus 3", f.out, {"--bogus"}, f.tmp);
  expect_refused_into(kTrainGpt, "--bogus=3 --steps 1", f.out, {"--bogus"}, f.tmp);
  expect_refused_into(kTrainGpt, "--steps 1 stray", f.out, {"stray"}, f.tmp);
  // an empty --flag= names its flag (before: "unexpected argument" naming the next flag's value)
  expect_refused_into(kTrainGpt, "--norm= --steps 1", f.out, {"--norm: unknown value ''"}, f.tmp);
  expect_refused_into(kTrainGpt, "--steps= --lr 0.1", f.out, {"--steps needs an integer, got ''"}, f.tmp);
}

TEST_CASE("train_gpt cli: malformed numbers and missing values are named", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--steps 12x", f.out, {"--steps", "12x"}, f.tmp);
  expect_refused_into(kTrainGpt, "--lr abc --steps 1", f.out, {"--lr", "abc"}, f.tmp);
  expect_refused_into(kTrainGpt, "--dim=", f.out, {"--dim"}, f.tmp);
  expect_refused_into(kTrainGpt, "--steps 1 --batch", f.out, {"--batch"}, f.tmp);  // the value is missing
  expect_refused_into(kTrainGpt, "--steps 0 " + kTiny, f.out, {"--steps"}, f.tmp);
  expect_refused_into(kTrainGpt, "--quiet=1 --steps 1", f.out, {"--quiet"}, f.tmp);  // a switch takes no value
}

TEST_CASE("train_gpt cli: --resume with a corrupt, truncated or mismatched checkpoint", "[cli][needs-fortunes]") {
  if (!program_built(kTrainGpt)) return;
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  // a good run to start from: two-step schedule stopped after one step
  const std::string good = tmp.sub("good");
  {
    RunResult r = run_train_gpt("--steps 2 --stop-after 1 " + kTiny + " --out " + good, tmp);
    INFO("stderr: " << r.err << "\nstdout: " << r.out);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK(fs::exists(good + "/config.json"));
    CHECK(fs::exists(good + "/log.csv"));
  }
  const std::string ckpt = read_bytes(good + "/checkpoint.safetensors");
  REQUIRE(ckpt.size() > 100);
  int copies = 0;
  auto copy = [&]() {
    const std::string d = tmp.sub("case" + std::to_string(copies++));
    fs::copy(good, d, fs::copy_options::recursive);
    return d;
  };
  const std::string resume = "--resume --steps 2 ";

  SECTION("truncated") {
    const std::string d = copy();
    write_bytes(d + "/checkpoint.safetensors", ckpt.substr(0, ckpt.size() / 2));
    expect_refused_into(kTrainGpt, resume + kTiny, d, {"checkpoint.safetensors"}, tmp);
  }
  SECTION("header garbage") {
    const std::string d = copy();
    std::string bytes = ckpt;
    for (size_t i = 8; i < 40; ++i) bytes[i] = '\x01';
    write_bytes(d + "/checkpoint.safetensors", bytes);
    expect_refused_into(kTrainGpt, resume + kTiny, d, {"checkpoint.safetensors"}, tmp);
  }
  SECTION("mismatched --dim") {
    const std::string d = copy();
    expect_refused_into(kTrainGpt, resume + kTiny + " --dim 24", d, {"checkpoint.safetensors", "16", "24"}, tmp);
  }
  SECTION("mismatched --norm, same shapes") {
    const std::string d = copy();
    expect_refused_into(kTrainGpt, resume + kTiny + " --norm cbwc", d, {"checkpoint.safetensors", "cbwc"}, tmp);
  }
  SECTION("mismatched --norm, other parameters") {
    const std::string d = copy();
    expect_refused_into(kTrainGpt, resume + kTiny + " --norm bhyt", d, {"checkpoint.safetensors", "norm", "bhyt"}, tmp);
  }
  SECTION("no checkpoint to resume from") {
    RunFolderWithLog f;
    expect_refused_into(kTrainGpt, resume + kTiny, f.out, {"checkpoint"}, tmp);
  }
  SECTION("the good one resumes, exit 0") {
    const std::string d = copy();
    RunResult r = run_train_gpt(resume + kTiny + " --out " + d, tmp);
    INFO("stderr: " << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("2 steps"));
    CHECK(fs::exists(d + "/sample.txt"));
  }
}

TEST_CASE("train_gpt cli: the regime options reject bad values in one line", "[cli]") {
  if (!program_built(kTrainGpt)) return;
  RunFolderWithLog f;
  expect_refused_into(kTrainGpt, "--mlp relu " + kTiny, f.out, {"relu", "gelu", "swiglu"}, f.tmp);
  expect_refused_into(kTrainGpt, "--emb-scale big " + kTiny, f.out, {"--emb-scale", "big"}, f.tmp);
  expect_refused_into(kTrainGpt, "--emb-scale -2 " + kTiny, f.out, {"--emb-scale"}, f.tmp);
  expect_refused_into(kTrainGpt, "--final-norm batch " + kTiny, f.out, {"batch"}, f.tmp);
  expect_refused_into(kTrainGpt, "--norm ln --screen-dyt --steps 4 --screen-steps 2 " + kTiny, f.out, {"dyt"}, f.tmp);
}

TEST_CASE("train_gpt --screen-dyt and screen_dyt stop at the screening step with the verdict",
          "[cli][needs-fortunes]") {
  if (!program_built(kTrainGpt)) return;
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string out = tmp.sub("out");
  RunResult r = run_train_gpt(
      "--norm dyt --emb-scale sqrt --mlp swiglu --screen-dyt --steps 4 --screen-steps 2 " + kTiny + " --out " + out,
      tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("screening at step 2") && Contains("verdict:") && Contains("weak evidence"));
  CHECK(fs::exists(out + "/checkpoint.safetensors"));
  // the screened run goes on to its end with --resume
  RunResult resumed =
      run_train_gpt("--norm dyt --emb-scale sqrt --mlp swiglu --steps 4 --resume " + kTiny + " --out " + out, tmp);
  CHECK(resumed.code == 0);
  CHECK_THAT(resumed.out, Contains("done: 4 steps"));

  const std::string screen = ::nl::test::build_dir() + "/screen_dyt";
  RunResult help = run_program(screen, "--help", tmp);
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Contains("0.43") && Contains("--screen-steps") && Contains("--emb-scale"));
  RunResult s = run_program(screen, "--steps 4 --screen-steps 2 " + kTiny + " --out " + tmp.sub("s"), tmp);
  INFO("screen_dyt stdout: " << s.out << "\nstderr: " << s.err);
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Contains("verdict:"));
  RunResult bad = run_program(screen, "--steps 4 --screen-steps 9 " + kTiny + " --out " + tmp.sub("b"), tmp);
  CHECK(bad.code == 2);
  CHECK(count_lines(bad.err) == 1);
  CHECK_THAT(bad.err, Contains("--steps 4"));
}
