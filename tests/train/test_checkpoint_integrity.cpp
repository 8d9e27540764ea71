// Checkpoint integrity (train/io/checkpoint.h): a checkpoint records zlib's crc32 of
// every tensor and of its metadata, checked on load, so a single flipped bit is refused
// naming the tensor; a file whose checksums were made to match (re-signed here, as a
// tool that rewrites checkpoints would) is still refused when it holds what no
// training writes: a NaN or infinite weight, a negative second moment, more optimizer
// steps than steps. Every refusal is exit 2, one line, the run's folder byte for byte
// as it was. A weights-only safetensors file (another framework's) starts a run with
// --init-from, its names and shapes checked, its tensors F32 or BF16 / F16 (converted);
// --init-from also takes a run's folder.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/train/run_fixtures.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

// A train_gpt run stopped after 2 of its 4 steps, and its checkpoint.
struct StoppedRun {
  FakeGptRun f;
  std::string dir, checkpoint;
  StoppedRun() : dir(f.tmp.sub("run")), checkpoint(dir + "/checkpoint.safetensors") {
    const RunResult r = run_program(kTrainGpt, f.tiny + " --stop-after 2 --out " + dir, f.tmp);
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  void expect_resume_refused(const std::vector<std::string>& needles) {
    expect_refused(kTrainGpt, f.tiny + " --resume --out " + dir, dir, needles, f.tmp);
  }
};

// log.csv's rows without the throughput column, the one that timing changes
std::vector<std::vector<std::string>> rows_without_tok_per_s(const std::string& dir) {
  auto rows = read_csv_rows(dir + "/log.csv");
  REQUIRE(!rows.empty());
  size_t speed = 0;
  while (speed < rows[0].size() && rows[0][speed] != "tok_per_s") ++speed;
  for (auto& row : rows)
    if (speed < row.size()) row.erase(row.begin() + (long)speed);
  return rows;
}

void set_value(nl::SafetensorsFile& file, const std::string& name, int64_t i, float v) {
  std::vector<float> values = file.tensors.at(name).to_vector();
  values.at(i) = v;
  file.tensors.at(name) = nl::Tensor::from_vector(values, file.tensors.at(name).shape());
}

}  // namespace

TEST_CASE("checkpoint integrity: one bit flipped in a weight's exponent is refused naming the tensor",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  StoppedRun run;
  std::string bytes = read_bytes(run.checkpoint);
  uint64_t header_length = 0;
  std::memcpy(&header_length, bytes.data(), 8);  // little-endian, as on this machine
  const auto header = nlohmann::json::parse(bytes.substr(8, header_length));
  const std::string name = "blocks.0.attn.qkv.weight";
  const size_t begin = 8 + header_length + header.at(name).at("data_offsets").at(0).get<size_t>();
  // the top bit of the exponent of the first weight: 0.0127 becomes about 4.3e36, a
  // finite value that a check for NaN alone lets through (the case)
  float before = 0, after = 0;
  std::memcpy(&before, bytes.data() + begin, 4);
  REQUIRE(std::fabs(before) < 1.0f);
  bytes[begin + 3] ^= 0x40;
  std::memcpy(&after, bytes.data() + begin, 4);
  INFO("weight " << before << " became " << after);
  REQUIRE(std::isfinite(after));
  REQUIRE(std::fabs(after) > 1e30f);
  write_bytes(run.checkpoint, bytes);
  run.expect_resume_refused({"tensor '" + name + "'", "does not match its checksum", "corrupt"});
}

