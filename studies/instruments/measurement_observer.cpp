#include "studies/instruments/measurement_observer.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "studies/instruments/measurement.h"
#include "train/io/files.h"
#include "train/safety/limits.h"

namespace nl {
namespace {

constexpr uint64_t kBatchSeed = 424242;  // the same held-out batches for every run

class MeasurementObserver : public TrainObserver {
 public:
  MeasurementObserver(GPTTask& task, const MeasureAtSettings& s) : task_(task), settings_(s) {
    batches_ = measurement_batches(task.data(), task.config().model.context, s.batches);
    path_ = task.config().out_dir + "/measurements.json";
  }

  void start(int64_t start_step, int64_t steps, bool resumed) override {
    records_ = nlohmann::ordered_json::object();
    if (resumed && std::filesystem::exists(path_)) {
      const auto old = nlohmann::ordered_json::parse(read_text_file(path_, "measurements", 256 << 20), nullptr, false);
      if (old.is_object())
        for (const auto& [step, record] : old.items())
          if (std::atoll(step.c_str()) <= start_step) records_[step] = record;
    }
    write();
  }

  void after_step(int64_t done) override {
    if (std::find(settings_.steps.begin(), settings_.steps.end(), done) == settings_.steps.end()) return;
    records_[std::to_string(done)] = measure_gpt(task_.gpt(), batches_);
    write();
  }

 private:
  void write() { write_text_file(path_, records_.dump(1) + "\n"); }

  GPTTask& task_;
  MeasureAtSettings settings_;
  std::vector<Tensor> batches_;
  std::string path_;
  nlohmann::ordered_json records_;
};

}  // namespace

std::vector<Tensor> measurement_batches(const TextData& data, int64_t T, int64_t count) {
  std::vector<Tensor> out;
  for (const auto& [ids, targets] : fixed_batches(data.val, T, 32, count, kBatchSeed)) out.push_back(ids);
  return out;
}

std::vector<GPTObserverFactory> measurement_observer(const MeasureAtSettings& settings) {
  if (settings.steps.empty()) return {};
  return {[settings](GPTTask& task) -> std::unique_ptr<TrainObserver> {
    return std::make_unique<MeasurementObserver>(task, settings);
  }};
}

}  // namespace nl
