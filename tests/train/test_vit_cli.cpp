// Tests of the train_vit command line (apps/train_vit.cpp), run as a program on a
// small Fashion-MNIST look-alike that the test writes (so they need neither the package
// nor more than a fraction of a second per run): bad input prints one line on stderr
// and exits with code 2 leaving --out as it was; --help lists the flags; a tiny run
// writes its files; a resumed run continues exactly.
#include <catch2/catch.hpp>

#include "tests/needs.h"  // program_built
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // expect_refused
#include "tests/fake_fashion_mnist.h"

#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using Catch::Contains;
namespace fs = std::filesystem;

using namespace nl::test;

namespace {

const std::string kCompare = ::nl::test::build_dir() + "/compare_vit";

RunResult run_vit_program(const std::string& args, const TempDir& scratch, const std::string& program = kTrainVit) {
  return run_program(program, args, scratch);
}

}  // namespace

TEST_CASE("train_vit cli --help exits 0 and lists the flags", "[vit]") {
  if (!program_built(kTrainVit)) return;
  TempDir tmp;
  const std::string help = help_text(kTrainVit, tmp);
  for (const char* flag : {"--norm", "--layers", "--dim", "--heads", "--patch", "--batch", "--steps", "--epochs",
                           "--lr", "--min-lr", "--warmup", "--wd", "--clip", "--seed", "--eval-every", "--threads",
                           "--out", "--resume", "--quiet", "--crop-pad", "--flip", "--val-size", "--data"})
    CHECK_THAT(help, Contains(flag));
  CHECK_THAT(help, Contains("cbwc") && Contains("dyt") && Contains("bhyt"));
  const std::string out = tmp.sub("out");
  RunResult r2 = run_vit_program("--out " + out + " --steps 3 --help", tmp);
  CHECK(r2.code == 0);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("train_vit cli: bad flags, norms and shapes are one-line errors that touch nothing", "[vit]") {
  if (!program_built(kTrainVit)) return;
  FakeVitRun f;
  expect_refused_into(kTrainVit, "--norm layernorm --steps 1 " + f.tiny, f.out,
                      {"layernorm", "ln", "rms", "cbwc", "dyt", "bhyt"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --dim 30 --heads 4", f.out, {"30", "heads"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --patch 5", f.out, {"--patch 5", "28"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1 --bogus 3", f.out, {"--bogus"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1x", f.out, {"--steps", "1x"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps -1 " + f.tiny, f.out, {"--steps"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 0 --epochs 0 " + f.tiny, f.out, {"--steps", "--epochs"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --lr -1", f.out, {"--lr"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --crop-pad 30", f.out, {"--crop-pad"}, f.tmp);
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --epochs -2", f.out, {"--epochs"}, f.tmp);
  expect_refused_into(kTrainVit, "--flip=1 --steps 1", f.out, {"--flip"}, f.tmp);
}

TEST_CASE("train_vit cli: missing or broken data, and a validation split too large", "[vit]") {
  if (!program_built(kTrainVit)) return;
  FakeVitRun f;
  f.tiny += " --overwrite";  // the run in f.out is not replaced by a run that is refused
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --data /nonexistent/fmnist", f.out,
                      {"/nonexistent/fmnist/train-images-idx3-ubyte.gz", "apt-get install dataset-fashion-mnist"},
                      f.tmp);
  // the split is checked against the data: 200 training images
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny + " --val-size 200", f.out, {"--val-size", "199"}, f.tmp);
  // a truncated label file
  const std::string labels = f.data + "/t10k-labels-idx1-ubyte.gz";
  const std::string good = read_bytes(labels);
  write_bytes(labels, good.substr(0, good.size() - 12));
  expect_refused_into(kTrainVit, "--steps 1 " + f.tiny, f.out,
                      {"t10k-labels-idx1-ubyte.gz", "apt-get install dataset-fashion-mnist"}, f.tmp);
}

TEST_CASE("train_vit cli: a tiny run writes config, log, checkpoint, confusion matrix and result", "[vit]") {
  if (!program_built(kTrainVit)) return;
  FakeVitRun f;
  const std::string out = f.tmp.sub("run");
  RunResult r = run_vit_program("--steps 4 " + f.tiny + " --out " + out, f.tmp);
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Contains("test acc"));
  for (const char* file : {"config.json", "log.csv", "checkpoint.safetensors", "confusion.csv", "result.json"})
    CHECK(fs::exists(out + "/" + file));
  CHECK_THAT(read_bytes(out + "/config.json"), Contains("\"patch\": 7") && Contains("\"val_size\": 40"));

  auto log = read_csv_rows(out + "/log.csv");
  REQUIRE(log.size() == 5);  // header + 4 steps
  CHECK(log[0] == std::vector<std::string>({"step", "epoch", "train_loss", "val_loss", "val_acc", "lr", "grad_norm",
                                            "img_per_s", "rms_0", "rms_1"}));
  // validation at steps 2 and 4 only; epoch = step * 8 / 160 training images
  CHECK(log[1][3].empty());
  CHECK_FALSE(log[2][3].empty());
  CHECK(std::stod(log[4][1]) == Approx(4 * 8 / 160.0));
  // a fresh model's zero head: the first loss is ln 10
  CHECK(std::stod(log[1][2]) == Approx(std::log(10.0)).epsilon(1e-5));

  auto cm = read_csv_rows(out + "/confusion.csv");
  REQUIRE(cm.size() == 11);
  CHECK(cm[0] == std::vector<std::string>({"true\\predicted", "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}));
  int64_t total = 0;
  for (int t = 1; t <= 10; ++t) {
    REQUIRE(cm[t].size() == 11);
    CHECK(cm[t][0] == cm[0][t]);
    int64_t row = 0;
    for (int p = 1; p <= 10; ++p) row += std::stoll(cm[t][p]);
    CHECK(row == 3);  // 30 test images, labels i % 10
    total += row;
  }
  CHECK(total == 30);
}

// the GPT's --final-norm and activation statistics, through the same observer
TEST_CASE("train_vit cli: --final-norm builds ln_f of that kind; act_stats.csv at steps 0, K and the end", "[vit]") {
  if (!program_built(kTrainVit)) return;
  FakeVitRun f;
  const std::string out = f.tmp.sub("run");
  RunResult r =
      run_vit_program("--steps 5 --norm dyt --final-norm rms --act-stats-every 2 " + f.tiny + " --out " + out, f.tmp);
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(read_bytes(out + "/config.json"), Contains("\"final_norm\": \"rms\""));
  const auto rows = read_csv_rows(out + "/act_stats.csv");
  REQUIRE(rows.size() > 1);
  CHECK(rows[0][2] == "site");
  std::map<std::string, int> at_step;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i][1] == "1" && rows[i][2] == "ln_f") {  // the last layer's ln_f: an RMSNorm, no saturation
      at_step[rows[i][0]] += 1;
      CHECK(rows[i][7].empty());
    }
    if (rows[i][2] == "ln1") CHECK_FALSE(rows[i][7].empty());  // dyt's tanh
  }
  CHECK(at_step == std::map<std::string, int>{{"0", 1}, {"2", 1}, {"4", 1}, {"5", 1}});
  expect_refused_into(kTrainVit, "--final-norm batch " + f.tiny, f.out, {"batch"}, f.tmp);
}

TEST_CASE("train_vit cli: --epochs sets the schedule's length in whole steps; --steps overrides it", "[vit]") {
  if (!program_built(kTrainVit)) return;
  FakeVitRun f;
  // 160 training images, batch 8: 0.3 epochs = 6 steps, 0.31 epochs = 6.2, rounded up to 7
  for (const auto& [flags, steps] : std::vector<std::pair<std::string, size_t>>{
           {"--epochs 0.3", 6}, {"--epochs 0.31", 7}, {"--epochs 5 --steps 3", 3}}) {
    const std::string out = f.tmp.sub("epochs" + std::to_string(steps));
    RunResult r = run_vit_program(flags + " " + f.tiny + " --out " + out, f.tmp);
    INFO(flags << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(read_csv_rows(out + "/log.csv").size() == steps + 1);
    CHECK_THAT(r.out, Contains("done: " + std::to_string(steps) + " steps"));
  }
}

TEST_CASE("train_vit cli: stopping and resuming gives the same run as going straight", "[vit]") {
  if (!program_built(kTrainVit)) return;
  FakeVitRun f;
  const std::string straight = f.tmp.sub("straight"), split = f.tmp.sub("split");
  const std::string common = "--steps 6 --crop-pad 2 --flip " + f.tiny;
  REQUIRE(run_vit_program(common + " --out " + straight, f.tmp).code == 0);
  RunResult a = run_vit_program(common + " --stop-after 3 --out " + split, f.tmp);
  REQUIRE(a.code == 0);
  CHECK_THAT(a.out, Contains("stopped after 3 of 6"));
  CHECK_FALSE(fs::exists(split + "/confusion.csv"));

  SECTION("a changed --batch or --seed is caught as another recipe") {
    expect_refused_into(kTrainVit, common + " --resume --batch 4", split,
                        {"another recipe", "--batch 8 in the checkpoint, 4"}, f.tmp);
    expect_refused_into(kTrainVit, common + " --resume --seed 5", split,
                        {"another recipe", "--seed 1337 in the checkpoint, 5"}, f.tmp);
  }
  SECTION("another model is named") {
    expect_refused_into(kTrainVit, common + " --resume --dim 24", split, {"checkpoint.safetensors", "24"}, f.tmp);
  }
  SECTION("the resumed run matches, loss for loss") {
    RunResult b = run_vit_program(common + " --resume --out " + split, f.tmp);
    INFO("stderr: " << b.err);
    REQUIRE(b.code == 0);
    auto l1 = read_csv_rows(straight + "/log.csv"), l2 = read_csv_rows(split + "/log.csv");
    REQUIRE(l1.size() == 7);
    REQUIRE(l2.size() == 7);
    for (size_t i = 1; i < l1.size(); ++i) {
      INFO("step " << i);
      for (int col : {0, 1, 2, 5, 6}) CHECK(l1[i][col] == l2[i][col]);  // not img_per_s
      // the stopped run also validated at its last step, 3
      if (i != 3)
        for (int col : {3, 4}) CHECK(l1[i][col] == l2[i][col]);
    }
    CHECK(read_bytes(straight + "/confusion.csv") == read_bytes(split + "/confusion.csv"));
  }
}

TEST_CASE("compare_vit: a bad norm in the list stops it before any run; a tiny comparison", "[vit]") {
  if (!program_built(kTrainVit)) return;
  if (!fs::exists(kCompare)) {
    FAIL_CHECK(kCompare << " is not built (make " << kCompare << ")");
    return;
  }
  FakeVitRun f;
  const std::string out = f.tmp.sub("cmp");
  const std::string flags = "--data " + f.data + " --val-size 40 --layers 1 --dim 16 --heads 2 --batch 8 --steps 4 "
                            "--eval-every 2 --out " + out;
  RunResult bad = run_vit_program("--norms ln,rms,layernorm " + flags, f.tmp, kCompare);
  CHECK(bad.code == 2);
  CHECK(count_lines(bad.err) == 1);
  CHECK_THAT(bad.err, Contains("layernorm"));
  CHECK_FALSE(fs::exists(out));

  // --dry-run prices both runs at once and trains nothing: 2 x 4 steps at 1.5 s a step over
  // two cores (or one run at a time on one core) is 6 s or 12 s
  RunResult dry = run_vit_program("--norms ln,dyt --dry-run --step-ms 1500 " + flags, f.tmp, kCompare);
  INFO("dry run: " << dry.out << dry.err);
  CHECK(dry.code == 0);
  CHECK_THAT(dry.out, Contains("compare_vit: 2 runs in " + out + ", 0 finished already") &&
                          Contains("at 2 at a time (1500 ms a step"));
  CHECK_FALSE(fs::exists(out));

  RunResult r = run_vit_program("--norms ln,dyt " + flags, f.tmp, kCompare);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  auto summary = read_csv_rows(out + "/summary.csv");
  REQUIRE(summary.size() == 3);
  CHECK(summary[0][0] == "norm");
  CHECK(summary[1][0] == "ln");
  CHECK(summary[2][0] == "dyt");
  // each run is an ordinary train_vit run with its own files
  for (const char* n : {"ln", "dyt"}) CHECK(fs::exists(out + "/" + n + "/confusion.csv"));
  // the validation curves: header, then steps 2 and 4
  auto curves = read_csv_rows(out + "/val_acc.csv");
  REQUIRE(curves.size() == 3);
  CHECK(curves[0] == std::vector<std::string>({"step", "ln", "dyt"}));
  CHECK(curves[1][0] == "2");
  CHECK(curves[2][0] == "4");
  // the table's accuracies are the runs' own
  const std::string res = read_bytes(out + "/ln/result.json");
  const std::string acc = summary[1][1];
  CHECK_THAT(res, Contains("\"test_accuracy\": " + acc));
}
