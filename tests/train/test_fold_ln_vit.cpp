// Tests of fold_ln (apps/fold_ln.cpp) on ViT checkpoints that run_vit writes, on the
// real Fashion-MNIST ([needs-fashion-mnist]: skipped where the package is missing): the
// folded checkpoint predicts the same class as the ln model for every one of the 10 000
// test images, and train_vit resumed from it continues the ln run's losses.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // kFoldLn
#include "tests/train/run_logs.h"
#include "train/vit/vit_run.h"

using namespace nl;
using namespace nl::test;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// A 2-layer ViT that trains 40 steps in about a second on one thread.
ViTRunConfig tiny_vit(const std::string& out_dir, const std::string& norm) {
  ViTRunConfig c;
  c.model.norm.name = norm;
  c.model.layers = 2;
  c.model.dim = 32;
  c.model.heads = 2;
  c.batch = 64;
  c.steps = 40;
  c.warmup = 5;
  c.eval_every = 20;
  c.threads = 1;
  c.out_dir = out_dir;
  c.quiet = true;
  return c;
}

}  // namespace

TEST_CASE("fold_ln: an ln ViT folds into a cbwc one predicting the same class on the whole test set",
          "[fold][vit][needs-fashion-mnist]") {
  REQUIRE(fs::exists(kFoldLn));
  REQUIRE_RESOURCE(missing_fashion_mnist());
  TempDir tmp;
  ViTRunConfig ln = tiny_vit(tmp.sub("ln"), "ln");
  ln.stop_after = 20;
  run_vit(ln);
  const RunResult r = run_program(kFoldLn, "--threads 1 --in " + tmp.sub("ln") + " --out " + tmp.sub("cbwc"), tmp);
  INFO("exit " << r.code << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("5 foldable (0 as is, 5 if centred), 0 not foldable"));
  CHECK_THAT(r.out, Contains("centre pos_embed along axis 1"));
  CHECK_THAT(r.out, Contains("predicted classes identical for 10000 of 10000"));
  CHECK_THAT(r.out, Contains("wrote " + tmp.sub("cbwc/checkpoint.safetensors") + " (cbwc, step 20)"));

  // both continue from step 20 to 40: the cbwc run takes the ln run's steps
  ln.stop_after = -1;
  ln.resume = true;
  run_vit(ln);
  ViTRunConfig cbwc = tiny_vit(tmp.sub("cbwc"), "cbwc");
  cbwc.resume = true;
  run_vit(cbwc);
  // steps 21-40 of the cbwc run against the ln run's
  check_same_column(tmp.sub("ln/log.csv"), tmp.sub("cbwc/log.csv"), "train_loss", 20, 1e-4);
}

TEST_CASE("fold_ln: a ViT checkpoint of another norm exits 2 with one line and writes nothing",
          "[fold][vit][needs-fashion-mnist]") {
  REQUIRE(fs::exists(kFoldLn));
  REQUIRE_RESOURCE(missing_fashion_mnist());
  TempDir tmp;
  ViTRunConfig rms = tiny_vit(tmp.sub("rms"), "rms");
  rms.steps = 2;
  run_vit(rms);
  const RunResult r = run_program(kFoldLn, "--in " + tmp.sub("rms") + " --out " + tmp.sub("out"), tmp);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("'rms' model"));
  CHECK(count_lines(r.err) == 1);
  CHECK(!fs::exists(tmp.sub("out")));
}