TEST_CASE("checkpoint integrity: a bit flipped in the last byte of the first or last tensor, or in the step, is "
          "refused by its checksum", "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  // the tensors in the order of their bytes in the file: a checksum over only a part of
  // each tensor (its first quarter, say) would miss the flips at their ends
  for (const bool last : {false, true}) {
    StoppedRun run;
    std::string bytes = read_bytes(run.checkpoint);
    uint64_t header_length = 0;
    std::memcpy(&header_length, bytes.data(), 8);
    const auto header = nlohmann::json::parse(bytes.substr(8, header_length));
    std::string name;
    size_t begin = SIZE_MAX, end = 0;
    for (const auto& [n, entry] : header.items()) {
      if (n == "__metadata__") continue;
      const size_t b = entry.at("data_offsets").at(0).get<size_t>(), e = entry.at("data_offsets").at(1).get<size_t>();
      if (last ? e > end : b < begin) name = n, begin = b, end = e;
    }
    INFO((last ? "the last tensor, " : "the first tensor, ") << name);
    bytes[8 + header_length + end - 1] ^= 0x01;  // a bit of the tensor's last value
    write_bytes(run.checkpoint, bytes);
    run.expect_resume_refused({"tensor '" + name + "' does not match its checksum"});
  }
  // the step in the metadata, one digit changed (the same length: the header stays valid)
  StoppedRun run;
  std::string bytes = read_bytes(run.checkpoint);
  uint64_t header_length = 0;
  std::memcpy(&header_length, bytes.data(), 8);
  const size_t at = bytes.find("\"step\":\"2\"");
  REQUIRE(at != std::string::npos);
  REQUIRE(at < 8 + header_length);
  bytes[at + 8] = '1';
  write_bytes(run.checkpoint, bytes);
  run.expect_resume_refused({"the metadata does not match its checksum"});
}

TEST_CASE("checkpoint integrity: re-signed checkpoints holding what no training writes are refused",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  SECTION("re-signed without a change: resumes (the re-signing itself is sound)") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile&) {});
    const RunResult r = run_limited(kTrainGpt, run.f.tiny + " --resume --out " + run.dir, run.f.tmp);
    INFO(r.err);
    CHECK(r.code == 0);
  }
  SECTION("an infinite weight") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile& f) { set_value(f, "wte.weight", 3, INFINITY); });
    run.expect_resume_refused({"'wte.weight'", "NaN or infinite"});
  }
  SECTION("a negative second moment") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile& f) { set_value(f, "optim.v", 5, -1e-6f); });
    run.expect_resume_refused({"'optim.v'", "negative value"});
  }
  SECTION("more optimizer steps than steps") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile& f) { f.metadata.at("optim.steps") = "3"; });
    run.expect_resume_refused({"bad optim.steps '3' (step 2)"});
  }
  SECTION("a tensor's bytes changed, its checksum not") {
    StoppedRun run;
    nl::SafetensorsFile file = nl::load_safetensors(run.checkpoint);
    set_value(file, "wpe.weight", 0, 1.5f);
    nl::save_safetensors(run.checkpoint, file.tensors, file.metadata);
    run.expect_resume_refused({"tensor 'wpe.weight' does not match its checksum"});
  }
}

