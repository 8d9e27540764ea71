// Tests of convert_nanogpt (apps/convert_nanogpt.cpp, train/gpt/nanogpt_names.h): nanoGPT's
// state_dict names, written out here by hand, map to normlab's and back bit for bit; a
// tiny GPT of nanoGPT's architecture built in PyTorch (scripts/make_reference_nanogpt.py)
// gives, converted and loaded into normlab's GPT, the logits PyTorch computed for it;
// what does not map is refused with one line naming it and exit 2.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

#include "nn/model_json.h"
#include "tests/reference.h"
#include "tests/train/run_fixtures.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/gpt/nanogpt_names.h"
#include "train/io/safetensors.h"

using Catch::Contains;
namespace fs = std::filesystem;
using namespace nl;
using namespace nl::test;

namespace {

const std::string kConvert = build_dir() + "/convert_nanogpt";

// nanoGPT's GPTConfig(n_layer=2, n_head=2, n_embd=16, block_size=8, vocab_size=256, bias=True)
GPTConfig tiny_config() {
  GPTConfig c;
  c.layers = 2, c.dim = 16, c.heads = 2, c.context = 8;
  return c;
}

// A nanoGPT state_dict of tiny_config's sizes, every value distinct, under the names
// model.py gives them (written here, not by the converter).
NamedTensors nano_state_dict(bool bias = true) {
  NamedTensors sd;
  int64_t filled = 0;
  auto add = [&](const std::string& name, const Shape& shape) {
    std::vector<float> v(numel_of(shape));
    for (auto& x : v) x = 0.001f * (float)(++filled % 1999) - 1.0f;
    sd[name] = Tensor::from_vector(v, shape);
  };
  add("transformer.wte.weight", {256, 16});
  add("transformer.wpe.weight", {8, 16});
  for (const std::string p : {"transformer.h.0.", "transformer.h.1."}) {
    for (const std::string ln : {"ln_1", "ln_2"}) {
      add(p + ln + ".weight", {16});
      if (bias) add(p + ln + ".bias", {16});
    }
    add(p + "attn.c_attn.weight", {48, 16});
    add(p + "attn.c_proj.weight", {16, 16});
    add(p + "mlp.c_fc.weight", {64, 16});
    add(p + "mlp.c_proj.weight", {16, 64});
    if (bias) {
      add(p + "attn.c_attn.bias", {48});
      add(p + "attn.c_proj.bias", {16});
      add(p + "mlp.c_fc.bias", {64});
      add(p + "mlp.c_proj.bias", {16});
    }
  }
  add("transformer.ln_f.weight", {16});
  if (bias) add("transformer.ln_f.bias", {16});
  return sd;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.to_vector() == b.to_vector();
}

void expect_same(const NamedTensors& a, const NamedTensors& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, t] : a) {
    INFO(name);
    REQUIRE(b.count(name));
    CHECK(same_bits(t, b.at(name)));
  }
}

struct Scratch {
  TempDir tmp;  // the programs' stdout and stderr
  TempDir files;  // what they read and write: a refusal leaves it as it was
  // the nanoGPT file `name`, from nano_state_dict edited by `edit`
  std::string nano_file(const std::string& name, const std::function<void(NamedTensors&)>& edit = nullptr) {
    NamedTensors sd = nano_state_dict();
    if (edit) edit(sd);
    save_safetensors(files.sub(name), sd);
    return files.sub(name);
  }
  RunResult convert(const std::string& args) { return run_limited(kConvert, args, tmp); }
  void converts(const std::string& args) {
    const RunResult r = convert(args);
    INFO("convert_nanogpt " << args << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
  }
  void refused(const std::string& args, const std::vector<std::string>& needles) {
    expect_refused(kConvert, args, files.path.string(), needles, tmp);
  }
};

}  // namespace

