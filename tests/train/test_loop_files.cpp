// Tests of the training loop's pieces (train/loop/): one LogRow that log.csv and the
// progress line both format; RunFiles, which reads a logged figure back by its column's
// name; the refusals of Resume that no other test reaches. The loop as a whole is tested
// by running it (test_resume.cpp, test_resume_recipe.cpp, test_extend.cpp,
// test_determinism.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tensor/error.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"
#include "train/loop/log_row.h"
#include "train/io/files.h"
#include "train/io/run_log.h"
#include "train/loop/result_record.h"
#include "train/loop/run_files.h"

using Catch::Contains;
using nl::test::TempDir;

namespace {

// A GPT-like log: no step columns, one evaluation column, two measurements.
nl::LogColumns gpt_columns() { return {{}, {"val_loss"}, "tok", {"rms_0", "rms_1"}}; }

// Values a float holds exactly, so that the expected text is known without the code.
nl::LogRow row_at(int64_t step) {
  nl::LogRow r;
  r.step = step;
  r.train_loss = 2.5f;
  r.lr = 0.0009765625f;  // 2^-10
  r.grad_norm = 0.75f;
  r.items_per_s = 1234.75;
  r.measurements = {0.125, 4};
  return r;
}

}  // namespace

TEST_CASE("loop: log.csv's header names the fixed columns and the task's, in the row's order", "[loop]") {
  CHECK(gpt_columns().header() == "step,train_loss,val_loss,lr,grad_norm,tok_per_s,rms_0,rms_1");
  const nl::LogColumns vit{{"epoch"}, {"val_loss", "val_acc"}, "img", {}};
  CHECK(vit.header() == "step,epoch,train_loss,val_loss,val_acc,lr,grad_norm,img_per_s");
}

TEST_CASE("loop: one LogRow gives log.csv's line and the progress line the same numbers", "[loop]") {
  const nl::LogColumns columns = gpt_columns();
  nl::LogRow r = row_at(40);
  // no evaluation at this step: its cell stays empty, and the speed is whole tokens
  CHECK(r.csv(columns) == "40,2.5,,0.0009765625,0.75,1234,0.125,4");
  CHECK(r.progress(columns, 100, "", "", 75) == "step    40/100  loss 2.5000  lr 9.77e-04     1235 tok/s  ETA 1:15");
  r.eval = {4.25};
  CHECK(r.csv(columns) == "40,2.5,4.25,0.0009765625,0.75,1234,0.125,4");
  CHECK(r.progress(columns, 100, "  epoch 0.50", "  val 4.2500", NAN) ==
        "step    40/100  epoch 0.50  loss 2.5000  val 4.2500  lr 9.77e-04     1235 tok/s  ETA ?");
  // enough digits to tell two runs apart in the ninth
  r.train_loss = 1.00000012f;  // the float after 1
  CHECK(r.csv(columns).rfind("40,1.00000012,", 0) == 0);
}

TEST_CASE("loop: RunFiles reads a logged figure back by its column's name", "[loop]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  {
    nl::RunFiles files(dir, true, false, false);
    files.start("{}", gpt_columns(), -1);
    files.log(row_at(1));
    nl::LogRow evaluated = row_at(2);
    evaluated.eval = {4.25};
    evaluated.train_loss = 2.25f;
    files.log(evaluated);
    files.flush_log();
    const std::optional<nl::LoggedRow> second = files.logged_row(2);
    REQUIRE(second);
    CHECK(second->figure("train_loss") == 2.25);
    CHECK(second->figure("val_loss") == 4.25);
    CHECK(second->figure("rms_1") == 4);
    CHECK(second->figure("tok_per_s") == 1234);
    CHECK(std::isnan(files.logged_row(1)->figure("val_loss")));  // not evaluated at step 1
    CHECK_FALSE(files.logged_row(3));                              // no row of that step
    CHECK_THROWS_WITH(second->figure("val_acc"), Contains(dir + "/log.csv") && Contains("no column 'val_acc'"));
    CHECK_FALSE(files.has_result());
    nl::ResultRecord result;
    result.steps = 2, result.final_train_loss = 2.25, result.seconds = 0.5;
    result.named[nl::kValLoss] = 4.25;
    files.write_result(result);
    CHECK(files.read_result().figure(nl::kValLoss) == 4.25);
  }
  // a resumed run keeps the rows up to its checkpoint's step and reads them back
  nl::RunFiles resumed(dir, true, true, false);
  resumed.start("{}", gpt_columns(), 1);
  resumed.flush_log();
  CHECK(resumed.logged_row(1)->figure("train_loss") == 2.5);
  CHECK_FALSE(resumed.logged_row(2));
}

