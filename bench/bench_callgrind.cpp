// bench_callgrind: one training step of the `tiny` GPT (../shared/BENCHMARKS.md: 4 layers,
// width 128, 4 heads, 64 tokens, batch 16, bytes) after a warm-up step, on one thread,
// for `valgrind --tool=callgrind` to count its instructions (scripts/bench_callgrind.sh,
// `make bench-callgrind`). Instruction counts do not depend on what else the machine
// runs, so changes can be compared while the cores are busy. The step is nl::train_step,
// as train_gpt and bench_gpt run it (zeroing, forward, backward, clipping + AdamW), inside
// normlab_measured_step(), the one function the script tells callgrind to count; the
// warm-up step runs outside it. Run natively it only takes the two steps.
//   build/callgrind/bench_callgrind [--norm ln]
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "nn/gpt.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "train/loop/trainer.h"
#include "train/optim/optim.h"
#include "train/safety/run_safety.h"

using namespace nl;

namespace {

struct Step {
  GPT& model;
  FlatParameters& flat;
  AdamW& optim;
  NonFiniteGuard& guard;
  Tensor x, y;
  int64_t done = 0;

  void run() {
    RunEnd end;
    const StepOutcome s = train_step([&] { return model.loss(x, y); }, flat, optim, 1e-3f, 1.0f, guard, ++done, end);
    NL_CHECK(s.grad_norm, "bench_callgrind: ", end.fault);
  }
};

}  // namespace

// callgrind counts inside this function only (--toggle-collect); not inlined, C linkage
// for a plain name
extern "C" __attribute__((noinline)) void normlab_measured_step(Step* step) { step->run(); }

int main(int argc, char** argv) {
  configure_runtime(argv);
  FlagParser p("bench_callgrind", "One tiny GPT training step after a warm-up step, on one thread, for callgrind to "
                                  "count (make bench-callgrind).");
  std::string norm = "ln";
  p.text("--norm", norm, "the norm of every block (a registered kind: train_gpt --help lists them)");
  try {
    if (!p.parse(argc, argv)) return 0;
    set_num_threads(1);
    struct {
      int64_t vocab = 256, layers = 4, dim = 128, heads = 4, context = 64;
    } tiny;
    const int64_t batch = 16;
    Generator init(1337), data(1338);
    GPT model(bench::bench_gpt_config(tiny, norm), init);
    FlatParameters flat = flatten_parameters(model);
    AdamW optim(flat, AdamWConfig{0.9f, 0.99f, 1e-8f, 0.1f});
    NonFiniteGuard guard(NonFiniteAction::Stop, nullptr);
    Step step{model, flat, optim, guard, Tensor::empty({batch, tiny.context}, DType::I32),
              Tensor::empty({batch, tiny.context}, DType::I32)};
    for (int64_t i = 0; i < step.x.numel(); ++i) {
      step.x.idata()[i] = (int32_t)data.below((uint32_t)tiny.vocab);
      step.y.idata()[i] = (int32_t)data.below((uint32_t)tiny.vocab);
    }
    step.run();  // warm-up: fills the allocator's cache
    normlab_measured_step(&step);
    std::printf("bench_callgrind: tiny GPT, norm %s, 1 thread: 2 steps taken (the second is the measured one)\n",
                norm.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_callgrind: %s\n", e.what());
    return 2;
  }
  return 0;
}
