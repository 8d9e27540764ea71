// What the training loop (train/loop/trainer.h) needs of one kind of job: the model,
// its batches, its evaluation, and the columns it adds to the log. The GPT on text
// (train/gpt/gpt_task.h) and the ViT on images (train/vit/vit_task.h) implement it; the
// loop does everything else the same way for both.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nn/module.h"
#include "tensor/random.h"

namespace nl {

class TrainTask {
 public:
  virtual ~TrainTask() = default;

  virtual Module& model() = 0;
  // The model's description (JSON), stored in checkpoints; a resumed run must build the same.
  virtual std::string model_description() const = 0;
  // What one example is, for speeds: "tok" (tok/s) or "img" (img/s).
  virtual const char* unit() const = 0;
  // Examples per row of a batch (tokens per sequence, 1 per image).
  virtual int64_t items_per_row() const = 0;

  // The next global batch, rows first (every rank draws the same one and trains on its
  // own rows); x, y may be reused between calls.
  virtual void next_batch(int64_t batch, Tensor& x, Tensor& y) = 0;
  // The mean loss of a batch (on the model's device), recording the graph.
  virtual Var loss(const Tensor& x, const Tensor& y) = 0;
  // The generator behind next_batch, whose state checkpoints keep.
  virtual const Generator& batch_generator() const = 0;
  // After a checkpoint of step `step` was read: make next_batch continue where the
  // checkpointed run stood (`saved`: its batch generator); throws when that cannot be
  // (another data order).
  virtual void resume_batches(int64_t step, int64_t batch, const Generator& saved) = 0;
  // Whether next_batch can be undone by resume_batches(step, batch, the generator it had
  // before); the loop then lets a stop signal abandon a step in
  // its forward or backward pass (autograd/interrupt.h). The GPT's batches are the
  // generator's draws; the ViT replays its batcher from the start.
  virtual bool batches_rewind() const { return false; }
  // State beyond parameters and optimizer that an exact resume needs, as checkpoint
  // metadata (the dropout generator, a site pair's state: nn/norms/site_pair.h).
  virtual std::map<std::string, std::string> extra_state() const { return {}; }
  virtual void restore_extra_state(const std::map<std::string, std::string>& metadata) {}

  // What identifies the data the task trains on beyond --data's path: its size and
  // checksum ("2534123 bytes, crc32 0a1b2c3d"), stored in checkpoints; a resumed run must
  // read the same. "": nothing to compare.
  virtual std::string data_fingerprint() const { return ""; }

  // Log columns: after `step` (ViT: epoch), the evaluation's, and the measurements of
  // the last training forward (the residual stream's RMS per layer).
  virtual std::vector<std::string> step_columns() const { return {}; }
  virtual std::vector<double> step_values(int64_t steps_done, int64_t batch) const { return {}; }
  virtual std::vector<std::string> eval_columns() const = 0;
  // In eval mode, no graph; restores the mode. Empty when a stop signal came between
  // its batches (the loop then saves the step's checkpoint and stops).
  virtual std::vector<double> evaluate() = 0;
  virtual std::vector<std::string> measure_columns() const { return {}; }
  virtual std::vector<double> measurements() const { return {}; }
  // The progress line's pieces: after the step count ("  epoch 1.25") and for an
  // evaluation ("  val 2.4067").
  virtual std::string progress_prefix(int64_t steps_done, int64_t batch) const { return ""; }
  virtual std::string progress_eval(const std::vector<double>& eval) const = 0;

  // At the end of the whole schedule, on the lead rank: what the task writes beside
  // the run (sample.txt; the test set's confusion.csv) and adds to result.json.
  virtual nlohmann::json finish(const std::string& out_dir) = 0;
};

}  // namespace nl