TEST_CASE("read_log: a run's log read by its header's names; a missing column names it and the file", "[loop]") {
  TempDir tmp;
  const std::string log = tmp.sub("log.csv");
  // a ViT-like log, and a last row torn by a kill (no newline, fewer fields): left out
  nl::write_text_file(log, "step,epoch,train_loss,val_loss,val_acc\n1,0.5,5.5,,\n2,1,5.0,4.75,0.25\n3,1.5,4.5,,\n"
                           "4,2,4.0,4.25,0.5\n5,2.5,3.");
  const nl::LogTable t = nl::read_log(log);
  using Curve = std::vector<std::pair<int64_t, double>>;
  CHECK(t.size() == 4u);
  CHECK(t.column("val_loss") == Curve{{2, 4.75}, {4, 4.25}});
  CHECK(t.column("val_acc") == Curve{{2, 0.25}, {4, 0.5}});
  CHECK(t.column("train_loss") == Curve{{1, 5.5}, {2, 5.0}, {3, 4.5}, {4, 4.0}});
  CHECK(t.column_text("epoch").back() == std::pair<int64_t, std::string>{4, "2"});
  CHECK(std::isnan(t.figure(0, "val_loss")));  // not evaluated at step 1
  CHECK(t.figure(3, "val_acc") == 0.5);
  CHECK_THROWS_WITH(t.column("tok_per_s"), Contains(log) && Contains("no column 'tok_per_s'") &&
                                               Contains("step,epoch,train_loss"));
  CHECK_THROWS_WITH(nl::read_log(tmp.sub("none.csv")), Contains(tmp.sub("none.csv")));
}

TEST_CASE("result.json: one record for the writer and every reader; a field it lacks is named with the file",
          "[loop]") {
  TempDir tmp;
  nl::ResultRecord r;
  r.steps = 40, r.final_train_loss = NAN, r.seconds = 12.5, r.cpu_seconds = 20.25, r.diverged = true;
  r.skipped_steps = 2;
  r.named = {{nl::kValLoss, 3.5}, {nl::kValAcc, nullptr}, {"tok_per_s", 812}, {"confusion", {{1, 2}, {3, 4}}}};
  const nlohmann::json j = r;
  CHECK(j["final_train_loss"].is_null());  // not finite: null, as dump() writes it
  CHECK(j["steps"] == 40);
  CHECK(j[nl::kValLoss] == 3.5);
  const nl::ResultRecord back = j.get<nl::ResultRecord>();
  CHECK(nlohmann::json(back) == j);
  CHECK(back.seconds == 12.5);
  CHECK(back.skipped_steps == 2);
  CHECK(back.figure(nl::kValLoss) == 3.5);
  CHECK(std::isnan(back.figure(nl::kValAcc)));
  CHECK(back.named["confusion"][1][0] == 3);
  CHECK_FALSE(back.named.contains("steps"));  // the fixed fields are the record's own
  CHECK_THROWS_WITH(back.figure("test_loss"), "test_loss is missing");
  CHECK_THROWS_WITH(back.figure("confusion"), "confusion is an array, not a number or null");
  // a file lacking a field, or holding it with another type: named, with the file
  const std::string path = tmp.sub("result.json");
  nlohmann::json lacking = j;
  lacking.erase("seconds");
  nl::write_text_file(path, lacking.dump());
  CHECK_THROWS_WITH(nl::read_result_record(path), path + ": seconds is missing");
  nlohmann::json retyped = j;
  retyped["steps"] = "40";
  nl::write_text_file(path, retyped.dump());
  CHECK_THROWS_WITH(nl::read_result_record(path), path + ": steps is a string, not an integer");
  // written before --on-nonfinite skip and the CPU time were recorded: their defaults
  nlohmann::json older = j;
  older.erase("skipped_steps"), older.erase("cpu_seconds");
  CHECK(nl::result_record_of(older, "old").skipped_steps == 0);
  CHECK(std::isnan(nl::result_record_of(older, "old").cpu_seconds));
  CHECK_THROWS_WITH(nl::result_record_of(older, "runs/x/result.json").figure("test_loss"),
                    "runs/x/result.json: test_loss is missing");
}

TEST_CASE("loop: RunFiles refuses another run's folder before writing, and a rank that is not the lead writes nothing",
          "[loop]") {
  TempDir tmp;
  const std::string dir = tmp.sub("run");
  {
    nl::RunFiles files(dir, true, false, false);
    files.start("{}", gpt_columns(), -1);
  }
  CHECK_THROWS_WITH(nl::RunFiles(dir, true, false, false), Contains(dir) && Contains("--overwrite"));
  const std::string other = tmp.sub("other");
  nl::RunFiles follower(other, false, false, false);
  follower.start("{}", gpt_columns(), -1);
  follower.log(row_at(1));
  follower.write_result(nl::ResultRecord{});
  CHECK_FALSE(std::filesystem::exists(other));
}

TEST_CASE("loop: Resume refuses a checkpoint that records no config, or a config that is not JSON", "[loop][cli]") {
  nl::test::FakeGptRun f;
  const std::string run = f.train("run", "--stop-after 2");
  const std::string ckpt = run + "/checkpoint.safetensors";
  nl::test::resign(ckpt, [](nl::SafetensorsFile& file) { file.metadata["config"] = "{\"steps\": 4,"; });
  nl::test::expect_refused(nl::test::kTrainGpt, f.tiny + " --resume --out " + run, run,
                           {"--resume: the config recorded in " + ckpt, "is not valid JSON"}, f.tmp);
  nl::test::resign(ckpt, [](nl::SafetensorsFile& file) { file.metadata.erase("config"); });
  nl::test::expect_refused(nl::test::kTrainGpt, f.tiny + " --resume --out " + run, run,
                           {"--resume: checkpoint " + ckpt, "records no config"}, f.tmp);
}
