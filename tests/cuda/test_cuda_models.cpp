// [cuda] Whole training steps on both devices: a 2-layer GPT and a 2-layer ViT with
// each of the five norms, built from one seed on the CPU and on the GPU, must give the
// same loss and gradients to 1e-4 (|a - b| <= 1e-4 + 1e-4 |cpu|), and after AdamW
// steps with clipping the same parameters. The GPU allocates nothing after its first step.
#include "tensor/allocator.h"
#include "tests/nn/naive_layers.h"  // registered_norms
#include "tests/cuda/cuda_test.h"
#include "tests/nn/model_fixtures.h"
#include "tests/nn/vit_fixtures.h"
#include "train/optim/optim.h"

using namespace nl;
using namespace nl::test;

namespace {

constexpr double kModelTol = 1e-4;

Tensor random_ids(Generator& gen, const Shape& shape, int64_t below) {
  std::vector<int32_t> v((size_t)numel_of(shape));
  for (auto& id : v) id = (int32_t)gen.below((uint32_t)below);
  return Tensor::from_ints(v, shape);
}

// Runs `steps` training steps of both copies on the same batches; loss_of(model, device)
// returns the loss Var. Checks loss, gradients and parameters after every step.
template <typename Model, typename LossFn>
void check_steps(Model& cpu_model, Model& gpu_model, LossFn loss_of, int steps) {
  gpu_model.to(Device::CUDA);
  FlatParameters cpu_flat = flatten_parameters(cpu_model), gpu_flat = flatten_parameters(gpu_model);
  REQUIRE(gpu_flat.values.device() == Device::CUDA);
  AdamW cpu_opt(cpu_flat, AdamWConfig{}), gpu_opt(gpu_flat, AdamWConfig{});
  REQUIRE(gpu_opt.m.device() == Device::CUDA);
  int64_t allocs_after_first = -1;
  for (int step = 0; step < steps; ++step) {
    INFO("step " << step);
    cpu_flat.grads.fill_(0.0f);
    gpu_flat.grads.fill_(0.0f);
    Var cpu_loss = loss_of(cpu_model, step, Device::CPU), gpu_loss = loss_of(gpu_model, step, Device::CUDA);
    REQUIRE(gpu_loss.value().device() == Device::CUDA);
    CHECK_CLOSE(gpu_loss.value(), cpu_loss.value(), kModelTol, kModelTol);
    cpu_loss.backward();
    gpu_loss.backward();
    CHECK_CLOSE(gpu_flat.grads, cpu_flat.grads, kModelTol, kModelTol);
    const float cpu_norm = clip_grad_norm(cpu_flat, 0.05f), gpu_norm = clip_grad_norm(gpu_flat, 0.05f);
    CHECK(std::fabs(cpu_norm - gpu_norm) <= kModelTol * (1.0 + std::fabs(cpu_norm)));
    // a small lr: Adam's update is ~lr wherever a gradient is only rounding noise around
    // 0, and such noise differs between devices; the update itself is tested below
    cpu_opt.step(2e-5f);
    gpu_opt.step(2e-5f);
    CHECK_CLOSE(gpu_flat.values, cpu_flat.values, kModelTol, kModelTol);
    if (step == 0) allocs_after_first = allocator_stats(Device::CUDA).system_allocs;
  }
  CHECK(allocator_stats(Device::CUDA).system_allocs == allocs_after_first);  // no cudaMalloc after step 1
}

// One small GPT built twice from one seed, the second moved to the GPU, both flattened.
struct OptimizerPair {
  static GPTConfig config() { return gpt_config(31, 1, 16, 2, 8, "ln"); }
  Generator g1{3}, g2{3};
  GPT cpu_model{config(), g1}, gpu_model{config(), g2};
  FlatParameters cpu_flat, gpu_flat;
  OptimizerPair() {
    gpu_model.to(Device::CUDA);
    cpu_flat = flatten_parameters(cpu_model);
    gpu_flat = flatten_parameters(gpu_model);
  }
};

}  // namespace

