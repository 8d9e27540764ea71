#include "train/vit/vit_run.h"

#include "train/flags/families.h"
#include "train/flags/prepare_run.h"
#include "train/flags/vit_flags.h"

namespace nl {

ViTRunResult run_vit(const ViTRunConfig& config, const std::vector<ViTObserverFactory>& observers) {
  ViTRunConfig c = config;
  prepare_run(c, check_vit_run, add_vit_run_flags);
  ViTTask task(c);
  c.steps = task.steps();
  std::vector<std::unique_ptr<TrainObserver>> owned;
  ViTRunResult r;
  static_cast<TrainResult&>(r) = train(task, c, make_observers(task, observers, owned));
  if (r.final_eval.size() == 2) r.val_loss = (float)r.final_eval[0], r.val_accuracy = (float)r.final_eval[1];
  r.images_per_s = r.items_per_s;
  r.images_per_cpu_s = r.items_per_cpu_s;
  for (double v : r.measurements) r.residual_rms.push_back((float)v);
  if (r.finished.is_object() && r.finished.contains("test_accuracy")) {
    r.tested = true;
    r.test_loss = r.finished["test_loss"].get<float>();
    r.test_accuracy = r.finished["test_accuracy"].get<float>();
    r.confusion = r.finished["confusion"].get<std::array<std::array<int64_t, 10>, 10>>();
  }
  return r;
}

}  // namespace nl
