// The bad-input table of train_gpt and train_vit, run as programs: every numeric flag
// with a wrong type, a negative or zero value and out-of-range values; string flags
// with unknown values; missing and unreadable data; checkpoints that are truncated,
// carry a bad header length or bad JSON, wrong dtypes or shapes, overlapping or
// out-of-bounds offsets, NaN weights, or come from another model. Each case must give
// exactly one line on stderr naming the problem, exit code 2, and leave every file in
// --out as it was. Values that are valid on purpose (a zero warmup, seed 0, ...) are
// listed in kAccepted and must train.
#include <catch2/catch.hpp>

#include "tests/fake_fashion_mnist.h"
#include "tests/needs.h"
#include "tests/test_files.h"
#include "tests/train/run_fixtures.h"  // kTrainGpt, kTrainVit

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

struct Case {
  std::string flags;    // the bad part of the command line
  std::string needle;   // the error line must contain it (the flag, the file, the value)
};

// Flags whose value is a number: each value here is wrong for each of them.
const std::vector<std::string> kNotANumber = {"abc", "", "12x", "0x", "--"};

// flag -> values it must refuse (negative, zero, out of range, non-finite); shared by
// both programs where they share the flag
const std::vector<std::pair<std::string, std::vector<std::string>>> kGptRanges = {
    {"--layers", {"-1", "0", "1.5", "257", "3000000000", "99999999999999999999"}},
    {"--dim", {"-16", "0", "15", "16385", "3000000000"}},  // 15: not divisible by --heads 2
    {"--heads", {"-2", "0", "3", "17"}},
    {"--seq", {"-8", "0", "65537", "3000000000"}},
    {"--batch", {"-2", "0", "1048577", "3000000000"}},
    {"--steps", {"-1", "0", "1000000001", "99999999999999999999"}},
    {"--lr", {"-1e-3", "0", "nan", "inf", "1e36"}},
    {"--min-lr", {"-1", "0.01", "nan"}},  // 0.01 > --lr 1e-3
    {"--warmup", {"-1", "1000000001"}},
    {"--wd", {"-0.1", "nan", "inf", "1e7"}},
    {"--clip", {"-1", "nan", "inf"}},
    {"--seed", {"-1", "1.5", "99999999999999999999"}},
    {"--eval-every", {"-1", "0"}},
    {"--eval-batches", {"-1", "0", "1000001"}},
    {"--train-bytes", {"-2", "0", "8"}},  // must exceed --seq 8
    {"--threads", {"-1", "0", "1025", "4294967297"}},
    {"--dyt-alpha0", {"nan", "inf", "1e7"}},
    {"--bhyt-lambda", {"nan", "-inf", "1e7"}},
    {"--bhyt-lambda-attn", {"nan", "1e7"}},
    {"--bhyt-lambda-mlp", {"nan", "1e7"}},
    {"--bhyt-p", {"-0.5", "0", "1", "1.5", "nan"}},
    {"--bhyt-refresh", {"-1", "0", "1000000001"}},
    {"--act-stats-every", {"-1", "1000000001"}},
    {"--dropout", {"-0.1", "1", "nan"}},
    {"--stop-after", {"-2", "1000000001"}},
    {"--checkpoint-every", {"-1"}},
    {"--keep-checkpoints", {"-1", "0", "1001"}},
};

const std::vector<std::pair<std::string, std::vector<std::string>>> kVitRanges = {
    {"--layers", {"-1", "0", "257"}},
    {"--dim", {"-16", "0", "15", "16385"}},
    {"--heads", {"-2", "0", "3"}},
    {"--patch", {"-7", "0", "5", "29"}},  // must divide 28
    {"--batch", {"-8", "0", "1048577"}},
    {"--epochs", {"-1", "nan", "inf", "1e7"}},
    {"--steps", {"-1", "1000000001"}},
    {"--lr", {"-1", "0", "nan", "1e36"}},
    {"--min-lr", {"-1", "1", "nan"}},  // 1 > --lr 3e-3
    {"--warmup", {"-1"}},
    {"--wd", {"-1", "inf"}},
    {"--clip", {"-1", "nan"}},
    {"--seed", {"-1", "1.5"}},
    {"--split-seed", {"-1", "1.5"}},
    {"--val-size", {"-1", "0", "200", "1000000"}},  // 200: the whole training set
    {"--crop-pad", {"-1", "9", "4294967297"}},
    {"--eval-every", {"-1", "0"}},
    {"--eval-batch", {"-1", "0", "1048577"}},
    {"--threads", {"-1", "0", "1025"}},
    {"--dyt-alpha0", {"nan", "1e7"}},
    {"--bhyt-lambda", {"inf"}},
    {"--bhyt-p", {"0", "1", "nan"}},
    {"--stop-after", {"-2"}},
    {"--checkpoint-every", {"-1"}},
    {"--keep-checkpoints", {"0", "1001"}},
};