TEST_CASE("cuda: a 2-layer GPT step agrees with the CPU for every norm", "[cuda]") {
  REQUIRE_GPU();
  for (const std::string& norm : nl::test::registered_norms()) {
    SECTION(norm) {
      GPTConfig c = gpt_config(67, 2, 24, 3, 13, norm);
      c.dropout = norm == "ln" ? 0.1f : 0.0f;  // dropout masks are drawn on the CPU for both
      Generator g1(5), g2(5);
      GPT cpu_model(c, g1), gpu_model(c, g2);
      cpu_model.dropout_gen.manual_seed(9);
      gpu_model.dropout_gen.manual_seed(9);
      Generator data(77);
      std::vector<std::pair<Tensor, Tensor>> batches;
      for (int i = 0; i < 3; ++i) batches.emplace_back(random_ids(data, {3, 13}, 67), random_ids(data, {3, 13}, 67));
      check_steps(cpu_model, gpu_model,
                  [&](GPT& m, int step, Device d) {
                    return m.loss(batches[step].first.to(d), batches[step].second.to(d));
                  },
                  3);
    }
  }
}

TEST_CASE("cuda: a 2-layer ViT step agrees with the CPU for every norm", "[cuda]") {
  REQUIRE_GPU();
  for (const std::string& norm : nl::test::registered_norms()) {
    SECTION(norm) {
      const ViTConfig c = vit_config(12, 2, 4, 5, 2, 16, 2, norm);
      Generator g1(6), g2(6);
      ViT cpu_model(c, g1), gpu_model(c, g2);
      Generator data(78);
      std::vector<std::pair<Tensor, Tensor>> batches;
      for (int i = 0; i < 3; ++i) batches.emplace_back(data.normal({4, 2, 12, 12}), random_ids(data, {4}, 5));
      check_steps(cpu_model, gpu_model,
                  [&](ViT& m, int step, Device d) {
                    return m.loss(Var(batches[step].first.to(d)), batches[step].second.to(d));
                  },
                  3);
    }
  }
}

TEST_CASE("cuda: AdamW (one kernel over the flat buffer) agrees with the CPU", "[cuda]") {
  REQUIRE_GPU();
  OptimizerPair pair;
  FlatParameters &cf = pair.cpu_flat, &gf = pair.gpu_flat;
  Generator data(4);
  AdamW co(cf, AdamWConfig{}), go(gf, AdamWConfig{});
  for (int step = 0; step < 3; ++step) {
    Tensor g = data.normal(cf.grads.shape());  // gradients well away from 0
    cf.grads.copy_from(g);
    gf.grads.copy_from(g);
    co.step(1e-2f);
    go.step(1e-2f);
    CHECK_CLOSE(gf.values, cf.values, 1e-5, 1e-6);
    CHECK_CLOSE(go.m, co.m, 1e-5, 1e-7);
    CHECK_CLOSE(go.v, co.v, 1e-5, 1e-7);
  }
}

TEST_CASE("cuda: SGD with momentum agrees with the CPU", "[cuda]") {
  REQUIRE_GPU();
  OptimizerPair pair;
  FlatParameters &cf = pair.cpu_flat, &gf = pair.gpu_flat;
  Generator data(4);
  SGD cs(cf, 0.9f, 0.01f), gs(gf, 0.9f, 0.01f);
  for (int step = 0; step < 2; ++step) {
    Tensor ids = random_ids(data, {2, 8}, 31), targets = random_ids(data, {2, 8}, 31);
    cf.grads.fill_(0.0f);
    gf.grads.fill_(0.0f);
    pair.cpu_model.loss(ids, targets).backward();
    pair.gpu_model.loss(gpu(ids), gpu(targets)).backward();
    cs.step(0.1f);
    gs.step(0.1f);
    CHECK_CLOSE(gf.values, cf.values, kModelTol, kModelTol);
    CHECK_CLOSE(gs.buf, cs.buf, kModelTol, kModelTol);
  }
}
