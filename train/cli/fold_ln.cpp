// fold_ln: folds the LayerNorms of a trained `ln` GPT into CBWC + RMSNorm (nn/fold.h)
// and writes the result as a `cbwc` checkpoint, which train_gpt --norm cbwc --resume or
// an evaluation loads like any other.
//   build/release/fold_ln --in runs/ln --out runs/ln_folded
// It runs the detector on one forward pass and prints its report, centres the linears
// it names (W -= mean of W over the outputs, per column; b -= mean(b)), and checks the
// folded model against the original on held-out text (largest |logit difference|, and
// both losses) and by the text each generates from one seed.
// The checkpoint keeps the step, the batch generator and the AdamW moments: the cbwc
// model's gradients with respect to its free weights equal the ln model's, so training
// resumed from it continues the ln run's trajectory (tests/train/test_fold_ln.cpp).
// Bad input (a missing file, a checkpoint of another norm, a model the detector cannot
// fold) prints one line naming the problem and exits with code 2, writing nothing.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "autograd/ops.h"
#include "nn/fold.h"
#include "tensor/threads.h"
#include "train/args.h"
#include "train/checkpoint.h"
#include "train/safetensors.h"
#include "train/sampling.h"
#include "train/text_data.h"

using namespace nl;
namespace fs = std::filesystem;

