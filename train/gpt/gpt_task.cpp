#include "train/gpt/gpt_task.h"

#include <nlohmann/json.hpp>

#include "autograd/ops.h"
#include "nn/model_json.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/gpt/sampling.h"
#include "train/io/checkpoint.h"
#include "train/io/files.h"
#include "train/safety/stop_signals.h"

namespace nl {

GPTTask::GPTTask(const GPTRunConfig& c) : c_(c), device_(c.device == "cuda" ? Device::CUDA : Device::CPU) {
  c_.model.norm = resolve_for_run(c.model.norm, c.steps);  // the norms' auto options; the description records them
  const int64_t T = c.model.context;
  data_ = load_fortunes(c.data_dir, c.train_bytes);
  NL_CHECK((int64_t)data_.val.size() > T, "validation text of ", data_.val.size(), " bytes is too short for --seq ", T);
  Generator init_gen(c.seed);
  model_ = std::make_unique<GPT>(c_.model, init_gen);
  model_->dropout_gen.manual_seed(c.seed + 4);
  model_->to(device_);  // before the loop flattens: the flat buffers and the optimizer state follow
  model_->set_probe(&rms_);
  batcher_ = std::make_unique<TextBatcher>(data_.train, T, c.seed + 1);
  val_batches_ = fixed_batches(data_.val, T, c.eval_batch_size, c.eval_batches, c.seed + 2);
  for (auto& [vx, vy] : val_batches_) vx = vx.to(device_), vy = vy.to(device_);
}

std::string GPTTask::model_description() const { return describe_gpt(c_.model); }

Var GPTTask::loss(const Tensor& x, const Tensor& y) { return model_->loss(x.to(device_), y.to(device_)); }

void GPTTask::resume_batches(int64_t, int64_t, const Generator& saved) {
  batcher_->generator().set_state(saved.state());
}

std::map<std::string, std::string> GPTTask::extra_state() const {
  std::map<std::string, std::string> m = {{"dropout_generator", encode_state(model_->dropout_gen.state())}};
  const std::string norm_state = encode_norm_state(*model_);
  if (!norm_state.empty()) m[kNormStateKey] = norm_state;
  return m;
}

void GPTTask::restore_extra_state(const std::map<std::string, std::string>& metadata) {
  auto dropout_state = metadata.find("dropout_generator");
  if (dropout_state != metadata.end())
    model_->dropout_gen.set_state(decode_state(dropout_state->second, "dropout_generator"));
  restore_norm_state(*model_, metadata);
}

// Mean loss over the fixed validation batches, without recording a graph.
std::vector<double> GPTTask::evaluate() {
  NoGradGuard no_grad;
  const bool was_training = model_->training();
  model_->eval();
  double total = 0;
  for (const auto& [x, y] : val_batches_) {
    // a stop signal is answered between batches, not after a whole --eval-batches
    if (stop_signal()) {
      model_->train(was_training);
      return {};
    }
    total += model_->loss(x, y).item();
  }
  model_->train(was_training);
  return {(double)(float)(total / (double)val_batches_.size())};
}

std::string GPTTask::progress_eval(const std::vector<double>& eval) const {
  return "  val " + std::to_string((float)eval.at(0)).substr(0, 6);
}

nlohmann::json GPTTask::finish(const std::string& out_dir) {
  write_text_file(out_dir + "/sample.txt",
                  sample_text(*model_, c_.sample_bytes, c_.temperature, c_.top_k, c_.seed + 3));
  return nlohmann::json::object();
}

}  // namespace nl