// Valid on purpose: these must train (exit 0).
const std::vector<std::string> kGptAccepted = {
    "--warmup 0", "--wd 0", "--clip 0", "--seed 0", "--train-bytes -1", "--dyt-alpha0 0 --norm dyt",
    "--bhyt-lambda -1 --norm bhyt", "--act-stats-every 0", "--dropout 0", "--stop-after 0", "--stop-after -1",
    "--checkpoint-every 0", "--min-lr 0", "--on-nonfinite skip"};
const std::vector<std::string> kVitAccepted = {"--warmup 0", "--seed 0", "--crop-pad 0", "--stop-after 0",
                                               "--epochs 0.5 --steps 0", "--clip 0"};

// A bad invocation: exit code 2, one line on stderr holding the needle, and every
// file in out_dir unchanged, nothing added.
void expect_bad_input_refused(const std::string& program, const std::string& args, const std::string& out_dir,
                              const std::string& needle, const TempDir& scratch) {
  const auto before = snapshot(out_dir);
  RunResult r = run_program(program, "--out " + out_dir + " " + args, scratch);  // a later --out wins
  INFO(fs::path(program).filename().string() << " " << args << "\nexit " << r.code << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains(needle));
  CHECK(snapshot(out_dir) == before);
}

bool built() {
  for (const auto& p : {kTrainGpt, kTrainVit})
    if (!fs::exists(p)) {
      FAIL_CHECK(p << " is not built");
      return false;
    }
  return true;
}

const std::string kGptTiny =
    "--layers 1 --dim 16 --heads 2 --seq 8 --batch 2 --steps 2 --eval-every 1 --eval-batches 1 --threads 1 --quiet "
    "--act-stats-every 1";

// The tiny ViT on fake data, two steps.
struct VitFixture : FakeVitRun {
  VitFixture() { tiny += " --steps 2"; }
};

// Runs every (flag, value) of the table and every non-number for each flag.
void run_table(const std::string& program, const std::string& base,
               const std::vector<std::pair<std::string, std::vector<std::string>>>& table, const std::string& out,
               const TempDir& tmp) {
  for (const auto& [flag, values] : table) {
    for (const auto& v : values) expect_bad_input_refused(program, base + " " + flag + "=" + v, out, flag, tmp);
    for (const auto& v : kNotANumber) expect_bad_input_refused(program, base + " " + flag + "=" + v, out, flag, tmp);
  }
}

}  // namespace

// --out under a file is found after the text is loaded: this one needs the real data
TEST_CASE("bad input: train_gpt refuses every wrong, negative, zero or out-of-range flag value",
          "[badinput][cli][needs-fortunes]") {
  if (!built()) return;
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string out = tmp.sub("out");
  fs::create_directories(out);
  write_bytes(out + "/log.csv", "step,train_loss\n1,9.99\n");
  // --overwrite: a refused run deletes nothing of the run it was to replace
  const std::string base = kGptTiny + " --overwrite";
  run_table(kTrainGpt, base, kGptRanges, out, tmp);
  for (const Case& c : std::vector<Case>{{"--norm layernorm", "layernorm"},
                                         {"--norm ''", "norm"},
                                         {"--block post", "post"},
                                         {"--on-nonfinite ignore", "--on-nonfinite"},
                                         {"--bogus 1", "--bogus"},
                                         {"stray", "stray"},
                                         {"--steps", "--steps"},  // no value
                                         {"--quiet=1", "--quiet"},
                                         {"--resume=yes", "--resume"},
                                         {"--data /nonexistent/fortunes", "/nonexistent/fortunes"},
                                         {"--data /etc/hostname", "/etc/hostname"},  // a file, not a folder
                                         {"--data " + tmp.sub("empty_dir"), "empty_dir"},
                                         {"--out /etc/hostname/run", "/etc/hostname"}})
    expect_bad_input_refused(kTrainGpt, base + " " + c.flags, out, c.needle, tmp);
}

