#include "train/vit/vit_task.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "autograd/ops.h"
#include "nn/norm_state.h"
#include "nn/norms/site_pair.h"
#include "nn/model_json.h"
#include "tensor/ops.h"
#include "train/io/files.h"
#include "train/safety/stop_signals.h"

namespace nl {
namespace {

int64_t argmax_row(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

}  // namespace

EvalResult evaluate_vit(ViT& model, const ImageSet& set, float mean, float std, int64_t batch,
                        std::array<std::array<int64_t, 10>, 10>* confusion) {
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.eval();
  const int64_t K = model.config.classes;
  double total_loss = 0;
  int64_t correct = 0;
  Tensor x, y;
  for (int64_t first = 0; first < set.size(); first += batch) {
    if (stop_signal()) {  // answered between batches (none comes at the end's test evaluation)
      model.train(was_training);
      return {NAN, NAN, true};
    }
    const int64_t n = std::min(batch, set.size() - first);
    fill_batch(set, {}, first, n, mean, std, x, y);
    const Device device = model.head->weight.value().device();
    Tensor logits = model.forward(Var(x.to(device))).value();
    Tensor lse;
    total_loss += (double)cross_entropy_forward(logits, y.to(device), -100, lse).item() * (double)n;
    logits = logits.contiguous().to(Device::CPU);
    const float* lp = logits.data();
    const int32_t* yp = y.idata();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pred = argmax_row(lp + i * K, K);
      correct += pred == yp[i];
      if (confusion && yp[i] < 10 && pred < 10) (*confusion)[yp[i]][pred] += 1;
    }
  }
  model.train(was_training);
  return {(float)(total_loss / (double)set.size()), (float)correct / (float)set.size()};
}

ViTTask::ViTTask(const ViTRunConfig& c) : c_(c), device_(c.device == "cuda" ? Device::CUDA : Device::CPU) {
  data_ = load_fashion_mnist(c.data_dir, c.val_size, c.split_seed, c.train_images);
  NL_CHECK(steps() > 0, "--epochs ", c.epochs, " gives no training step");
  c_.model.norm = resolve_for_run(c.model.norm, steps());  // --bhyt-refresh auto; the description records the value
  Generator init_gen(c.seed);
  model_ = std::make_unique<ViT>(c_.model, init_gen);
  model_->to(device_);  // before the loop flattens: the flat buffers and the optimizer state follow
  model_->set_probe(&rms_);
  batcher_ = fresh_batcher();
}

std::unique_ptr<ImageBatcher> ViTTask::fresh_batcher() const {
  return std::make_unique<ImageBatcher>(data_.train, data_.mean, data_.std, c_.augment, c_.seed + 1);
}

int64_t ViTTask::steps() const {
  if (c_.steps > 0) return c_.steps;
  return (int64_t)std::ceil(c_.epochs * (double)data_.train.size() / (double)c_.batch);
}

std::string ViTTask::model_description() const { return describe_vit(c_.model); }

Var ViTTask::loss(const Tensor& x, const Tensor& y) { return model_->loss(Var(x.to(device_)), y.to(device_)); }

// The batch order is replayed from the seed, by a batcher started afresh, so that this
// also undoes a batch drawn for a step a stop signal abandoned (batches_rewind): the
// batcher's epoch order and position are state its generator alone does not hold. It
// must land where the checkpoint says. Skipping draws no pixels: 5000 steps of 128
// images replay in milliseconds.
void ViTTask::resume_batches(int64_t step, int64_t batch, const Generator& saved) {
  batcher_ = fresh_batcher();
  for (int64_t s = 0; s < step; ++s) batcher_->skip(batch);
  NL_CHECK(saved.state() == batcher_->generator().state(), "--resume: the checkpoint in ", c_.out_dir,
           " was written with another data order (a different --seed, --batch, --val-size or augmentation?)");
}

// BHyT's ||W_V W_O||^2 caches and refresh counters (a site pair's state): without them
// a resumed run would refresh its caches at other steps than the straight run.
std::map<std::string, std::string> ViTTask::extra_state() const {
  const std::string norm_state = encode_norm_state(model_->blocks);
  if (norm_state.empty()) return {};
  return {{kNormStateKey, norm_state}};
}

void ViTTask::restore_extra_state(const std::map<std::string, std::string>& metadata) {
  restore_norm_state(model_->blocks, c_.model.norm.name, metadata);
}

std::vector<double> ViTTask::step_values(int64_t steps_done, int64_t batch) const {
  return {(double)steps_done * (double)batch / (double)data_.train.size()};
}

std::vector<double> ViTTask::evaluate() {
  const EvalResult v = evaluate_vit(*model_, data_.val, data_.mean, data_.std, c_.eval_batch);
  if (v.interrupted) return {};
  return {(double)v.loss, (double)v.accuracy};
}

std::string ViTTask::progress_prefix(int64_t steps_done, int64_t batch) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "  epoch %5.2f", step_values(steps_done, batch)[0]);
  return buf;
}

std::string ViTTask::progress_eval(const std::vector<double>& eval) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "  val %.4f acc %5.2f%%", eval.at(0), 100.0 * eval.at(1));
  return buf;
}

nlohmann::json ViTTask::finish(const std::string& out_dir) {
  std::array<std::array<int64_t, 10>, 10> confusion{};
  const EvalResult test = evaluate_vit(*model_, data_.test, data_.mean, data_.std, c_.eval_batch, &confusion);
  const auto& names = fashion_mnist_classes();
  std::ostringstream cm;
  cm << "true\\predicted";
  for (const auto& n : names) cm << "," << n;
  cm << "\n";
  for (int t = 0; t < 10; ++t) {
    cm << names[t];
    for (int p = 0; p < 10; ++p) cm << "," << confusion[t][p];
    cm << "\n";
  }
  write_text_file(out_dir + "/confusion.csv", cm.str());
  nlohmann::json r = nlohmann::json::object();
  r["test_loss"] = (double)test.loss;
  r["test_accuracy"] = (double)test.accuracy;
  r["confusion"] = confusion;
  return r;
}

}  // namespace nl
