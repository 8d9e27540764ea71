// The threaded kernels, all at once: two AdamW steps of a GPT whose tensors are above
// the kernels' parallel grain, at 4 threads, for every norm, against the same at one
// thread. The results are the same bits: no sum's order depends on the thread count
// (tensor/cpu/gemm.h for the matrix products). This is also what `make test-tsan` runs
// under ThreadSanitizer: every OpenMP loop of the forward, backward and optimizer step,
// split across threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "nn/gpt.h"
#include "tensor/threads.h"
#include "train/optim/optim.h"
#include "tests/haswell_rerun.h"
#include "tests/nn/naive_layers.h"  // registered_norms

using namespace nl;

namespace {

// The losses of three forwards around two training steps, forward s and the step after
// it at threads[s] threads (what the training loop's thread policy does mid-run), and
// the parameters after them.
struct TwoSteps {
  std::vector<float> losses, params;
};
TwoSteps two_steps(const std::string& norm, const std::vector<int>& threads) {
  const int before = num_threads();
  GPTConfig c;
  c.layers = 2;
  c.dim = 128;
  c.heads = 4;
  c.context = 64;
  c.norm.name = norm;
  Generator gen(11);
  GPT model(c, gen);
  FlatParameters flat = flatten_parameters(model);
  AdamW optim(flat, AdamWConfig{});
  // (8, 64) ids: (512, 128) activations, (8, 4, 64, 64) attention maps, (512, 256) logits
  Tensor ids = Tensor::empty({8, 64}, DType::I32), targets = Tensor::empty({8, 64}, DType::I32);
  Generator data(5);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    ids.idata()[i] = (int32_t)data.below(256);
    targets.idata()[i] = (int32_t)data.below(256);
  }
  std::vector<float> losses;
  for (int step = 0; step < 3; ++step) {
    set_num_threads(threads[step]);
    flat.grads.fill_(0.0f);
    Var loss = model.loss(ids, targets);
    losses.push_back(loss.item());
    if (step == 2) break;
    loss.backward();
    clip_grad_norm(flat, 1.0f);
    optim.step(1e-3f);
  }
  set_num_threads(before);
  return {losses, std::vector<float>(flat.values.data(), flat.values.data() + flat.values.numel())};
}

}  // namespace

TEST_CASE("threads: two training steps at 4 threads match 1 thread for every norm", "[threads]") {
  for (const std::string& norm : nl::test::registered_norms()) {
    INFO("norm " << norm);
    const TwoSteps one = two_steps(norm, {1, 1, 1}), four = two_steps(norm, {4, 4, 4});
    REQUIRE(one.losses.size() == 3);
    for (size_t i = 0; i < one.losses.size(); ++i) {
      CHECK(std::isfinite(four.losses[i]));
      CHECK(four.losses[i] == one.losses[i]);  // every sum, the products' included, in an order fixed by the shapes
    }
    CHECK(one.losses[2] < one.losses[0]);  // the steps did something
    const bool same_params = four.params == one.params;  // a bool: Catch would print every value
    CHECK(same_params);
  }
}

TEST_CASE("threads: changing the thread count between steps changes no loss", "[threads]") {
  // the training loop's thread policy (--threads-adapt) changes the count mid-run: two
  // such runs beside other processes wrote checkpoints 3.1e-6 apart (issue 32)
  for (const std::string norm : {"ln", "bhyt"}) {
    INFO("norm " << norm);
    const TwoSteps one = two_steps(norm, {1, 1, 1}), changing = two_steps(norm, {2, 1, 3});
    CHECK(changing.losses == one.losses);
    const bool same_params = changing.params == one.params;
    CHECK(same_params);
  }
  std::string haswell;
  const bool passes = nl::test::passes_under_haswell("threads: changing the thread count*", haswell);
  INFO(haswell);
  CHECK(passes);
}