TEST_CASE("bad input: train_vit refuses every wrong, negative, zero or out-of-range flag value", "[badinput][cli]") {
  if (!built()) return;
  VitFixture f;
  const std::string base = f.tiny + " --overwrite";  // the run in f.out must survive every refusal
  run_table(kTrainVit, base, kVitRanges, f.out, f.tmp);
  for (const Case& c : std::vector<Case>{{"--norm batchnorm", "batchnorm"},
                                         {"--on-nonfinite maybe", "--on-nonfinite"},
                                         {"--flip=1", "--flip"},
                                         {"--bogus", "--bogus"},
                                         {"--data /nonexistent/fmnist", "/nonexistent/fmnist"}})
    expect_bad_input_refused(kTrainVit, base + " " + c.flags, f.out, c.needle, f.tmp);
}

TEST_CASE("bad input: the values valid on purpose train (exit 0)", "[badinput][cli][needs-fortunes]") {
  if (!built()) return;
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  int n = 0;
  for (const auto& flags : kGptAccepted) {
    RunResult r = run_program(kTrainGpt, kGptTiny + " " + flags + " --out " + tmp.sub("ok" + std::to_string(n++)), tmp);
    INFO("train_gpt " << flags << "\nstderr: " << r.err);
    CHECK(r.code == 0);
  }
  VitFixture f;
  for (const auto& flags : kVitAccepted) {
    RunResult r =
        run_program(kTrainVit, f.tiny + " " + flags + " --out " + f.tmp.sub("ok" + std::to_string(n++)), f.tmp);
    INFO("train_vit " << flags << "\nstderr: " << r.err);
    CHECK(r.code == 0);
  }
}

TEST_CASE("bad input: missing, unreadable and corrupt Fashion-MNIST files", "[badinput][cli]") {
  if (!built()) return;
  VitFixture f;
  const std::string images = f.data + "/train-images-idx3-ubyte.gz";
  const std::string good = read_bytes(images);
  const std::string base = f.tiny + " --overwrite";  // the run in f.out must survive every refusal
  auto with_images = [&](const std::string& bytes, const std::string& needle) {
    write_bytes(images, bytes);
    expect_bad_input_refused(kTrainVit, base, f.out, needle, f.tmp);
  };
  with_images("", "train-images-idx3-ubyte.gz");                     // empty
  with_images(good.substr(0, good.size() / 2), "truncated");          // gzip stream cut short
  with_images("not gzip, not IDX", "train-images-idx3-ubyte.gz");     // plain garbage
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x55;                                   // corrupt deflate data
  with_images(flipped, "train-images-idx3-ubyte.gz");
  fs::remove(images);
  expect_bad_input_refused(kTrainVit, base, f.out, "train-images-idx3-ubyte.gz", f.tmp);  // missing
  fs::create_directory(images);                                     // a folder in its place
  expect_bad_input_refused(kTrainVit, base, f.out, "train-images-idx3-ubyte.gz", f.tmp);
}

namespace {

// The header of a safetensors file (after the 8-byte length) and its data.
struct Split {
  std::string header, data;
};
Split split(const std::string& file) {
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = n << 8 | (uint8_t)file[k];
  return {file.substr(8, n), file.substr(8 + n)};
}
std::string join(const std::string& header, const std::string& data) {
  std::string out;
  for (int k = 0; k < 8; ++k) out += (char)(((uint64_t)header.size() >> (8 * k)) & 0xFF);
  return out + header + data;
}
// The file with the first `from` in its header replaced by `to`.
std::string edit_header(const std::string& file, const std::string& from, const std::string& to) {
  Split s = split(file);
  const size_t at = s.header.find(from);
  REQUIRE(at != std::string::npos);
  return join(s.header.substr(0, at) + to + s.header.substr(at + from.size()), s.data);
}

}  // namespace

