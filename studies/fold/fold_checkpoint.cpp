#include "studies/fold/fold_checkpoint.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "autograd/ops.h"
#include "nn/fold.h"
#include "nn/model_json.h"
#include "nn/norms/registry.h"
#include "studies/report/study.h"
#include "tensor/threads.h"
#include "train/data/fashion_mnist.h"
#include "train/data/text_data.h"
#include "train/flags/families.h"
#include "train/gpt/sampling.h"
#include "train/io/checkpoint.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/io/safetensors.h"
#include "train/safety/limits.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

// The same JSON (a model description, a run's config.json) with its "norm" set to `to`,
// and its "final_norm" too where it names the old norm (descriptions name the final
// norm they were built with; a fold needs it to be the blocks' kind).
std::string with_norm(const std::string& text, const std::string& key, const std::string& to) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("checkpoint metadata '", key, "' is not valid JSON (", e.what(), ")");
  }
  NL_CHECK(j.is_object() && j.contains("norm"), "checkpoint metadata '", key, "' names no norm: ", text);
  if (j.contains("final_norm") && j["final_norm"] == j["norm"]) j["final_norm"] = to;
  j["norm"] = to;
  return key == "config" ? j.dump(2) + "\n" : j.dump();
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

std::string gpt_or_vit_norm(const std::string& description) {
  return model_arch(description) == "vit" ? vit_config_from_json(description).norm.name
                                          : gpt_config_from_json(description).norm.name;
}

// Writes `folded`'s parameters with the optimizer state, step and batch generator of
// the ln checkpoint, its metadata renamed to cbwc, the detection report, and the check's
// figures as fold_check.json (what_reproduces reads a copy of it: studies/fold/cbwc_claims.h).
void write_folded(Module& ln, Module& folded, const AdamW& optim, const CheckpointInfo& info,
                  const Generator& batch_gen, const std::string& in, const std::string& out_dir,
                  const std::string& report, const nlohmann::json& check) {
  FlatParameters flat = flatten_parameters(ln), folded_flat = flatten_parameters(folded);
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
  const std::string into = norm_kind(gpt_or_vit_norm(meta["model"])).folds_into;
  meta["model"] = with_norm(meta["model"], "model", into);
  if (meta.count("config")) meta["config"] = with_norm(meta["config"], "config", into);
  meta["folded_from"] = in;

  const std::string out = (fs::path(out_dir) / "checkpoint.safetensors").string();
  create_out_dir(out_dir);
  save_checkpoint(out, folded_flat, folded_optim, info.step, batch_gen, meta);
  write_text_file((fs::path(out_dir) / "fold_report.txt").string(), report);
  write_text_file((fs::path(out_dir) / "fold_check.json").string(), check.dump(1) + "\n");
  std::printf("wrote %s (cbwc, step %lld)\n", out.c_str(), (long long)info.step);
}

// An ln model loaded from its checkpoint (parameters, AdamW moments, step, batch
// generator), the detector's report on it (printed), and its folded cbwc twin.
template <class Model>
struct Folding {
  Generator batch_gen;
  std::unique_ptr<Model> ln;
  std::unique_ptr<FlatParameters> flat;  // the optimizer refers to it
  std::unique_ptr<AdamW> optim;
  CheckpointInfo info;
  std::string report;
  std::shared_ptr<Model> folded;
};

template <class Model, class Config, class Detect, class Fold>
Folding<Model> load_and_fold(const Config& config, const std::string& in, const std::string& model_json,
                             Detect detect, Fold fold) {
  NL_CHECK(!norm_kind(config.norm.name).folds_into.empty(), "checkpoint ", in, " is of a '", config.norm.name,
           "' model; fold_ln folds LayerNorm (ln) models");
  Folding<Model> f;
  Generator unused(0);
  f.ln = std::make_unique<Model>(config, unused);
  f.flat = std::make_unique<FlatParameters>(flatten_parameters(*f.ln));
  f.optim = std::make_unique<AdamW>(*f.flat, AdamWConfig{});
  f.info = load_checkpoint(in, *f.flat, *f.optim, f.batch_gen, model_json);
  const FoldReport detected = detect(*f.ln);
  f.report = detected.to_string();
  std::printf("%s", f.report.c_str());
  std::fflush(stdout);
  f.folded = fold(*f.ln, detected, /*weights_folded=*/false);
  f.ln->eval();
  f.folded->eval();
  return f;
}

