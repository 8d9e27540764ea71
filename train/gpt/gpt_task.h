// The GPT on byte-level text as a task of the training loop (train/loop/task.h):
// the fortunes data with its batches and fixed validation batches, the model, the
// residual stream's RMS per layer for the log (a probe, nn/probe.h), and at the end a
// text sample (sample.txt). Log columns: val_loss; rms_0 .. rms_L.
#pragma once
#include <memory>

#include "nn/gpt.h"
#include "train/data/text_data.h"
#include "train/gpt/gpt_run_config.h"
#include "train/loop/log_row.h"
#include "train/loop/residual_rms.h"
#include "train/io/checksum.h"
#include "train/loop/task.h"

namespace nl {

class GPTTask : public TrainTask {
 public:
  // Loads the data and builds the model on config.device; c must be checked
  // (check_gpt_run). Writes no file.
  explicit GPTTask(const GPTRunConfig& c);

  GPT& gpt() { return *model_; }
  const TextData& data() const { return data_; }
  const GPTRunConfig& config() const { return c_; }

  Module& model() override { return *model_; }
  std::string model_description() const override;
  const char* unit() const override { return "tok"; }
  int64_t items_per_row() const override { return c_.model.context; }
  void next_batch(int64_t batch, Tensor& x, Tensor& y) override { batcher_->next(batch, x, y); }
  Var loss(const Tensor& x, const Tensor& y) override;
  const Generator& batch_generator() const override { return batcher_->generator(); }
  void resume_batches(int64_t step, int64_t batch, const Generator& saved) override;
  std::string data_fingerprint() const override { return nl::data_fingerprint(data_.bytes, data_.crc32); }
  std::map<std::string, std::string> extra_state() const override;
  void restore_extra_state(const std::map<std::string, std::string>& metadata) override;
  std::vector<std::string> eval_columns() const override { return {kValLoss}; }
  std::vector<double> evaluate() override;
  bool batches_rewind() const override { return true; }
  std::vector<std::string> measure_columns() const override { return rms_.columns(c_.model.layers); }
  std::vector<double> measurements() const override { return rms_.values(); }
  std::string progress_eval(const std::vector<double>& eval) const override;
  nlohmann::json finish(const std::string& out_dir) override;

 private:
  GPTRunConfig c_;
  Device device_;
  TextData data_;
  std::unique_ptr<GPT> model_;
  std::unique_ptr<TextBatcher> batcher_;
  std::vector<std::pair<Tensor, Tensor>> val_batches_;
  ResidualRms rms_;
};

}  // namespace nl
