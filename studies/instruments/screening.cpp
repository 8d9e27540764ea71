#include "studies/instruments/screening.h"

#include <cstdio>

#include "nn/norms/registry.h"
#include "train/safety/limits.h"
#include "train/data/text_data.h"

namespace nl {

namespace {

// Measures the saturation when the run reaches the screening step.
class ScreenObserver : public TrainObserver {
 public:
  ScreenObserver(GPTTask& task, int64_t step, int64_t batches, ScreenResult& result)
      : task_(task), step_(step), result_(result) {
    const GPTRunConfig& c = task.config();
    for (const auto& [ids, targets] : fixed_batches(task.data().val, c.model.context, 32, batches, c.seed + 6))
      held_out_.push_back(ids);
  }
  void after_step(int64_t done) override {
    if (done == step_) result_.saturation = held_out_saturation(task_.gpt(), held_out_);
  }

 private:
  GPTTask& task_;
  int64_t step_;
  ScreenResult& result_;
  std::vector<Tensor> held_out_;
};

}  // namespace

ScreenResult screen_dyt(GPTRunConfig run, int64_t steps, int64_t batches) {
  check_screened(run.model.norm.name);
  NL_CHECK(steps > 0 && steps <= run.steps, "screen_dyt: the screening step ", steps,
           " must lie in [1, --steps ", run.steps, "] (the probe trains the start of the full run's schedule)");
  NL_CHECK(batches > 0, "screen_dyt: needs at least one held-out batch");
  NL_CHECK(!run.resume, "screen_dyt: screening starts a run; it cannot --resume one");
  ScreenResult result;
  run.stop_after = steps;
  const GPTRunResult r = run_gpt(run, {[&](GPTTask& task) -> std::unique_ptr<TrainObserver> {
    return std::make_unique<ScreenObserver>(task, steps, batches, result);
  }});
  NL_CHECK(r.steps_done == steps, "screen_dyt: the run stopped at step ", r.steps_done, " before step ", steps);
  result.steps = steps;
  result.val_loss = r.final_val_loss;
  result.wall_s = r.wall_s;
  return result;
}

std::string screen_message(const ScreenResult& r) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "screening at step %lld: tanh saturation |alpha x| > 2 averaged over %zu DyT sites on held-out "
                "batches = %.4f (|alpha x| > 1: %.4f, > 3: %.4f); val loss %.4f\n",
                (long long)r.steps, r.saturation.sites.size(), r.saturation_gt2(), r.saturation.mean[0],
                r.saturation.mean[2], r.val_loss);
  out += buf;
  for (const ActStat& s : r.saturation.sites) {
    std::snprintf(buf, sizeof buf, "  layer %lld %-4s |alpha x| > 2: %.4f\n", (long long)s.layer, s.site.c_str(),
                  s.saturation[1]);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "verdict: %.4f %s %.2f -> DyT is predicted to %s\n", r.saturation_gt2(),
                r.predicts_help() ? ">" : "<=", kScreenThreshold,
                r.predicts_help() ? "HELP (end with a lower validation loss than LayerNorm in this regime)"
                                  : "NOT help (LayerNorm is predicted to end with the lower validation loss)");
  out += buf;
  out += "caution: this is the paper's rule of thumb (Verma 2026: saturation > 0.43 at step 500), fitted on its own "
         "models; it is weak evidence (how it fared at this project's scale: docs/results/regime.md). Train both "
         "norms to know.\n";
  return out;
}

}  // namespace nl