// Before the two models are built from what the checkpoint's metadata claims: both
// with their flat buffers and moments, the file read whole twice, the check's forward and
// its data.
void check_fold_memory(const std::string& in, int64_t layers, int64_t dim, double model_parameters,
                       double check_bytes, const std::string& data, double data_bytes) {
  // a checkpoint holds every parameter and its two moments in float: a file under 4 bytes
  // a parameter cannot be of the model its metadata claims, whatever memory there is
  const double file = file_bytes(in);
  NL_CHECK(file >= 4.0 * model_parameters, "checkpoint ", in, ": its metadata describes a model of ", layers,
           " layers of width ", dim, " (about ", gib(4.0 * model_parameters), " of weights alone), but the file holds ",
           (int64_t)file, " bytes: its metadata is corrupt");
  check_memory_estimate({{"checkpoint " + in + ": the model its metadata describes (" + std::to_string(layers) +
                              " layers of width " + std::to_string(dim) + "), loaded and folded beside it",
                          2.0 * kStateBytesPerParameter * model_parameters},
                         {"checkpoint " + in + " (read whole, twice)", 2.0 * file_bytes(in)},
                         {"the check's forward", check_bytes},
                         {"--data " + data + " (read whole)", data_bytes}});
}

void fold_gpt_checkpoint(const std::string& in, const std::string& model_json, const std::string& out_dir,
                         const std::string& data_dir, nlohmann::json check) {
  const GPTConfig config = gpt_config_from_json(model_json);
  check_fold_memory(in, config.layers, config.dim, gpt_parameters(config), gpt_forward_bytes(config, 8, false),
                    data_dir, 3.0 * folder_bytes(data_dir));
  Folding<GPT> f = load_and_fold<GPT>(config, in, model_json, detect_gpt, fold_gpt);
  GPT &ln = *f.ln, &folded = *f.folded;
  // the check: held-out text when the data is there (8 windows of the validation
  // split), else random tokens
  if (fs::is_directory(data_dir)) {
    const TextData data = load_fortunes(data_dir);
    const auto batch = fixed_batches(data.val, config.context, 8, 1, 2024)[0];
    const Check c = compare(ln, folded, batch.first, batch.second);
    std::printf("check on 8 x %lld bytes of held-out text: largest |logit difference| %.3g, loss ln %.6f, "
                "folded %.6f\n", (long long)config.context, c.max_diff, c.loss_a, c.loss_b);
    check.update({{"check", "held-out text"}, {"max_logit_diff", c.max_diff}, {"loss_ln", c.loss_a},
                  {"loss_folded", c.loss_b}});
  } else {
    Generator gen(7);
    std::vector<int32_t> ids(4 * config.context);
    for (auto& id : ids) id = (int32_t)gen.below((uint32_t)config.vocab);
    const Check c = compare(ln, folded, Tensor::from_ints(ids, {4, config.context}), Tensor());
    std::printf("check on 4 x %lld random tokens (no %s): largest |logit difference| %.3g\n",
                (long long)config.context, data_dir.c_str(), c.max_diff);
    check.update({{"check", "random tokens"}, {"max_logit_diff", c.max_diff}});
  }
  const std::string text = sample_text(ln, 200, 0.8f, 40, 1), folded_text = sample_text(folded, 200, 0.8f, 40, 1);
  std::printf("check: 200 bytes generated by each from the same seed are %s\n",
              text == folded_text ? "identical" : "DIFFERENT");
  check["model"] = "gpt";
  check["samples_identical"] = text == folded_text;
  write_folded(ln, folded, *f.optim, f.info, f.batch_gen, in, out_dir, f.report, check);
}

// The two ViTs on every image of `set`: largest |logit difference|, how many predicted
// classes agree, and each one's accuracy.
struct ClassCheck {
  float max_diff = 0;
  int64_t same = 0, correct_a = 0, correct_b = 0, images = 0;
};

ClassCheck compare_classes(ViT& a, ViT& b, const ImageSet& set, float mean, float std) {
  NoGradGuard no_grad;
  ClassCheck c;
  Tensor x, y;
  const int64_t K = a.config.classes, batch = 500;
  for (int64_t first = 0; first < set.size(); first += batch) {
    const int64_t n = std::min(batch, set.size() - first);
    fill_batch(set, {}, first, n, mean, std, x, y);
    const Tensor la = a.forward(Var(x)).value(), lb = b.forward(Var(x)).value();
    const float *pa = la.data(), *pb = lb.data();
    const int32_t* labels = y.idata();
    for (int64_t i = 0; i < n; ++i) {
      int64_t ka = 0, kb = 0;
      for (int64_t k = 0; k < K; ++k) {
        c.max_diff = std::max(c.max_diff, std::fabs(pa[i * K + k] - pb[i * K + k]));
        if (pa[i * K + k] > pa[i * K + ka]) ka = k;
        if (pb[i * K + k] > pb[i * K + kb]) kb = k;
      }
      c.same += ka == kb;
      c.correct_a += ka == labels[i];
      c.correct_b += kb == labels[i];
    }
    c.images += n;
  }
  return c;
}

