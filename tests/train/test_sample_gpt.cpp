// Tests of sample_gpt (apps/sample_gpt.cpp) on a tiny trained run: from the run's folder
// or a checkpoint file it prints the prompt and --length bytes; the same --seed gives the
// same bytes; --top-k 1 is the greedy continuation, computed here from the checkpoint
// with full forwards; every bad input is one line and exit 2 with nothing on stdout.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "nn/model_json.h"
#include "tensor/device.h"
#include "tests/train/run_fixtures.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl::test;

namespace {

const std::string kSampleGpt = build_dir() + "/sample_gpt";

struct TrainedRun {
  FakeGptRun f;
  std::string dir = f.train("run", "");
  RunResult sample(const std::string& args) { return run_limited(kSampleGpt, "--threads 1 " + args, f.tmp); }
  // the stdout of a run that must succeed
  std::string sampled(const std::string& args) {
    const RunResult r = sample(args);
    INFO("sample_gpt " << args << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    return r.out;
  }
};

}  // namespace

TEST_CASE("sample_gpt: the prompt and --length bytes, the same for a seed, from a folder or a file", "[cli]") {
  REQUIRE(fs::exists(kSampleGpt));
  TrainedRun run;
  const std::string a = run.sampled("--in " + run.dir + " --prompt fortune --length 50 --seed 3 --temperature 1.5");
  CHECK(a.size() == 7 + 50);
  CHECK(a.rfind("fortune", 0) == 0);
  CHECK(run.sampled("--in " + run.dir + "/checkpoint.safetensors --prompt fortune --length 50 --seed 3 "
                    "--temperature 1.5") == a);
  CHECK(run.sampled("--in " + run.dir + " --prompt fortune --length 50 --seed 4 --temperature 1.5") != a);
  // --prompt-file: the file's bytes as the prompt
  write_bytes(run.f.tmp.sub("prompt.txt"), "fortune");
  CHECK(run.sampled("--in " + run.dir + " --prompt-file " + run.f.tmp.sub("prompt.txt") +
                    " --length 50 --seed 3 --temperature 1.5") == a);
}

TEST_CASE("sample_gpt: --top-k 1 continues the prompt with the argmax of each full forward", "[cli]") {
  REQUIRE(fs::exists(kSampleGpt));
  TrainedRun run;
  const std::string out = run.sampled("--in " + run.dir + " --prompt the --length 20 --top-k 1");
  REQUIRE(out.size() == 23);
  // the model, read here from the checkpoint's description and tensors
  const nl::SafetensorsFile file = nl::load_safetensors(run.dir + "/checkpoint.safetensors");
  nl::Generator gen(0);
  nl::GPT model(nl::gpt_config_from_json(file.metadata.at("model")), gen);
  for (auto& [name, p] : model.named_parameters()) p.value().copy_from(file.tensors.at(name));
  model.eval();
  nl::NoGradGuard no_grad;
  const int64_t T = model.config.context;  // 8: the window slides
  std::vector<int32_t> ids = {'t', 'h', 'e'};
  for (size_t n = 3; n < out.size(); ++n) {
    const size_t start = (int64_t)ids.size() > T ? ids.size() - (size_t)T : 0;
    const std::vector<int32_t> window(ids.begin() + (long)start, ids.end());
    const nl::Tensor logits =
        model.forward(nl::Tensor::from_ints(window, {1, (int64_t)window.size()})).value().contiguous();
    const float* last = logits.data() + (logits.numel() - 256);
    int best = 0;
    for (int i = 1; i < 256; ++i)
      if (last[i] > last[best]) best = i;
    const int chosen = (unsigned char)out[n];
    INFO("byte " << n << ": chosen " << chosen << " (logit " << last[chosen] << "), argmax " << best << " ("
                 << last[best] << ")");
    // the program's cached forward may round differently from this full one, nothing more
    CHECK(last[chosen] >= last[best] - 1e-5f);
    ids.push_back(chosen);
  }
}

TEST_CASE("sample_gpt: bad input is one line naming the flag, exit 2, nothing on stdout", "[cli][fault]") {
  REQUIRE(fs::exists(kSampleGpt));
  TrainedRun run;
  auto refused = [&](const std::string& args, const std::vector<std::string>& needles) {
    const RunResult r = run.sample(args);
    INFO("sample_gpt " << args << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.out.empty());
    for (const auto& n : needles) CHECK_THAT(r.err, Contains(n));
  };
  const std::string in = "--in " + run.dir;
  refused(in + " --prompt 123456789", {"--prompt", "9 bytes", "context of 8"});
  write_bytes(run.f.tmp.sub("long.txt"), std::string(100, 'a'));
  refused(in + " --prompt-file " + run.f.tmp.sub("long.txt"), {"--prompt-file", "100 bytes", "context of 8"});
  refused(in + " --prompt-file " + run.f.tmp.sub("none.txt"), {"--prompt-file", "none.txt"});
  refused(in + " --prompt a --prompt-file " + run.f.tmp.sub("long.txt"), {"--prompt", "--prompt-file", "one"});
  refused("--prompt a", {"--in", "required"});
  refused("--in " + run.f.tmp.sub("nothing"), {"nothing"});
  refused("--in " + run.f.data, {"checkpoint.safetensors", "does not exist"});  // a folder without a checkpoint
  refused(in + " --top-p 0", {"--top-p"});
  refused(in + " --top-p 1.5", {"--top-p"});
  refused(in + " --temperature 0", {"--temperature"});
  refused(in + " --top-k 0", {"--top-k"});
  refused(in + " --length -1", {"--length"});
  refused(in + " --steps 3", {"unknown flag", "--steps"});
  // weights without a description of their model
  nl::SafetensorsFile file = nl::load_safetensors(run.dir + "/checkpoint.safetensors");
  nl::save_safetensors(run.f.tmp.sub("bare.safetensors"), file.tensors, {});
  refused("--in " + run.f.tmp.sub("bare.safetensors"), {"--in", "bare.safetensors", "records no model"});
  if (!nl::cuda_built()) refused(in + " --device cuda", {"--device cuda", "make CUDA=1"});
}
