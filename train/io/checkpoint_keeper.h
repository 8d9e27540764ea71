// Where a run's checkpoints live and when they are written. The newest is always
// DIR/checkpoint.safetensors (what --resume reads); with keep K > 1 the K - 1 before it
// stay as DIR/checkpoint-step<N>.safetensors. Every write is atomic (save_safetensors:
// temporary file, fsync, rename), and an older checkpoint is kept under its history
// name by a hard link before the new one replaces it, so at every moment of a kill the
// folder holds whole checkpoints only.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nl {

struct CheckpointPolicy {
  int64_t every = 0;  // a checkpoint every N steps (0: only at the end and on SIGINT/SIGTERM)
  int64_t keep = 1;   // checkpoints kept on disk, the newest included
  void validate() const;
};

class CheckpointKeeper {
 public:
  CheckpointKeeper(std::string dir, CheckpointPolicy policy);

  std::string latest_path() const { return dir_ + "/checkpoint.safetensors"; }
  std::string history_path(int64_t step) const;
  bool due(int64_t step) const { return policy_.every > 0 && step % policy_.every == 0; }

  // Called once the run may write files. Removes the temporary file a killed save left
  // behind and the history checkpoints that do not belong to this run: all of them for a
  // fresh run (they came with the log it overwrites), those past start_step for a
  // resumed one (the steps it is about to redo).
  void prepare(bool resume, int64_t start_step);

  // Writes step's checkpoint through write(path) (which must write atomically), then
  // drops history beyond the policy's count.
  void save(int64_t step, const std::function<void(const std::string&)>& write);

  // The step of the newest checkpoint of this run (the resumed one counts), -1: none.
  int64_t last_step() const { return last_step_; }
  std::vector<int64_t> history_steps() const;  // ascending

 private:
  void prune(int64_t newest);  // deletes all but the newest keep - 1 history files (not `newest`'s)
  std::string dir_;
  CheckpointPolicy policy_;
  int64_t last_step_ = -1;
};

}  // namespace nl
