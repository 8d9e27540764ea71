// The ViT on Fashion-MNIST as a task of the training loop (train/loop/task.h): the
// images with their seeded shuffle and augmentation, the model, evaluation on the whole
// validation split, the residual stream's RMS per layer for the log, and at the end the
// test set's loss, accuracy and confusion matrix (confusion.csv: rows the true class,
// columns the predicted one). Log columns: epoch; val_loss, val_acc; rms_0 .. rms_L.
#pragma once
#include <array>
#include <memory>

#include "nn/vit.h"
#include "train/loop/log_row.h"
#include "train/loop/residual_rms.h"
#include "train/io/checksum.h"
#include "train/loop/task.h"
#include "train/vit/vit_run_config.h"

namespace nl {

// Mean loss and accuracy of `model` on a whole image set, batch by batch, without
// recording a graph and in eval mode; adds each image's (true, predicted) to confusion
// when given.
struct EvalResult {
  float loss = 0, accuracy = 0;
  bool interrupted = false;  // a stop signal came between batches: the figures are NaN
};
EvalResult evaluate_vit(ViT& model, const ImageSet& set, float mean, float std, int64_t batch,
                        std::array<std::array<int64_t, 10>, 10>* confusion = nullptr);

class ViTTask : public TrainTask {
 public:
  // Loads the data (checking --val-size against it) and builds the model on
  // config.device; c must be checked (check_vit_run). Writes no file.
  explicit ViTTask(const ViTRunConfig& c);

  ViT& vit() { return *model_; }
  const ViTRunConfig& config() const { return c_; }
  const FashionMnist& data() const { return data_; }
  // The schedule's length: --steps, or --epochs in whole steps.
  int64_t steps() const;

  Module& model() override { return *model_; }
  std::string model_description() const override;
  const char* unit() const override { return "img"; }
  int64_t items_per_row() const override { return 1; }
  void next_batch(int64_t batch, Tensor& x, Tensor& y) override { batcher_->next(batch, x, y); }
  Var loss(const Tensor& x, const Tensor& y) override;
  const Generator& batch_generator() const override { return batcher_->generator(); }
  void resume_batches(int64_t step, int64_t batch, const Generator& saved) override;
  bool batches_rewind() const override { return true; }  // resume_batches replays from a fresh batcher
  std::map<std::string, std::string> extra_state() const override;
  void restore_extra_state(const std::map<std::string, std::string>& metadata) override;
  std::string data_fingerprint() const override { return nl::data_fingerprint(data_.bytes, data_.crc32); }
  std::vector<std::string> step_columns() const override { return {"epoch"}; }
  std::vector<double> step_values(int64_t steps_done, int64_t batch) const override;
  std::vector<std::string> eval_columns() const override { return {kValLoss, kValAcc}; }
  std::vector<double> evaluate() override;
  std::vector<std::string> measure_columns() const override { return rms_.columns(c_.model.layers); }
  std::vector<double> measurements() const override { return rms_.values(); }
  std::string progress_prefix(int64_t steps_done, int64_t batch) const override;
  std::string progress_eval(const std::vector<double>& eval) const override;
  nlohmann::json finish(const std::string& out_dir) override;

 private:
  ViTRunConfig c_;
  Device device_;
  FashionMnist data_;
  std::unique_ptr<ViT> model_;
  std::unique_ptr<ImageBatcher> batcher_;
  std::unique_ptr<ImageBatcher> fresh_batcher() const;  // the batch order of step 0, from the seed
  ResidualRms rms_;
};

}  // namespace nl
