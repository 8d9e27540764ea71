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
#include "tests/nn/naive_layers.h"  // registered_norms

using namespace nl;

namespace {

// The losses of three forwards around two training steps, at `threads` threads.
std::vector<float> two_steps(const std::string& norm, int threads) {
  const int before = num_threads();
  set_num_threads(threads);
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
    flat.grads.fill_(0.0f);
    Var loss = model.loss(ids, targets);
    losses.push_back(loss.item());
    if (step == 2) break;
    loss.backward();
    clip_grad_norm(flat, 1.0f);
    optim.step(1e-3f);
  }
  set_num_threads(before);
  return losses;
}

}  // namespace

TEST_CASE("threads: two training steps at 4 threads match 1 thread for every norm", "[threads]") {
  for (const std::string& norm : nl::test::registered_norms()) {
    INFO("norm " << norm);
    const std::vector<float> one = two_steps(norm, 1), four = two_steps(norm, 4);
    REQUIRE(one.size() == 3);
    for (size_t i = 0; i < one.size(); ++i) {
      CHECK(std::isfinite(four[i]));
      CHECK(four[i] == one[i]);  // every sum, the products' included, in an order fixed by the shapes
    }
    CHECK(one[2] < one[0]);  // the steps did something
  }
}