TEST_CASE("nanogpt names: each nanoGPT tensor lands under normlab's name and comes back bit for bit", "[cli]") {
  const NamedTensors nano = nano_state_dict();
  const NormlabWeights w = from_nanogpt(nano, 2, "test");
  CHECK(describe_gpt(w.config) == describe_gpt(tiny_config()));
  REQUIRE(w.tensors.size() == nano.size());
  const std::pair<const char*, const char*> pairs[] = {
      {"transformer.wte.weight", "wte.weight"},
      {"transformer.wpe.weight", "wpe.weight"},
      {"transformer.h.1.ln_1.weight", "blocks.1.ln1.weight"},
      {"transformer.h.1.ln_1.bias", "blocks.1.ln1.bias"},
      {"transformer.h.0.attn.c_attn.weight", "blocks.0.attn.qkv.weight"},
      {"transformer.h.0.attn.c_attn.bias", "blocks.0.attn.qkv.bias"},
      {"transformer.h.1.attn.c_proj.weight", "blocks.1.attn.proj.weight"},
      {"transformer.h.0.ln_2.bias", "blocks.0.ln2.bias"},
      {"transformer.h.1.mlp.c_fc.weight", "blocks.1.mlp.fc.weight"},
      {"transformer.h.0.mlp.c_proj.weight", "blocks.0.mlp.proj.weight"},
      {"transformer.h.1.mlp.c_proj.bias", "blocks.1.mlp.proj.bias"},
      {"transformer.ln_f.weight", "ln_f.weight"},
      {"transformer.ln_f.bias", "ln_f.bias"}};
  for (const auto& [theirs, ours] : pairs) {
    INFO(theirs << " -> " << ours);
    REQUIRE(w.tensors.count(ours));
    CHECK(same_bits(w.tensors.at(ours), nano.at(theirs)));
  }
  // normlab's GPT of that config has exactly these parameters, of these shapes
  Generator gen(1);
  GPT model(tiny_config(), gen);
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(w.tensors.count(name));
    CHECK(w.tensors.at(name).shape() == p.value().shape());
  }
  CHECK(model.named_parameters().size() == w.tensors.size());
  expect_same(to_nanogpt(w.tensors, w.config, "test"), nano);

  SECTION("bias=False drops every bias, and normlab's --bias off --norm-bias off follow") {
    const NamedTensors plain = nano_state_dict(false);
    const NormlabWeights p = from_nanogpt(plain, 2, "test");
    CHECK_FALSE(p.config.bias);
    CHECK_FALSE(p.config.norm.bias);
    CHECK(p.tensors.count("blocks.0.ln1.bias") == 0);
    GPT plain_model(p.config, gen);
    CHECK(plain_model.named_parameters().size() == p.tensors.size());
    for (const auto& [name, param] : plain_model.named_parameters()) CHECK(p.tensors.count(name));
    CHECK(train_gpt_flags(p.config) == "--layers 2 --dim 16 --heads 2 --seq 8 --bias off --norm-bias off");
    expect_same(to_nanogpt(p.tensors, p.config, "test"), plain);
  }
  SECTION("torch.compile's _orig_mod. prefix, the causal-mask buffers and a tied lm_head.weight are dropped") {
    NamedTensors compiled;
    for (const auto& [name, t] : nano) compiled["_orig_mod." + name] = t;
    compiled["_orig_mod.transformer.h.0.attn.bias"] = Tensor::ones({1, 1, 8, 8});
    compiled["_orig_mod.lm_head.weight"] = nano.at("transformer.wte.weight");
    const NormlabWeights c = from_nanogpt(compiled, 2, "test");
    CHECK(c.config.tied_head);
    expect_same(c.tensors, w.tensors);
  }
  SECTION("an lm_head.weight of other values becomes normlab's untied head") {
    NamedTensors untied = nano;
    untied["lm_head.weight"] = Tensor::full({256, 16}, 0.5f);
    const NormlabWeights u = from_nanogpt(untied, 2, "test");
    CHECK_FALSE(u.config.tied_head);
    CHECK(same_bits(u.tensors.at("lm_head.weight"), untied.at("lm_head.weight")));
  }
}

