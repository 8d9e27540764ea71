#include "train/gpt/gpt_eval.h"

#include <cstdlib>
#include <vector>

#include "train/data/text_data.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/gpt/gpt_task.h"
#include "train/io/checkpoint.h"
#include "train/io/files.h"

namespace nl {
namespace {

int64_t step_of(const std::map<std::string, std::string>& metadata) {
  auto it = metadata.find("step");
  return it == metadata.end() ? 0 : std::atoll(it->second.c_str());
}

}  // namespace

GPTEvaluation evaluate_gpt(const GPTRunConfig& c, const std::string& path, const std::string& text_file) {
  GPTEvaluation e;
  e.checkpoint = checkpoint_in(path);
  if (text_file.empty()) {
    GPTTask task(c);
    e.step = step_of(load_gpt_weights(task.gpt(), path, "--eval-only"));
    e.loss = task.evaluate().at(0);
    e.bytes = c.eval_batches * c.eval_batch_size * c.model.context;
    e.source = "the validation split of " + c.data_dir + " (" + std::to_string(c.eval_batches) +
               (c.eval_batches == 1 ? " batch of " : " batches of ") +
               std::to_string(c.eval_batch_size) + " x " + std::to_string(c.model.context) + " bytes, seed " +
               std::to_string(c.seed + 2) + ")";
    return e;
  }
  const std::string text = read_text_file(text_file, "--eval-file");
  NL_CHECK(text.size() >= 2, "--eval-file ", text_file, " holds ", text.size(), " bytes: it needs 2 or more");
  LoadedGPT loaded = load_gpt(path, "--eval-only");
  e.step = step_of(loaded.metadata);
  GPT& model = *loaded.model;
  const Device device = c.device == "cuda" ? Device::CUDA : Device::CPU;
  model.to(device);
  model.eval();
  NoGradGuard no_grad;
  double total = 0;
  for (const auto& [x, y] : consecutive_batches(std::vector<uint8_t>(text.begin(), text.end()), model.config.context,
                                                c.eval_batch_size)) {
    total += (double)model.loss(x.to(device), y.to(device)).item() * (double)y.numel();
    e.bytes += y.numel();
  }
  e.loss = total / (double)e.bytes;
  e.source = text_file + " (" + std::to_string(e.bytes) + " bytes predicted, in windows of " +
             std::to_string(model.config.context) + ")";
  return e;
}

}  // namespace nl