TEST_CASE("checkpoint integrity: --init-from takes a weights-only safetensors file, names and shapes checked",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  StoppedRun run;
  // as another framework writes it: the parameters under the model's names, no metadata
  nl::SafetensorsFile trained = nl::load_safetensors(run.checkpoint);
  std::map<std::string, nl::Tensor> weights;
  for (const auto& [name, t] : trained.tensors)
    if (name.rfind("optim.", 0) != 0) weights[name] = t;
  const std::string path = run.f.tmp.sub("weights.safetensors");
  nl::save_safetensors(path, weights, {});

  const std::string fresh = run.f.tmp.sub("fresh"), started = run.f.tmp.sub("started");
  RunResult r = run_limited(kTrainGpt, run.f.tiny + " --out " + fresh, run.f.tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  r = run_limited(kTrainGpt, run.f.tiny + " --init-from " + path + " --out " + started, run.f.tmp);
  INFO(r.err);
  REQUIRE(r.code == 0);
  // the same recipe from other weights: another first loss
  const auto fresh_log = read_csv_rows(fresh + "/log.csv"), started_log = read_csv_rows(started + "/log.csv");
  REQUIRE(fresh_log.size() > 1);
  REQUIRE(started_log.size() > 1);
  CHECK(fresh_log[1][1] != started_log[1][1]);

  const std::string out = run.f.tmp.sub("refused");
  auto refused = [&](const std::map<std::string, nl::Tensor>& tensors, const std::string& needle) {
    nl::save_safetensors(path, tensors, {});
    const RunResult bad = run_limited(kTrainGpt, run.f.tiny + " --init-from " + path + " --out " + out, run.f.tmp);
    INFO("stderr: " << bad.err);
    CHECK(bad.code == 2);
    CHECK(count_lines(bad.err) == 1);
    CHECK_THAT(bad.err, Contains("--init-from") && Contains(needle));
    CHECK_FALSE(fs::exists(out));
  };
  auto missing = weights;
  missing.erase("wte.weight");
  refused(missing, "wte.weight");
  auto extra = weights;
  extra["head.extra"] = nl::Tensor::from_vector({1.0f, 2.0f}, {2});
  refused(extra, "'head.extra' is not a parameter of this model");
  auto reshaped = weights;
  reshaped.at("wpe.weight") = weights.at("wpe.weight").reshape({-1});
  refused(reshaped, "wpe.weight");
  // before: one exponent bit flipped (0.0127 -> 4.36e36) trained to a loss of 2.6e36 and exited 0
  auto absurd = weights;
  std::vector<float> values = absurd.at("wte.weight").to_vector();
  values.back() = 4.36e36f;
  absurd.at("wte.weight") = nl::Tensor::from_vector(values, weights.at("wte.weight").shape());
  refused(absurd, "'wte.weight' holds 4.36e+36");
  values.back() = -2e6f;  // just past the bound, finite and sane-looking
  absurd.at("wte.weight") = nl::Tensor::from_vector(values, weights.at("wte.weight").shape());
  refused(absurd, "beyond the bound");
}

TEST_CASE("checkpoint integrity: a re-signed checkpoint holding a finite value beyond the bound is refused",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  SECTION("a weight") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile& f) { set_value(f, "wpe.weight", 1, 3e7f); });
    run.expect_resume_refused({"'wpe.weight' holds 3e+07", "beyond the bound"});
  }
  SECTION("a first moment") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile& f) { set_value(f, "optim.m", 0, -5e6f); });
    run.expect_resume_refused({"'optim.m'", "beyond the bound"});
  }
  SECTION("a second moment") {
    StoppedRun run;
    resign(run.checkpoint, [](nl::SafetensorsFile& f) { set_value(f, "optim.v", 2, 1e20f); });
    run.expect_resume_refused({"'optim.v'", "beyond the bound"});
  }
}

TEST_CASE("checkpoint integrity: --init-from takes a run's folder, and BF16 weights converted to F32",
          "[fault][cli]") {
  REQUIRE(fs::exists(kTrainGpt));
  StoppedRun run;
  auto start = [&](const std::string& name, const std::string& from) {
    const std::string out = run.f.tmp.sub(name);
    const RunResult r = run_limited(kTrainGpt, run.f.tiny + " --init-from " + from + " --out " + out, run.f.tmp);
    INFO("--init-from " << from << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    return rows_without_tok_per_s(out);
  };
  CHECK(start("from-folder", run.dir) == start("from-file", run.checkpoint));

  // the weights cut to bfloat16 (the top 16 bits of each float): once as F32, once as BF16
  const nl::SafetensorsFile trained = nl::load_safetensors(run.checkpoint);
  std::map<std::string, nl::Tensor> cut;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::string data;
  for (const auto& [name, t] : trained.tensors) {
    if (name.rfind("optim.", 0) == 0) continue;
    std::vector<float> values = t.to_vector();
    std::vector<int64_t> shape;
    for (int d = 0; d < t.dim(); ++d) shape.push_back(t.size(d));
    const size_t begin = data.size(), end = begin + 2 * values.size();
    header[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {begin, end}}};
    for (float& v : values) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      bits &= 0xFFFF0000u;
      std::memcpy(&v, &bits, 4);
      data += (char)((bits >> 16) & 0xFF), data += (char)(bits >> 24);
    }
    cut[name] = nl::Tensor::from_vector(values, t.shape());
  }
  const std::string text = header.dump();
  std::string bytes;
  for (int k = 0; k < 8; ++k) bytes += (char)(((uint64_t)text.size() >> (8 * k)) & 0xFF);
  write_bytes(run.f.tmp.sub("bf16.safetensors"), bytes + text + data);
  nl::save_safetensors(run.f.tmp.sub("cut.safetensors"), cut, {});
  const auto from_bf16 = start("from-bf16", run.f.tmp.sub("bf16.safetensors"));
  CHECK(from_bf16 == start("from-cut", run.f.tmp.sub("cut.safetensors")));
  CHECK(from_bf16 != start("from-f32", run.checkpoint));  // the cut changed the weights
}