TEST_CASE("convert_nanogpt: a nanoGPT file to normlab's names and back is the same file's tensors", "[cli]") {
  REQUIRE(fs::exists(kConvert));
  Scratch s;
  const std::string nano = s.nano_file("nano.safetensors");
  s.converts("--to normlab --heads 2 --in " + nano + " --out " + s.tmp.sub("ours.safetensors"));
  s.converts("--to nanogpt --in " + s.tmp.sub("ours.safetensors") + " --out " + s.tmp.sub("back.safetensors"));
  expect_same(load_safetensors(s.tmp.sub("back.safetensors")).tensors, nano_state_dict());
  // the normlab file describes its model, so it loads as a GPT of those sizes
  const LoadedGPT loaded = load_gpt(s.tmp.sub("ours.safetensors"), "--in");
  CHECK(describe_gpt(loaded.model->config) == describe_gpt(tiny_config()));

  // bias=False, 4 layers of width 32: a file of weights alone, 5.6 KB short of what a model
  // with biases would take, loads as what it is
  GPTConfig c;
  c.layers = 4, c.dim = 32, c.heads = 4, c.context = 8, c.bias = c.norm.bias = false;
  Generator gen(3);
  GPT plain(c, gen);
  NamedTensors ours;
  for (const auto& [name, p] : plain.named_parameters()) ours[name] = p.value();
  const NamedTensors nano_plain = to_nanogpt(ours, c, "test");
  save_safetensors(s.files.sub("plain.safetensors"), nano_plain);
  const std::string converted = s.tmp.sub("p.safetensors"), back = s.tmp.sub("p_back.safetensors");
  s.converts("--to normlab --heads 4 --in " + s.files.sub("plain.safetensors") + " --out " + converted);
  CHECK(describe_gpt(load_gpt(converted, "--in").model->config) == describe_gpt(c));
  s.converts("--to nanogpt --in " + converted + " --out " + back);
  expect_same(load_safetensors(back).tensors, nano_plain);
}

TEST_CASE("convert_nanogpt: a PyTorch nanoGPT-architecture GPT gives its logits in normlab", "[cli]") {
  REQUIRE(fs::exists(kConvert));
  Scratch s;
  const std::string nano = reference_path("nanogpt_tiny.safetensors"), ours = s.tmp.sub("ours.safetensors");
  s.converts("--to normlab --heads 2 --in " + nano + " --out " + ours);
  LoadedGPT loaded = load_gpt(ours, "--in");
  loaded.model->eval();
  for (const RefCase& c : load_reference("nanogpt.txt")) {
    INFO(c.where() << " " << c.name);
    NoGradGuard no_grad;
    const std::vector<float> got = loaded.model->forward(c.tensor("ids")).value().to_vector();
    const std::vector<float> want = c.tensor("out").to_vector();
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, (double)std::fabs(got[i] - want[i]));
    INFO("largest |logit difference| " << worst << " over " << got.size() << " logits in [-8, 8]");
    // the tanh GELU is normlab's own: float32 rounding only (2.0e-6 measured). nanoGPT's
    // exact GELU moves these logits by 1.2e-3 (measured), which the tanh form cannot follow.
    CHECK(worst < (c.name == "tanh_gelu" ? 2e-5 : 2e-3));
    if (c.name == "erf_gelu") CHECK(worst > 1e-4);
  }
  // and back to nanoGPT's names: the very values of the file (its mask buffers aside)
  s.converts("--to nanogpt --in " + ours + " --out " + s.tmp.sub("back.safetensors"));
  NamedTensors original = load_safetensors(nano).tensors;
  original.erase("transformer.h.0.attn.bias");
  original.erase("transformer.h.1.attn.bias");
  expect_same(load_safetensors(s.tmp.sub("back.safetensors")).tensors, original);
  // sample_gpt reads the converted file, and train_gpt starts from it with the flags printed
  const RunResult sampled = run_limited(build_dir() + "/sample_gpt", "--threads 1 --in " + ours +
                                        " --prompt abc --length 8 --top-k 1", s.tmp);
  CHECK(sampled.code == 0);
  CHECK(sampled.out.size() == 11);
  FakeGptRun f;
  const RunResult trained =
      run_limited(kTrainGpt, "--data " + f.data + " --layers 2 --dim 16 --heads 2 --seq 8 --batch 2 --steps 1 "
                  "--eval-batches 1 --threads 1 --quiet --init-from " + ours + " --out " + f.tmp.sub("run"), f.tmp);
  INFO(trained.err);
  CHECK(trained.code == 0);
}

