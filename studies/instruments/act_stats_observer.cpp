#include "studies/instruments/act_stats_observer.h"

#include <chrono>
#include <memory>

#include "train/io/run_log.h"
#include "train/safety/limits.h"

namespace nl {
namespace {

class ActStatsObserver : public TrainObserver {
 public:
  ActStatsObserver(GPTTask& task, const ActStatsSettings& s, ActStatsRecord* record)
      : task_(task), settings_(s), record_(record) {
    const GPTRunConfig& c = task.config();
    // drawn once, with its own seed, from the validation split
    probe_ids_ = fixed_batches(task.data().val, c.model.context, s.batch, 1, c.seed + 5)[0].first.to(
        c.device == "cuda" ? Device::CUDA : Device::CPU);
  }

  void start(int64_t start_step, int64_t steps, bool resumed) override {
    steps_ = steps;
    file_ = std::make_unique<CsvLog>(task_.config().out_dir + "/act_stats.csv", act_stats_header(),
                                     resumed ? start_step : -1);
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
    std::vector<ActStat> rows = activation_stats(task_.gpt(), probe_ids_);
    write_act_stats(file_->file(), step, rows);
    file_->flush();
    if (record_) {
      record_->last = std::move(rows);
      record_->step = step;
      record_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  }

  GPTTask& task_;
  ActStatsSettings settings_;
  ActStatsRecord* record_;
  Tensor probe_ids_;
  int64_t steps_ = 0;
  std::unique_ptr<CsvLog> file_;
};

}  // namespace

void add_act_stats_flags(FlagParser& p, ActStatsSettings& s) {
  p.integer("--act-stats-every", s.every, 0, kMaxSteps,
            "per-layer activation statistics every N steps into DIR/act_stats.csv (0: off)", FlagRole::Setting);
  p.integer("--act-stats-batch", s.batch, 1, kMaxBatch,
            "sequences of the fixed held-out batch the activation statistics are taken on", FlagRole::Setting);
}

std::vector<GPTObserverFactory> act_stats_observer(const ActStatsSettings& settings, ActStatsRecord* record) {
  if (settings.every <= 0) return {};
  return {[settings, record](GPTTask& task) -> std::unique_ptr<TrainObserver> {
    return std::make_unique<ActStatsObserver>(task, settings, record);
  }};
}

}  // namespace nl