namespace {

// The same description with the norm renamed; `text` must name it exactly once.
std::string rename_norm(const std::string& text, const std::string& key) {
  const std::string from = "\"norm\": \"ln\"", to = "\"norm\": \"cbwc\"";
  const size_t at = text.find(from);
  NL_CHECK(at != std::string::npos && text.find(from, at + 1) == std::string::npos, "checkpoint metadata '", key,
           "' does not name the norm \"ln\" exactly once: ", text);
  return text.substr(0, at) + to + text.substr(at + from.size());
}

// The largest |logit difference| between the two models on `ids` (B, T), and their
// mean next-byte losses when targets are given.
struct Check {
  float max_diff = 0, loss_a = NAN, loss_b = NAN;
};

Check compare(GPT& a, GPT& b, const Tensor& ids, const Tensor& targets) {
  NoGradGuard no_grad;
  const Var la = a.forward(ids), lb = b.forward(ids);
  const auto va = la.value().to_vector(), vb = lb.value().to_vector();
  Check c;
  for (size_t i = 0; i < va.size(); ++i) c.max_diff = std::max(c.max_diff, std::fabs(va[i] - vb[i]));
  if (targets.defined()) {
    c.loss_a = ag::cross_entropy(ag::reshape(la, {-1, a.config.vocab}), targets.reshape({-1})).item();
    c.loss_b = ag::cross_entropy(ag::reshape(lb, {-1, b.config.vocab}), targets.reshape({-1})).item();
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_spinning_threads(argv);
  Args args("fold_ln", "Fold the LayerNorms of a trained ln GPT checkpoint into CBWC + RMSNorm (a cbwc checkpoint).");
  args.add("--in", "runs/ln", "the ln checkpoint: a .safetensors file, or a run directory holding checkpoint.safetensors");
  args.add("--out", "runs/ln_folded", "directory to write checkpoint.safetensors and fold_report.txt into");
  args.add("--data", "/usr/share/games/fortunes", "text for the check (its validation split); random tokens if missing");
  args.add("--threads", "2", "CPU threads (OpenMP and OpenBLAS)");
  try {
    if (!args.parse(argc, argv)) return 0;
    set_num_threads((int)args.integer("--threads"));
    std::string in = args.str("--in");
    if (fs::is_directory(in)) in = (fs::path(in) / "checkpoint.safetensors").string();
    NL_CHECK(fs::is_regular_file(in), "no checkpoint at ", in);
    const std::string out_dir = args.str("--out");
    const std::string out = (fs::path(out_dir) / "checkpoint.safetensors").string();
    NL_CHECK(!fs::exists(out) || !fs::equivalent(in, out), "--out ", out_dir, " would overwrite the input checkpoint");

    const SafetensorsFile file = load_safetensors(in);
    auto model_meta = file.metadata.find("model");
    NL_CHECK(model_meta != file.metadata.end(), "checkpoint ", in, ": metadata has no 'model' (not a normlab GPT checkpoint?)");
    const GPTConfig config = gpt_config_from_json(model_meta->second);
    NL_CHECK(config.norm.name == "ln", "checkpoint ", in, " is of a '", config.norm.name,
             "' model; fold_ln folds LayerNorm (ln) models");

    Generator unused(0), batch_gen;
    GPT ln(config, unused);
    FlatParameters flat = flatten_parameters(ln);
    AdamW optim(flat, AdamWConfig{});
    const CheckpointInfo info = load_checkpoint(in, flat, optim, batch_gen, model_meta->second);

    const FoldReport detected = detect_gpt(ln);
    const std::string report = detected.to_string();
    std::printf("%s", report.c_str());
    std::fflush(stdout);
    std::shared_ptr<GPT> folded = fold_gpt(ln, detected, /*weights_folded=*/false);
    // the check: held-out text when the data is there (8 windows of the validation
    // split), else random tokens
    ln.eval();
    folded->eval();
    const std::string data_dir = args.str("--data");
    if (fs::is_directory(data_dir)) {
      const TextData data = load_fortunes(data_dir);
      const auto batch = fixed_batches(data.val, config.context, 8, 1, 2024)[0];
      const Check c = compare(ln, *folded, batch.first, batch.second);
      std::printf("check on 8 x %lld bytes of held-out text: largest |logit difference| %.3g, loss ln %.6f, "
                  "folded %.6f\n", (long long)config.context, c.max_diff, c.loss_a, c.loss_b);
    } else {
      Generator gen(7);
      std::vector<int32_t> ids(4 * config.context);
      for (auto& id : ids) id = (int32_t)gen.below((uint32_t)config.vocab);
      const Check c = compare(ln, *folded, Tensor::from_ints(ids, {4, config.context}), Tensor());
      std::printf("check on 4 x %lld random tokens (no %s): largest |logit difference| %.3g\n",
                  (long long)config.context, data_dir.c_str(), c.max_diff);
    }
    const std::string text = sample_text(ln, 200, 0.8f, 40, 1), folded_text = sample_text(*folded, 200, 0.8f, 40, 1);
    std::printf("check: 200 bytes generated by each from the same seed are %s\n",
                text == folded_text ? "identical" : "DIFFERENT");

    FlatParameters folded_flat = flatten_parameters(*folded);
    AdamW folded_optim(folded_flat, optim.config);
    for (size_t i = 0; i < flat.params.size(); ++i)
      NL_CHECK(flat.params[i].first == folded_flat.params[i].first && flat.offsets[i] == folded_flat.offsets[i],
               "the cbwc model's parameter buffer differs from the ln model's at ", flat.params[i].first);
    folded_optim.m.copy_from(optim.m);
    folded_optim.v.copy_from(optim.v);
    folded_optim.set_steps(optim.steps());
    std::map<std::string, std::string> meta;
    for (const auto& [key, value] : info.metadata)
      if (key != "format" && key != "step" && key != "optim.steps" && key != "batch_generator") meta[key] = value;
    meta["model"] = rename_norm(meta["model"], "model");
    if (meta.count("config")) meta["config"] = rename_norm(meta["config"], "config");
    meta["folded_from"] = in;

    fs::create_directories(out_dir);
    save_checkpoint(out, folded_flat, folded_optim, info.step, batch_gen, meta);
    std::ofstream(fs::path(out_dir) / "fold_report.txt") << report;
    std::printf("wrote %s (cbwc, step %lld)\n", out.c_str(), (long long)info.step);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fold_ln: error: %s\n", e.what());
    return 2;
  }
}