TEST_CASE("convert_nanogpt: what does not map is refused, naming it", "[cli]") {
  REQUIRE(fs::exists(kConvert));
  Scratch s;
  const std::string out = " --out " + s.files.sub("out.safetensors");
  const std::string to_normlab = "--to normlab --heads 2 --in ";
  s.refused(to_normlab + s.nano_file("chars.safetensors", [](NamedTensors& sd) {
    sd["transformer.wte.weight"] = Tensor::zeros({65, 16});
  }) + out, {"transformer.wte.weight", "vocabulary of 65", "256"});
  s.refused(to_normlab + s.nano_file("missing.safetensors", [](NamedTensors& sd) {
    sd.erase("transformer.h.1.mlp.c_fc.bias");
  }) + out, {"'transformer.h.1.mlp.c_fc.bias' is missing"});
  s.refused(to_normlab + s.nano_file("transposed.safetensors", [](NamedTensors& sd) {
    sd["transformer.h.0.attn.c_attn.weight"] = Tensor::zeros({16, 48});
  }) + out, {"transformer.h.0.attn.c_attn.weight", "(16, 48)", "(48, 16)"});
  s.refused(to_normlab + s.nano_file("stray_layer.safetensors", [](NamedTensors& sd) {
    sd["transformer.h.99999.ln_1.weight"] = Tensor::zeros({16});
  }) + out, {"'transformer.h.2.ln_1.weight' is missing", "up to 99999"});
  s.refused(to_normlab + s.nano_file("unknown.safetensors", [](NamedTensors& sd) {
    sd["transformer.h.0.attn.rotary.weight"] = Tensor::zeros({16});
  }) + out, {"'transformer.h.0.attn.rotary.weight' has no place"});
  const std::string nano = s.nano_file("nano.safetensors");
  s.refused("--to normlab --in " + nano + out, {"--heads is required"});
  s.refused("--to normlab --heads 3 --in " + nano + out, {"--heads 3", "n_embd 16"});
  s.refused("--to normlab --heads 2 --in " + s.files.sub("absent.safetensors") + out, {"absent.safetensors"});
  s.refused("--to nanogpt --in " + nano + out, {"nanoGPT's names", "--to normlab"});
  write_bytes(s.files.sub("out.safetensors"), "x");
  s.refused(to_normlab + nano + out, {"--out", "exists"});
  fs::remove(s.files.sub("out.safetensors"));

  // a converted file whose description claims 64 layers is refused before any model is built
  const std::string ours = s.files.sub("ours.safetensors");
  s.converts(to_normlab + nano + " --out " + ours);
  resign(ours, [](SafetensorsFile& file) {
    GPTConfig big = tiny_config();
    big.layers = 64;
    file.metadata["model"] = describe_gpt(big);
  });
  expect_refused(build_dir() + "/sample_gpt", "--threads 1 --in " + ours, s.files.path.string(),
                 {"64 layers", "more than the file holds"}, s.tmp);
  fs::remove(ours);

  FakeGptRun f;
  const std::string rms = f.train("rms", "--norm rms"), untied = f.train("untied", "--tied-head off"),
                    peri = f.train("peri", "--block peri");
  s.refused("--to nanogpt --in " + rms + out, {"--norm is rms", "LayerNorm"});
  s.refused("--to nanogpt --in " + untied + out, {"--tied-head is off"});
  s.refused("--to nanogpt --in " + peri + out, {"--block is peri"});
}
