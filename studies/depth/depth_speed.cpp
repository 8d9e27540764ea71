#include "studies/depth/depth_speed.h"

#include <memory>

#include "autograd/ops.h"
#include "nn/gpt.h"
#include "studies/report/study.h"
#include "train/loop/trainer.h"

namespace nl {
namespace {

struct Model {
  std::unique_ptr<GPT> gpt;
  FlatParameters flat;
  std::unique_ptr<AdamW> optim;
  std::vector<double> step_s, forward_s;
};

std::vector<SpeedRow> measure(const std::string& name, GPTConfig config, int64_t batch, int reps,
                              const std::vector<std::string>& norms, uint64_t seed) {
  std::vector<Model> models(norms.size());
  Generator data_gen(seed + 7);
  const int64_t T = config.context;
  std::vector<int32_t> ids(batch * T), targets(batch * T);
  for (auto& v : ids) v = (int32_t)data_gen.below((uint32_t)config.vocab);
  for (auto& v : targets) v = (int32_t)data_gen.below((uint32_t)config.vocab);
  const Tensor x = Tensor::from_ints(ids, {batch, T}), y = Tensor::from_ints(targets, {batch, T});
  for (size_t i = 0; i < norms.size(); ++i) {
    GPTConfig c = config;
    c.norm.name = norms[i];
    Generator gen(seed);
    models[i].gpt = std::make_unique<GPT>(c, gen);
    models[i].flat = flatten_parameters(*models[i].gpt);
    models[i].optim = std::make_unique<AdamW>(models[i].flat, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f});
  }
  NonFiniteGuard guard(NonFiniteAction::Stop, nullptr);
  int64_t step = 0;
  for (int r = -2; r < reps; ++r)  // two warm-up rounds fill the allocator's caches
    for (Model& m : models) {
      auto t0 = StudyClock::now();
      RunEnd end;
      const StepOutcome s =
          train_step([&] { return m.gpt->loss(x, y); }, m.flat, *m.optim, 1e-4f, 1.0f, guard, ++step, end);
      NL_CHECK(s.grad_norm, "depth study speed section: ", end.fault);
      const double step_s = seconds_since(t0);
      m.gpt->eval();
      t0 = StudyClock::now();
      {
        NoGradGuard ng;
        m.gpt->forward(x);
      }
      const double fwd_s = seconds_since(t0);
      m.gpt->train();
      if (r >= 0) m.step_s.push_back(step_s), m.forward_s.push_back(fwd_s);
    }
  std::vector<SpeedRow> out;
  for (size_t i = 0; i < norms.size(); ++i)
    out.push_back({name, norms[i], 1e3 * median(models[i].step_s), 1e3 * median(models[i].forward_s)});
  return out;
}

}  // namespace

std::vector<SpeedRow> measure_norm_speed(const std::vector<std::string>& norms, int reps, uint64_t seed) {
  GPTConfig tiny;  // ../shared/BENCHMARKS.md
  tiny.layers = 4, tiny.dim = 128, tiny.heads = 4, tiny.context = 64;
  GPTConfig small;
  small.layers = 6, small.dim = 384, small.heads = 6, small.context = 256;
  std::vector<SpeedRow> rows = measure("tiny", tiny, 16, 4 * reps, norms, seed);
  for (const SpeedRow& r : measure("small", small, 8, reps, norms, seed)) rows.push_back(r);
  return rows;
}

}  // namespace nl