void fold_vit_checkpoint(const std::string& in, const std::string& model_json, const std::string& out_dir,
                         const std::string& data_dir, const std::map<std::string, std::string>& metadata,
                         nlohmann::json check) {
  const ViTConfig config = vit_config_from_json(model_json);
  // the check evaluates the 10 000 test images 500 at a time, from the 70 000 read whole
  check_fold_memory(in, config.layers, config.dim, vit_parameters(config), vit_forward_bytes(config, 500, false),
                    data_dir, 2.0 * 70000.0 * (double)(config.image * config.image + 1));
  Folding<ViT> f = load_and_fold<ViT>(config, in, model_json, detect_vit, fold_vit);
  // the pixels are standardised with the training split's statistics, which depend on
  // the run's validation split: read it back from the run's configuration
  int64_t val_size = 5000;
  uint64_t split_seed = 1;
  if (auto it = metadata.find("config"); it != metadata.end()) {
    const nlohmann::json run = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    if (run.is_object()) {
      if (run.contains("val_size") && run["val_size"].is_number_integer()) val_size = run["val_size"];
      if (run.contains("split_seed") && run["split_seed"].is_number_integer()) split_seed = run["split_seed"];
    }
  }
  if (fs::is_directory(data_dir)) {
    const FashionMnist data = load_fashion_mnist(data_dir, val_size, split_seed);
    const ClassCheck c = compare_classes(*f.ln, *f.folded, data.test, data.mean, data.std);
    std::printf("check on the %lld test images: largest |logit difference| %.3g; predicted classes identical for "
                "%lld of %lld; accuracy ln %.2f %%, folded %.2f %%\n",
                (long long)c.images, c.max_diff, (long long)c.same, (long long)c.images,
                100.0 * (double)c.correct_a / (double)c.images, 100.0 * (double)c.correct_b / (double)c.images);
    check.update({{"check", "test images"}, {"max_logit_diff", c.max_diff}, {"images", c.images},
                  {"same_classes", c.same}});
  } else {
    std::printf("check skipped: no Fashion-MNIST at %s (apt-get install dataset-fashion-mnist)\n", data_dir.c_str());
  }
  check["model"] = "vit";
  write_folded(*f.ln, *f.folded, *f.optim, f.info, f.batch_gen, in, out_dir, f.report, check);
}

}  // namespace

int fold_ln_main(const std::vector<std::string>& args) {
  FlagParser p("fold_ln",
               "Fold the LayerNorms of a trained ln GPT or ViT checkpoint into CBWC + RMSNorm (a cbwc checkpoint).");
  std::string in = "runs/ln", out_dir = "runs/ln_folded", data_dir;
  int threads = 2;
  p.text("--in", in, "the ln checkpoint: a .safetensors file, or a run directory holding checkpoint.safetensors");
  p.text("--out", out_dir, "a new directory to write checkpoint.safetensors and fold_report.txt into (one holding a "
         "run is refused)", FlagRole::Setting);
  add_data_flag(p, data_dir,
                "the check's data: GPT, fortunes text (its validation split; random tokens if missing), default "
                "/usr/share/games/fortunes; ViT, Fashion-MNIST (its test set), default " +
                    std::string(kFashionMnistDir));
  add_threads_flag(p, threads);
  if (!p.parse(args)) return 0;
  set_num_threads(threads);
  in = checkpoint_in(in);
  std::error_code ec;
  NL_CHECK(fs::exists(fs::symlink_status(in, ec)), "--in: no checkpoint at ", in);
  // a FIFO, a device or a dangling link is named as such, not as a missing checkpoint
  ::close(open_regular_file(in, "--in"));
  // the folded checkpoint is a run's; it never replaces one (the input's included)
  check_fresh_folder(out_dir, "--out", false, false);

  const SafetensorsFile file = load_safetensors(in);
  auto model_meta = file.metadata.find("model");
  NL_CHECK(model_meta != file.metadata.end(), "checkpoint ", in,
           ": metadata has no 'model' (not a normlab checkpoint?)");
  const bool vit = model_arch(model_meta->second) == "vit";
  if (data_dir.empty()) data_dir = vit ? kFashionMnistDir : "/usr/share/games/fortunes";
  const nlohmann::json check = {
      {"study", "fold"}, {"command", study_command("build/release/fold_ln", args)}, {"date", today()}, {"in", in}};
  if (vit)
    fold_vit_checkpoint(in, model_meta->second, out_dir, data_dir, file.metadata, check);
  else
    fold_gpt_checkpoint(in, model_meta->second, out_dir, data_dir, check);
  return 0;
}

}  // namespace nl