TEST_CASE("bad input: every kind of corrupt or foreign checkpoint is refused by --resume",
          "[badinput][cli][needs-fortunes]") {
  if (!built()) return;
  REQUIRE_RESOURCE(missing_fortunes());
  TempDir tmp;
  const std::string good_dir = tmp.sub("good");
  RunResult r = run_program(kTrainGpt, kGptTiny + " --stop-after 1 --out " + good_dir, tmp);
  REQUIRE(r.code == 0);
  const std::string good = read_bytes(good_dir + "/checkpoint.safetensors");
  REQUIRE(split(good).header.find("\"shape\":[64,16]") != std::string::npos);  // the edits below need these
  std::string nan_weights = good;
  for (size_t i = nan_weights.size() - 64; i < nan_weights.size(); ++i) nan_weights[i] = (char)0xFF;  // NaN bits
  std::string long_header = good;
  long_header[0] = (char)((uint8_t)long_header[0] + 5);  // the header swallows 5 data bytes

  const std::vector<Case> files = {
      {good.substr(0, good.size() / 2), "run past the end"},
      {good.substr(0, 5), "shorter than the 8-byte header length"},
      {"", "shorter than the 8-byte header length"},
      {join("{\"a\":1}", "") + std::string(8, '\xff'), "checkpoint.safetensors"},
      {std::string(8, '\x7f') + good.substr(8), "header length"},
      {long_header, "invalid JSON header"},
      {edit_header(good, "\"__metadata__\":{", "\"__metadata__\":{{"), "invalid JSON header"},
      {edit_header(good, "\"dtype\":\"F32\"", "\"dtype\":\"F16\""), "unsupported dtype \"F16\""},
      {edit_header(good, "\"ln_f.weight\":{\"dtype\":\"F32\"", "\"ln_f.weight\":{\"dtype\":\"I32\""), "ln_f.weight"},
      {edit_header(good, "\"shape\":[64,16]", "\"shape\":[32,32]"), "blocks.0.mlp.fc.weight"},
      {edit_header(good, "\"shape\":[64,16]", "\"shape\":[64,17]"), "need"},
      {edit_header(good, "\"data_offsets\":[9024,13120]", "\"data_offsets\":[9020,13116]"), "overlap"},
      {edit_header(good, "\"data_offsets\":[74048,90432]", "\"data_offsets\":[4074048,4090432]"), "past the end"},
      {edit_header(good, "\"ln_f.bias\"", "\"ln_f.bias2\""), "ln_f.bias"},
      // caught by the metadata's checksum (test_checkpoint_integrity.cpp re-signs such edits)
      {edit_header(good, "\"step\":\"1\"", "\"step\":\"-1\""), "does not match its checksum"},
      {edit_header(good, "\"format\":\"normlab-checkpoint-2\"", "\"format\":\"other\""), "unknown format"},
      {nan_weights, "does not match its checksum"},
  };
  int n = 0;
  for (const Case& c : files) {
    const std::string dir = tmp.sub("case" + std::to_string(n++));
    fs::copy(good_dir, dir, fs::copy_options::recursive);
    write_bytes(dir + "/checkpoint.safetensors", c.flags);
    INFO("case " << n - 1 << ", expecting '" << c.needle << "'");
    expect_bad_input_refused(kTrainGpt, kGptTiny + " --resume", dir, "checkpoint.safetensors", tmp);
    expect_bad_input_refused(kTrainGpt, kGptTiny + " --resume", dir, c.needle, tmp);
  }
  // another model: another width, another norm, and a ViT's checkpoint
  expect_bad_input_refused(kTrainGpt, kGptTiny + " --resume --dim 32 --heads 2", good_dir, "written for the model",
                           tmp);
  expect_bad_input_refused(kTrainGpt, kGptTiny + " --resume --norm rms", good_dir, "written for the model", tmp);
  VitFixture f;
  REQUIRE(run_program(kTrainVit, f.tiny + " --stop-after 1 --out " + f.tmp.sub("vit"), f.tmp).code == 0);
  const std::string foreign = tmp.sub("foreign");
  fs::copy(good_dir, foreign, fs::copy_options::recursive);
  fs::copy_file(f.tmp.sub("vit") + "/checkpoint.safetensors", foreign + "/checkpoint.safetensors",
                fs::copy_options::overwrite_existing);
  expect_bad_input_refused(kTrainGpt, kGptTiny + " --resume", foreign, "\"arch\": \"vit\"", tmp);
  // and the good one still resumes
  r = run_program(kTrainGpt, kGptTiny + " --resume --out " + good_dir, tmp);
  INFO(r.err);
  CHECK(r.code == 0);
}
