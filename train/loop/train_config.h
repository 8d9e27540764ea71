// The settings of the training loop itself, whatever it trains: the optimizer and its
// schedule, the batch, evaluation cadence, where files go and how the run is kept safe.
// A model's run config (train/gpt/gpt_run.h, train/vit/vit_run.h) extends it with the
// model and its data; the flags that set each field are declared once, in
// train/flags/families.h, whose checks are the only ones (a config made in code is
// checked by running them over it: train/gpt/gpt_run.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "train/safety/run_safety.h"

namespace nl {

struct TrainConfig {
  int64_t batch = 16, steps = 500, warmup = 50;  // the global batch; the schedule's length
  // > 0: the run goes on past `steps` to this step at the lr of the schedule's last step,
  // held flat (the cosine's end, about min_lr; --extend-to: a finished run trained
  // further); 0: it ends at `steps`
  int64_t extend_to = 0;
  float lr = 1e-3f, min_lr = 1e-4f, wd = 0.1f, clip = 1.0f;
  std::string schedule = "cosine";  // after the warmup: cosine to min_lr, or flat at lr (optim.h: lr_at)
  float beta1 = 0.9f, beta2 = 0.99f;
  bool wd_all = false;  // weight decay on every parameter, not only the 2-D weights
  uint64_t seed = 1337;
  int64_t eval_every = 100;
  int threads = 2;
  std::string threads_adapt = "on";  // on: fewer threads while another process holds a core (thread_governor.h)
  std::string device = "cpu";  // cpu | cuda: where the model trains (data stays on the host)
  std::string out_dir = "runs/gpt";
  bool resume = false;
  bool overwrite = false;      // replace the run in out_dir (train/io/run_dir.h)
  std::string init_from;       // start from these weights (a safetensors file; "": the seed's)
  int64_t stop_after = -1;     // stop (and checkpoint) after this many steps; -1: run all
  bool quiet = false;          // no progress lines
  RunSafety safety;            // periodic checkpoints, keep-last-K, what a NaN/inf does
  // config.json: the run's settings as its flags record them (train/flags/flag_parser.h);
  // also stored in every checkpoint. Filled by the model's run function.
  std::string config_json;
  // The keys of config_json that a resumed run must not change (FlagRole::Recipe), also
  // filled by the model's run function.
  std::vector<std::string> recipe_keys;
  std::string recipe_defaults;  // their defaults (JSON): what a checkpoint not recording one had
  // The step the run ends at: `steps`, or extend_to past it.
  int64_t run_steps() const { return extend_to > steps ? extend_to : steps; }
};

}  // namespace nl
