// --resume: the run in c.out_dir continues from its checkpoint.safetensors, bit for bit
// the trajectory of a run that never stopped. Everything is checked before a live object
// changes (the whole file, its checksums, the model it describes, then the recipe and the
// data), and every refusal is one nl::Error naming the checkpoint and what differs.
#pragma once
#include <cstdint>

#include "train/loop/task.h"
#include "train/loop/train_config.h"
#include "train/optim/optim.h"

namespace nl {

// The step the run starts from: 0 for a fresh run (c.resume false: nothing is read);
// for a resumed one the checkpoint's step, after its parameters, optimizer moments,
// batch order and the task's extra state were restored. Refuses a missing checkpoint,
// another model, recipe (every FlagRole::Recipe key of c.config_json) or data, and a
// checkpoint past the run's end (c.run_steps()).
int64_t resume(TrainTask& task, const TrainConfig& c, FlatParameters& flat, AdamW& optim);

}  // namespace nl
