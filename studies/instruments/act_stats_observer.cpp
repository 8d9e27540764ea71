#include "studies/instruments/act_stats_observer.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "train/io/run_log.h"
#include "train/safety/limits.h"

namespace nl {
namespace {

// Takes `measure`'s rows at step 0, every `every` steps and at the schedule's end.
class ActStatsObserver : public TrainObserver {
 public:
  using Measure = std::function<std::vector<ActStat>()>;
  ActStatsObserver(std::string out_dir, Measure measure, const ActStatsSettings& s, ActStatsRecord* record)
      : out_dir_(std::move(out_dir)), measure_(std::move(measure)), settings_(s), record_(record) {}

  void start(int64_t start_step, int64_t steps, bool resumed) override {
    steps_ = steps;
    file_ = std::make_unique<CsvLog>(out_dir_ + "/act_stats.csv", act_stats_header(), resumed ? start_step : -1);
    if (start_step == 0) take(0);
  }

  // at the schedule's end, not at a --stop-after: a resumed run's file then equals an
  // uninterrupted one's
  void after_step(int64_t done) override {
    if (done % settings_.every == 0 || done == steps_) take(done);
  }

  void sync() override { file_->sync(); }

 private:
  void take(int64_t step) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<ActStat> rows = measure_();
    write_act_stats(file_->file(), step, rows);
    file_->flush();
    if (record_) {
      record_->last = std::move(rows);
      record_->step = step;
      record_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  }

  std::string out_dir_;
  Measure measure_;
  ActStatsSettings settings_;
  ActStatsRecord* record_;
  int64_t steps_ = 0;
  std::unique_ptr<CsvLog> file_;
};

}  // namespace

std::vector<GPTObserverFactory> act_stats_observer(const ActStatsSettings& settings, ActStatsRecord* record) {
  if (settings.every <= 0) return {};
  return {[settings, record](GPTTask& task) -> std::unique_ptr<TrainObserver> {
    const GPTRunConfig& c = task.config();
    // drawn once, with its own seed, from the validation split
    const Tensor ids = fixed_batches(task.data().val, c.model.context, settings.batch, 1, c.seed + 5)[0].first.to(
        c.device == "cuda" ? Device::CUDA : Device::CPU);
    return std::make_unique<ActStatsObserver>(
        c.out_dir, [&task, ids] { return activation_stats(task.gpt(), ids); }, settings, record);
  }};
}

std::vector<ViTObserverFactory> vit_act_stats_observer(const ActStatsSettings& settings, ActStatsRecord* record) {
  if (settings.every <= 0) return {};
  return {[settings, record](ViTTask& task) -> std::unique_ptr<TrainObserver> {
    // the first images of the validation split (a seeded draw from the training set)
    const FashionMnist& d = task.data();
    Tensor images, labels;
    fill_batch(d.val, {}, 0, std::min<int64_t>(settings.batch, d.val.size()), d.mean, d.std, images, labels);
    images = images.to(task.config().device == "cuda" ? Device::CUDA : Device::CPU);
    return std::make_unique<ActStatsObserver>(
        task.config().out_dir, [&task, images] { return activation_stats(task.vit(), images); }, settings, record);
  }};
}

}  // namespace nl
